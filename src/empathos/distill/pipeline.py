"""The Real-to-Sim pipeline: conversations in, a scenario directory out (REAL2SIM_SPEC).

Per conversation: filter and scrub (no model sees unscrubbed text), **extract** features
(schema :class:`~empathos.distill.schema.Features`; skipped with the model's reason when it
finds nothing usable), **persona** and **crisis** (stage 2, the empathy threshold assigned by
rotation so thresholds vary across the set), assemble and **validate** (the scenario schema and
:func:`~empathos.distill.checks.check_scenario`). Across the set: near-duplicates are dropped.
Per kept scenario: the judge's **IEDR** gives the stored levels, P_0, the dominant axis and the
difficulty band. Then each scenario is written to ``OUT/scenarios/<id>.yaml``.

State and resume: ``OUT/state/<source id>/`` holds each stage's record (``extract.json``,
``persona.json``, ``crisis.json``, ``iedr.json``: the prompt id and version, the model id, the
raw output, the parsed value, the call record, and a key over the stage's inputs) and
``status.json``. A rerun reuses every stage whose key still matches, so finished work is never
repeated; a failed item is retried from its first unfinished stage. ``OUT/distill.json`` is
the manifest of the batch. The source text is stored only with ``keep_source``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from empathos.distill.checks import (
    DUPLICATE_SIMILARITY,
    check_scenario,
    near_duplicates,
    scenario_signature,
)
from empathos.distill.formats import Conversation
from empathos.distill.prompts import render_distill, threshold_meaning
from empathos.distill.schema import CrisisDraft, Features, PersonaDraft
from empathos.distill.scrub import filter_conversation, scrub_conversation
from empathos.epm import EPMConfig
from empathos.errors import ModelCallError
from empathos.llm import ChatModel, Message, StructuredResult
from empathos.prompts import RenderedPrompt
from empathos.sandbox import DialogueState, Failure, JudgeAgent
from empathos.sandbox.state import judge_view
from empathos.scenarios import Axis, Domain, Scenario, Threshold
from empathos.scenarios.model import Labels, PersonaCard, Priorities, Story

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


@dataclass(frozen=True)
class DistillOptions:
    """How a batch runs."""

    out: Path
    keep_source: bool = False
    concurrency: int = 4
    id_prefix: str = "distilled-"
    duplicate_similarity: float = DUPLICATE_SIMILARITY
    use_presidio: bool | None = None


@dataclass
class ItemOutcome:
    """What became of one conversation."""

    source_id: str
    status: str  # written | skipped | failed | duplicate
    reason: str = ""
    scenario_id: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class DistillSummary:
    """The outcome of a batch."""

    items: list[ItemOutcome]
    out: Path

    def count(self, status: str) -> int:
        """How many items ended with ``status``."""
        return sum(1 for i in self.items if i.status == status)


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix + ".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _dump(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def stage_key(*parts: object) -> str:
    """The cache key of a stage: a hash of everything its output depends on."""
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class StageCache:
    """One item's state directory: a JSON record per finished stage, reused when its key
    (a hash of the stage's inputs, model and prompt version) still matches."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def get(self, stage: str, key: str) -> dict[str, Any] | None:
        """The stage's stored record, if present and made from the same inputs."""
        path = self.dir / f"{stage}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        return data if isinstance(data, dict) and data.get("key") == key else None

    def put(self, stage: str, record: dict[str, Any]) -> None:
        """Store a finished stage's record."""
        atomic_write(self.dir / f"{stage}.json", _dump(record))

    def status(self, outcome: ItemOutcome) -> None:
        """Record the item's current status."""
        atomic_write(self.dir / "status.json", _dump(outcome.__dict__))


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


def assemble_scenario(
    scenario_id: str,
    language: str,
    threshold: Threshold,
    domain: Domain | None,
    persona: PersonaDraft,
    crisis: CrisisDraft,
    metadata: dict[str, Any],
) -> Scenario:
    """The scenario in our format from the stage outputs (raises ValidationError if invalid)."""
    card = PersonaCard(
        identity=persona.identity,
        traits=persona.traits,
        threshold=threshold,
        needs=persona.needs,
        priorities=Priorities.model_validate(persona.priorities.model_dump(mode="json")),
        experience=persona.experience,
        topic=crisis.topic,
        trigger=crisis.trigger,
    )
    story = Story(stages=crisis.stages, outcome=crisis.outcome, interlude=crisis.interlude)
    return Scenario.model_validate(
        {
            "id": scenario_id,
            "persona": card.model_dump(mode="json"),
            "story": story.model_dump(mode="json"),
            "labels": {"domain": domain.value if domain else None, "language": language},
            "metadata": metadata,
        }
    )


def label_with_iedr(scenario: Scenario, levels: dict[str, int]) -> Scenario:
    """The scenario with the judge's IEDR stored and its dominant axis and band labelled.

    Without a negative P_0 component the dominant axis is the highest-priority one."""
    with_iedr = scenario.model_copy(update={"iedr": dict(levels)})
    with_iedr = Scenario.model_validate(with_iedr.model_dump(mode="json"))
    resolved = with_iedr.resolved_labels()
    axis = resolved.dominant_axis
    if axis is None:
        pr = scenario.persona.priorities
        rank = {"high": 0, "medium": 1, "low": 2}
        axis = min(Axis, key=lambda a: rank[pr.level(a).value])
    labels = Labels(
        domain=scenario.labels.domain,
        language=scenario.labels.language,
        dominant_axis=axis,
        difficulty=resolved.difficulty,
    )
    return with_iedr.model_copy(update={"labels": labels})


def scenario_yaml(scenario: Scenario) -> str:
    """A scenario as the YAML of our format (provenance lives in ``metadata.distill``)."""
    data = scenario.model_dump(mode="json", exclude={"source"}, exclude_none=True)
    return "# Distilled by empathos distill (Real-to-Sim).\n" + yaml.safe_dump(
        data, allow_unicode=True, sort_keys=False, width=100
    )


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

    async def stage_one_two(
        self, index: int, conv: Conversation
    ) -> tuple[ItemOutcome, Scenario | None, StageCache]:
        cache = StageCache(self.state_dir / conv.id)
        out = ItemOutcome(source_id=conv.id, status="failed")
        try:
            if self.opts.keep_source:
                atomic_write(cache.dir / "source.json", _dump(conv.model_dump(mode="json")))
            filtered, skip = filter_conversation(conv)
            if skip:
                out.status, out.reason = "skipped", skip
                return out, None, cache
            scrubbed = scrub_conversation(filtered, use_presidio=self.opts.use_presidio)
            scrub = {"method": scrubbed.method, "counts": scrubbed.counts}
            clean = scrubbed.conversation
            lang = clean.language
            labels = _yaml_text(clean.labels) if clean.labels else "-"
            p1 = render_distill(
                "distill_extract", lang, conversation=_render_conversation(clean), labels=labels
            )
            features = await self._structured(cache, "extract", p1, Features, [])
            if features.usable != "yes":
                out.status = "skipped"
                out.reason = f"nothing usable: {features.skip_reason or 'no reason given'}"
                return out, None, cache
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
            p3 = render_distill(
                "distill_crisis",
                lang,
                features=ftext,
                persona=_yaml_text(persona.model_dump(mode="json")),
            )
            crisis = await self._structured(cache, "crisis", p3, CrisisDraft, [])
            meta = self._provenance(conv, scrub)
            meta["prompts"] = {p.id: p.version for p in (p1, p2, p3)}
            meta["threshold_assigned"] = threshold.value
            sid = f"{self.opts.id_prefix}{conv.id}"
            try:
                scenario = assemble_scenario(
                    sid, lang, threshold, features.domain, persona, crisis, {"distill": meta}
                )
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(x) for x in first["loc"])
                out.reason = f"invalid scenario: {loc}: {first['msg']}"
                return out, None, cache
            checks = check_scenario(scenario)
            out.warnings = checks.warnings
            if checks.errors:
                out.reason = "failed checks: " + "; ".join(checks.errors)
                return out, None, cache
            out.status, out.scenario_id = "valid", sid
            return out, scenario, cache
        except ModelCallError as exc:
            out.reason = exc.line()
            return out, None, cache
        except Exception as exc:  # one item's bug or bad data must not stop the batch
            out.reason = f"{type(exc).__name__}: {exc}"
            return out, None, cache
        finally:
            cache.status(out)


