"""Guided expansion: variants of an existing scenario from a natural-language instruction.

Each variant ``<id>-v<k>`` is written by the distiller (schema
:class:`~empathos.distill.schema.VariantDraft`: threshold, persona, crisis), then validated like
a distilled scenario (schema, checks, near-duplicates against the original and the other
variants) and rated by the judge (IEDR). State: ``OUT/state/<id>-v<k>/``; reruns reuse it.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from empathos.distill.checks import check_scenario, near_duplicates, scenario_signature
from empathos.distill.pipeline import (
    PIPELINE_VERSION,
    DistillSummary,
    ItemOutcome,
    StageCache,
    assemble_scenario,
    atomic_write,
    rate_iedr,
    scenario_yaml,
    stage_key,
)
from empathos.distill.prompts import render_distill
from empathos.distill.schema import VariantDraft
from empathos.errors import ModelCallError
from empathos.llm import ChatModel, Message
from empathos.scenarios import Scenario

__all__ = ["expand_scenario"]


def _scenario_text(s: Scenario) -> str:
    data = s.model_dump(mode="json", include={"persona", "story"})
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100).strip()


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
    lang = base.labels.language
    items: list[ItemOutcome] = []
    valid: list[tuple[ItemOutcome, Scenario, StageCache]] = []
    for k in range(1, n + 1):
        vid = f"{base.id}-v{k}"
        cache = StageCache(out / "state" / vid)
        item = ItemOutcome(source_id=vid, status="failed")
        items.append(item)
        prompt = render_distill(
            "distill_expand",
            lang,
            scenario=_scenario_text(base),
            instruction=instruction,
            variant=str(k),
        )
        key = stage_key("expand", models["distiller"], prompt.id, prompt.version, prompt.text)
        record = cache.get("expand", key)
        try:
            if record is None:
                msgs = [Message(role="user", content=prompt.text)]
                res = await distiller.structured(msgs, VariantDraft)
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
            scenario = assemble_scenario(
                vid, lang, draft.threshold, base.labels.domain, draft.persona, draft.crisis, meta
            )
        except ModelCallError as exc:
            item.reason = exc.line()
        except ValidationError as exc:
            first = exc.errors()[0]
            item.reason = f"invalid scenario: {'.'.join(map(str, first['loc']))}: {first['msg']}"
        else:
            checks = check_scenario(scenario)
            item.warnings = checks.warnings
            if checks.errors:
                item.reason = "failed checks: " + "; ".join(checks.errors)
            else:
                item.status, item.scenario_id = "valid", vid
                valid.append((item, scenario, cache))
        cache.status(item)
    sigs = [(base.id, scenario_signature(base))] + [
        (s.id, scenario_signature(s)) for _, s, _ in valid
    ]
    dups = near_duplicates(sigs, duplicate_similarity)
    written: list[Scenario] = []
    for item, scenario, cache in valid:
        if scenario.id in dups:
            kept, score = dups[scenario.id]
            item.status, item.reason = (
                "duplicate",
                f"near-duplicate of {kept} (similarity {score:.0f})",
            )
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
    return DistillSummary(items=items, out=out)
