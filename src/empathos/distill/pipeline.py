"""The Real-to-Sim pipeline: conversations in, a scenario directory out (REAL2SIM_SPEC).

Per conversation: filter and scrub (no model sees unscrubbed text), **extract** features
(schema :class:`~empathos.distill.schema.Features`; skipped with the model's reason when it
finds nothing usable), **persona** and **crisis** (stage 2, the empathy threshold assigned by
rotation so thresholds vary across the set), assemble and **validate** (:mod:`.assemble`: the
scenario schema, :func:`~empathos.distill.checks.check_scenario` and
:func:`~empathos.distill.checks.degeneracy`). Across the set: near-duplicates are dropped.
Per kept scenario: the judge's **IEDR** gives the stored levels, P_0, the dominant axis and the
difficulty band; a degenerate P_0 fails the item. Then each scenario is written to
``OUT/scenarios/<id>.yaml``.

State and resume (:mod:`.state`): ``OUT/state/<source id>/`` holds each stage's record
(``extract.json``, ``persona.json``, ``crisis.json``, ``iedr.json``: the prompt id and version,
the model id, the raw output, the parsed value, the call record, and a key over the stage's
inputs) and ``status.json``. A rerun reuses every stage whose key still matches, so finished
work is never repeated; a failed item is retried from its first unfinished stage.
``OUT/distill.json`` is the manifest of the batch. The source text is stored only with
``keep_source``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel

from empathos.distill.assemble import (
    assemble_scenario,
    checked_scenario,
    label_with_iedr,
    rate_iedr,
    scenario_yaml,
)
from empathos.distill.checks import near_duplicates, scenario_signature
from empathos.distill.formats import Conversation
from empathos.distill.prompts import render_distill, threshold_meaning
from empathos.distill.schema import CrisisDraft, Features, PersonaDraft
from empathos.distill.scrub import filter_conversation, scrub_conversation
from empathos.distill.state import (
    DistillOptions,
    DistillSummary,
    ItemOutcome,
    StageCache,
    atomic_write,
    dump_json,
    stage_key,
)
from empathos.errors import ModelCallError
from empathos.llm import ChatModel, Message, StructuredResult
from empathos.prompts import RenderedPrompt
from empathos.scenarios import Scenario, Threshold

__all__ = [
    "PIPELINE_VERSION",
    "THRESHOLD_ROTATION",
    "DistillOptions",
    "DistillSummary",
    "ItemOutcome",
    "StageCache",
    "assemble_scenario",
    "atomic_write",
    "label_with_iedr",
    "rate_iedr",
    "run_distill",
    "scenario_yaml",
    "stage_key",
]

PIPELINE_VERSION = "1"
THRESHOLD_ROTATION: tuple[Threshold, ...] = (Threshold.MEDIUM, Threshold.HIGH, Threshold.LOW)
T = TypeVar("T", bound=BaseModel)


def _render_conversation(conv: Conversation) -> str:
    names = {"en": ("seeker", "supporter"), "zh": ("求助者", "支持者")}[conv.language]
    sep = ": " if conv.language == "en" else "："
    return "\n".join(
        f"{names[0] if t.speaker == 'seeker' else names[1]}{sep}{t.text}" for t in conv.turns
    )


def _yaml_text(data: object) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100).strip()


def _features_text(f: Features) -> str:
    return _yaml_text(f.model_dump(mode="json", exclude={"usable", "skip_reason"}))


@dataclass(frozen=True)
class _Drafts:
    """Stage 1 and 2's outputs for one conversation."""

    features: Features
    threshold: Threshold
    persona: PersonaDraft
    crisis: CrisisDraft
    prompts: tuple[RenderedPrompt, ...]