async def rate_iedr(
    judge: ChatModel,
    cache: StageCache,
    scenario: Scenario,
    judge_model: str,
    warnings: Sequence[str] = (),
) -> Scenario | str:
    """The scenario with the judge's IEDR, P_0 labels and provenance, or the failure reason.

    The rating is cached in ``cache`` (stage ``iedr``) under the scenario's content hash."""
    lang = scenario.labels.language
    key = stage_key("iedr", judge_model, scenario.scenario_hash())
    record = cache.get("iedr", key)
    if record is None:
        state = DialogueState(scenario=scenario, language=lang, epm_config=EPMConfig())
        ratings, state = await JudgeAgent(judge).act(judge_view(state, "iedr"), state)
        call = state.calls[-1].model_dump(mode="json") if state.calls else {}
        if isinstance(ratings, Failure):
            return f"iedr: {ratings.reason}"
        record = {
            "key": key,
            "stage": "iedr",
            "prompt": {"id": call.get("template_id"), "version": call.get("template_version")},
            "model": judge_model,
            "raw": call.get("metadata", {}).get("output"),
            "value": {k: r.level for k, r in ratings.items() if r.level is not None},
            "call": call,
        }
        cache.put("iedr", record)
    labelled = label_with_iedr(scenario, {k: int(v) for k, v in record["value"].items()})
    meta = dict(labelled.metadata)
    dist = dict(meta.get("distill", {}))
    prompt = record["prompt"]
    dist["prompts"] = {**dist.get("prompts", {}), str(prompt["id"]): str(prompt["version"])}
    dist["warnings"] = list(warnings)
    meta["distill"] = dist
    return labelled.model_copy(update={"metadata": meta})


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
    dups = near_duplicates(
        [(s.id, scenario_signature(s)) for _, s, _ in valid], options.duplicate_similarity
    )
    todo = []
    for o, s, c in valid:
        if s.id in dups:
            kept, score = dups[s.id]
            o.status, o.reason = "duplicate", f"near-duplicate of {kept} (similarity {score:.0f})"
            o.scenario_id = None
            c.status(o)
        else:
            todo.append((o, s, c))

    async def finish(o: ItemOutcome, s: Scenario, c: StageCache) -> Scenario | None:
        try:
            async with run.sem:
                result = await rate_iedr(judge, c, s, models["judge"], o.warnings)
        except Exception as exc:
            result = f"iedr: {type(exc).__name__}: {exc}"
        c.status(o)
        if isinstance(result, str):
            o.status, o.reason = "failed", result
            c.status(o)
            return None
        o.status = "written"
        c.status(o)
        return result

    finished = await asyncio.gather(*(finish(o, s, c) for o, s, c in todo))
    labelled = [s for s in finished if s is not None]
    scen_dir = options.out / "scenarios"
    scen_dir.mkdir(parents=True, exist_ok=True)
    written = {s.id for s in labelled}
    for old in scen_dir.glob(f"{options.id_prefix}*.yaml"):
        if old.stem not in written:
            old.unlink()
    for scenario in labelled:
        atomic_write(scen_dir / f"{scenario.id}.yaml", scenario_yaml(scenario))
    outcomes = [o for o, _, _ in results]
    manifest = {
        "pipeline_version": PIPELINE_VERSION,
        "models": models,
        "counts": {
            k: sum(1 for o in outcomes if o.status == k)
            for k in ("written", "skipped", "failed", "duplicate")
        },
        "items": [o.__dict__ for o in outcomes],
    }
    atomic_write(options.out / "distill.json", _dump(manifest))
    return DistillSummary(items=outcomes, out=options.out)
