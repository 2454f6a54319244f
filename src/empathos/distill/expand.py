"""Guided expansion: variants of an existing scenario from a natural-language instruction.

Each variant ``<id>-v<k>`` is written by the distiller (schema
:class:`~empathos.distill.schema.VariantDraft`: threshold, persona, crisis), then validated like
a distilled scenario (schema, checks, degeneracy, near-duplicates against the original and the
other variants) and rated by the judge (IEDR). State: ``OUT/state/<id>-v<k>/``; reruns reuse it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from empathos.distill.assemble import (
    assemble_scenario,
    checked_scenario,
    rate_iedr,
    scenario_yaml,
)
from empathos.distill.checks import near_duplicates, scenario_signature
from empathos.distill.pipeline import PIPELINE_VERSION
from empathos.distill.prompts import render_distill
from empathos.distill.schema import VariantDraft
from empathos.distill.state import DistillSummary, ItemOutcome, StageCache, atomic_write, stage_key
from empathos.errors import ModelCallError
from empathos.llm import ChatModel, Message
from empathos.scenarios import Scenario

__all__ = ["expand_scenario"]


def _scenario_text(s: Scenario) -> str:
    data = s.model_dump(mode="json", include={"persona", "story"})
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100).strip()


async def _variant(
    base: Scenario,
    instruction: str,
    k: int,
    distiller: ChatModel,
    out: Path,
    models: dict[str, str],
) -> tuple[ItemOutcome, Scenario | None, StageCache]:
    """Variant ``k``: drafted by the distiller (or read from its state), then checked."""
    vid = f"{base.id}-v{k}"
    cache = StageCache(out / "state" / vid)
    item = ItemOutcome(source_id=vid, status="failed")
    lang = base.labels.language
    prompt = render_distill(
        "distill_expand", lang, scenario=_scenario_text(base), instruction=instruction,
        variant=str(k),
    )  # fmt: skip
    key = stage_key("expand", models["distiller"], prompt.id, prompt.version, prompt.text)
    record = cache.get("expand", key)
    try:
        if record is None:
            res = await distiller.structured([Message(role="user", content=prompt.text)],
                                             VariantDraft)  # fmt: skip
            record = {
                "key": key,
                "stage": "expand",
                "prompt": {"id": prompt.id, "version": prompt.version},
                "model": models["distiller"],
                "raw": res.raw,
                "value": res.value.model_dump(mode="json"),
                "call": res.record.model_dump(mode="json"),
            }
            cache.put("expand", record)
    except ModelCallError as exc:
        item.reason = exc.line()
        cache.status(item)
        return item, None, cache
    draft = VariantDraft.model_validate(record["value"])
    meta = {
        "distill": {
            "pipeline_version": PIPELINE_VERSION,
            "expanded_from": base.id,
            "base_sha256": base.scenario_hash(),
            "instruction": instruction,
            "variant": k,
            "models": dict(models),
            "prompts": {prompt.id: prompt.version},
        }
    }
    scenario = checked_scenario(
        item,
        lambda: assemble_scenario(
            vid, lang, draft.threshold, base.labels.domain, draft.persona, draft.crisis, meta
        ),
    )
    cache.status(item)
    return item, scenario, cache


async def expand_scenario(
    base: Scenario,
    instruction: str,
    n: int,
    distiller: ChatModel,
    judge: ChatModel,
    out: Path,
    *,
    models: dict[str, str],
    duplicate_similarity: float = 85.0,
) -> DistillSummary:
    """Write ``n`` validated variants of ``base`` to ``out/scenarios``."""
    drafted = [
        await _variant(base, instruction, k, distiller, out, models) for k in range(1, n + 1)
    ]
    valid = [(item, s, cache) for item, s, cache in drafted if s is not None]
    sigs = [(base.id, scenario_signature(base))] + [
        (s.id, scenario_signature(s)) for _, s, _ in valid
    ]
    dups = near_duplicates(sigs, duplicate_similarity)
    written: list[Scenario] = []
    for item, scenario, cache in valid:
        if scenario.id in dups:
            kept, score = dups[scenario.id]
            item.status = "duplicate"
            item.reason = f"near-duplicate of {kept} (similarity {score:.0f})"
            item.scenario_id = None
        else:
            result = await rate_iedr(judge, cache, scenario, models["judge"], item.warnings)
            if isinstance(result, str):
                item.status, item.reason = "failed", result
            else:
                item.status = "written"
                written.append(result)
        cache.status(item)
    for scenario in written:
        atomic_write(out / "scenarios" / f"{scenario.id}.yaml", scenario_yaml(scenario))
    return DistillSummary(items=[item for item, _, _ in drafted], out=out)