class _Run:
    def __init__(
        self,
        convs: Sequence[Conversation],
        distiller: ChatModel,
        judge: ChatModel,
        opts: DistillOptions,
        models: dict[str, str],
    ) -> None:
        self.convs = convs
        self.distiller = distiller
        self.judge = judge
        self.opts = opts
        self.models = models
        self.sem = asyncio.Semaphore(max(1, opts.concurrency))
        self.state_dir = opts.out / "state"

    async def _structured(
        self,
        cache: StageCache,
        stage: str,
        prompt: RenderedPrompt,
        schema: type[T],
        key_parts: Sequence[object],
    ) -> T:
        key = stage_key(stage, self.models["distiller"], prompt.id, prompt.version, prompt.text,
                   *key_parts)  # fmt: skip
        hit = cache.get(stage, key)
        if hit is not None:
            return schema.model_validate(hit["value"])
        msgs = [Message(role="user", content=prompt.text)]
        async with self.sem:
            res: StructuredResult[T] = await self.distiller.structured(msgs, schema)
        cache.put(
            stage,
            {
                "key": key,
                "stage": stage,
                "prompt": {"id": prompt.id, "version": prompt.version},
                "model": self.models["distiller"],
                "raw": res.raw,
                "value": res.value.model_dump(mode="json"),
                "call": res.record.model_dump(mode="json"),
            },
        )
        return res.value

    def _provenance(self, conv: Conversation, scrub: dict[str, Any]) -> dict[str, Any]:
        return {
            "pipeline_version": PIPELINE_VERSION,
            "source_id": conv.id,
            "source_format": conv.format,
            "source_sha256": stage_key(conv.model_dump(mode="json")),
            "models": dict(self.models),
            "scrub": scrub,
        }

    async def _drafts(self, index: int, clean: Conversation, cache: StageCache) -> _Drafts | str:
        """Extract, persona, crisis; or why the conversation is skipped (nothing usable)."""
        lang = clean.language
        labels = _yaml_text(clean.labels) if clean.labels else "-"
        p1 = render_distill(
            "distill_extract", lang, conversation=_render_conversation(clean), labels=labels
        )
        features = await self._structured(cache, "extract", p1, Features, [])
        if features.usable != "yes":
            return f"nothing usable: {features.skip_reason or 'no reason given'}"
        threshold = THRESHOLD_ROTATION[index % len(THRESHOLD_ROTATION)]
        ftext = _features_text(features)
        p2 = render_distill(
            "distill_persona",
            lang,
            features=ftext,
            threshold=threshold.value,
            threshold_meaning=threshold_meaning(threshold.value, lang),
        )
        persona = await self._structured(cache, "persona", p2, PersonaDraft, [])
        persona_text = _yaml_text(persona.model_dump(mode="json"))
        p3 = render_distill("distill_crisis", lang, features=ftext, persona=persona_text)
        crisis = await self._structured(cache, "crisis", p3, CrisisDraft, [])
        return _Drafts(features, threshold, persona, crisis, (p1, p2, p3))

    async def stage_one_two(
        self, index: int, conv: Conversation
    ) -> tuple[ItemOutcome, Scenario | None, StageCache]:
        """Filter, scrub, draft and check one conversation: its outcome, and its scenario
        when it is valid (not yet rated)."""
        cache = StageCache(self.state_dir / conv.id)
        out = ItemOutcome(source_id=conv.id, status="failed")
        try:
            if self.opts.keep_source:
                atomic_write(cache.dir / "source.json", dump_json(conv.model_dump(mode="json")))
            filtered, skip = filter_conversation(conv)
            if skip:
                out.status, out.reason = "skipped", skip
                return out, None, cache
            scrubbed = scrub_conversation(filtered, use_presidio=self.opts.use_presidio)
            drafts = await self._drafts(index, scrubbed.conversation, cache)
            if isinstance(drafts, str):
                out.status, out.reason = "skipped", drafts
                return out, None, cache
            meta = self._provenance(conv, {"method": scrubbed.method, "counts": scrubbed.counts})
            meta["prompts"] = {p.id: p.version for p in drafts.prompts}
            meta["threshold_assigned"] = drafts.threshold.value
            lang, sid = scrubbed.conversation.language, f"{self.opts.id_prefix}{conv.id}"
            domain = drafts.features.domain
            scenario = checked_scenario(
                out,
                lambda: assemble_scenario(
                    sid,
                    lang,
                    drafts.threshold,
                    domain,
                    drafts.persona,
                    drafts.crisis,
                    {"distill": meta},
                ),
            )
            return out, scenario, cache
        except ModelCallError as exc:
            out.reason = exc.line()
            return out, None, cache
        except Exception as exc:  # one item's bug or bad data must not stop the batch
            out.reason = f"{type(exc).__name__}: {exc}"
            return out, None, cache
        finally:
            cache.status(out)

    async def rate(self, o: ItemOutcome, s: Scenario, c: StageCache) -> Scenario | None:
        """The scenario with the judge's IEDR, or None (``o`` says why)."""
        try:
            async with self.sem:
                result = await rate_iedr(self.judge, c, s, self.models["judge"], o.warnings)
        except Exception as exc:
            result = f"iedr: {type(exc).__name__}: {exc}"
        if isinstance(result, str):
            o.status, o.reason = "failed", result
            o.scenario_id = None
        else:
            o.status = "written"
        c.status(o)
        return None if isinstance(result, str) else result


