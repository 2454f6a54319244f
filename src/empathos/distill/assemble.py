"""From stage outputs to a checked, rated scenario: assemble, validate, rate the IEDR, write.

Shared by the pipeline (:mod:`.pipeline`) and guided expansion (:mod:`.expand`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import yaml
from pydantic import ValidationError

from empathos.distill.checks import check_scenario, degeneracy
from empathos.distill.prompts import format_texts
from empathos.distill.schema import CrisisDraft, PersonaDraft
from empathos.distill.state import ItemOutcome, StageCache, stage_key
from empathos.epm import EPMConfig, start_problem
from empathos.llm import ChatModel
from empathos.sandbox import DialogueState, Failure, JudgeAgent
from empathos.sandbox.state import judge_view
from empathos.scenarios import Axis, Domain, Scenario, Threshold, p0_from_iedr
from empathos.scenarios.model import IEDR_INDICATORS, Labels, PersonaCard, Priorities, Story

__all__ = [
    "assemble_scenario",
    "checked_scenario",
    "label_with_iedr",
    "rate_iedr",
    "scenario_yaml",
]


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


def checked_scenario(item: ItemOutcome, make: Callable[[], Scenario]) -> Scenario | None:
    """The scenario ``make`` builds, if it passes the schema, the checks and the degeneracy
    test (:func:`empathos.distill.checks.degeneracy`); else None, with ``item.reason`` set.
    On success ``item`` becomes ``valid`` with the scenario's id; warnings go to ``item``."""
    try:
        scenario = make()
    except ValidationError as exc:
        first = exc.errors()[0]
        item.reason = f"invalid scenario: {'.'.join(map(str, first['loc']))}: {first['msg']}"
        return None
    checks = check_scenario(scenario)
    item.warnings = checks.warnings
    if checks.errors:
        item.reason = "failed checks: " + "; ".join(checks.errors)
        return None
    signs = degeneracy(scenario, format_texts(scenario.labels.language))
    if signs:
        item.reason = "degenerate output: " + "; ".join(signs)
        return None
    item.status, item.scenario_id = "valid", scenario.id
    return scenario


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


async def _judge_iedr(
    judge: ChatModel, scenario: Scenario, key: str, judge_model: str
) -> dict[str, Any] | str:
    """The judge's IEDR as a stage record, or the failure reason."""
    lang = scenario.labels.language
    state = DialogueState(scenario=scenario, language=lang, epm_config=EPMConfig())
    ratings, state = await JudgeAgent(judge).act(judge_view(state, "iedr"), state)
    call = state.calls[-1].model_dump(mode="json") if state.calls else {}
    if isinstance(ratings, Failure):
        return f"iedr: {ratings.reason}"
    return {
        "key": key,
        "stage": "iedr",
        "prompt": {"id": call.get("template_id"), "version": call.get("template_version")},
        "model": judge_model,
        "raw": call.get("metadata", {}).get("output"),
        "value": {k: r.level for k, r in ratings.items() if r.level is not None},
        "call": call,
    }


async def rate_iedr(
    judge: ChatModel,
    cache: StageCache,
    scenario: Scenario,
    judge_model: str,
    warnings: Sequence[str] = (),
) -> Scenario | str:
    """The scenario with the judge's IEDR, P_0 labels and provenance, or the failure reason
    (a failed call, or a degenerate P_0: :func:`empathos.epm.start_problem`).

    The rating is cached in ``cache`` (stage ``iedr``) under the scenario's content hash."""
    key = stage_key("iedr", judge_model, scenario.scenario_hash())
    record = cache.get("iedr", key)
    if record is None:
        judged = await _judge_iedr(judge, scenario, key, judge_model)
        if isinstance(judged, str):
            return judged
        record = judged
        cache.put("iedr", record)
    levels = {k: int(v) for k, v in record["value"].items()}
    if set(levels) == set(IEDR_INDICATORS):
        problem = start_problem(p0_from_iedr(levels))
        if problem is not None:  # a scenario nobody can be helped in: never written
            return f"iedr: {problem}"
    labelled = label_with_iedr(scenario, levels)
    meta = dict(labelled.metadata)
    dist = dict(meta.get("distill", {}))
    prompt = record["prompt"]
    dist["prompts"] = {**dist.get("prompts", {}), str(prompt["id"]): str(prompt["version"])}
    dist["warnings"] = list(warnings)
    meta["distill"] = dist
    return labelled.model_copy(update={"metadata": meta})