def _drop_duplicates(
    valid: list[tuple[ItemOutcome, Scenario, StageCache]], similarity: float
) -> list[tuple[ItemOutcome, Scenario, StageCache]]:
    """The valid items that are no near-duplicate of an earlier one (those are marked)."""
    dups = near_duplicates([(s.id, scenario_signature(s)) for _, s, _ in valid], similarity)
    todo = []
    for o, s, c in valid:
        if s.id in dups:
            kept, score = dups[s.id]
            o.status, o.reason = "duplicate", f"near-duplicate of {kept} (similarity {score:.0f})"
            o.scenario_id = None
            c.status(o)
        else:
            todo.append((o, s, c))
    return todo


def _write_outputs(
    options: DistillOptions,
    scenarios: Sequence[Scenario],
    outcomes: Sequence[ItemOutcome],
    models: dict[str, str],
) -> None:
    """``OUT/scenarios/`` (earlier scenarios of this prefix no longer written are removed) and
    the batch manifest ``OUT/distill.json``."""
    scen_dir = options.out / "scenarios"
    scen_dir.mkdir(parents=True, exist_ok=True)
    written = {s.id for s in scenarios}
    for old in scen_dir.glob(f"{options.id_prefix}*.yaml"):
        if old.stem not in written:
            old.unlink()
    for scenario in scenarios:
        atomic_write(scen_dir / f"{scenario.id}.yaml", scenario_yaml(scenario))
    manifest = {
        "pipeline_version": PIPELINE_VERSION,
        "models": models,
        "counts": {
            k: sum(1 for o in outcomes if o.status == k)
            for k in ("written", "skipped", "failed", "duplicate")
        },
        "items": [o.__dict__ for o in outcomes],
    }
    atomic_write(options.out / "distill.json", dump_json(manifest))


async def run_distill(
    conversations: Sequence[Conversation],
    distiller: ChatModel,
    judge: ChatModel,
    options: DistillOptions,
    *,
    models: dict[str, str] | None = None,
) -> DistillSummary:
    """Distil ``conversations`` into ``options.out/scenarios``; resumable (see module doc)."""
    models = models or {"distiller": "unknown", "judge": "unknown"}
    run = _Run(conversations, distiller, judge, options, models)
    results = await asyncio.gather(*(run.stage_one_two(i, c) for i, c in enumerate(conversations)))
    valid = [(o, s, c) for o, s, c in results if s is not None]
    todo = _drop_duplicates(valid, options.duplicate_similarity)
    finished = await asyncio.gather(*(run.rate(o, s, c) for o, s, c in todo))
    outcomes = [o for o, _, _ in results]
    _write_outputs(options, [s for s in finished if s is not None], outcomes, models)
    return DistillSummary(items=outcomes, out=options.out)
