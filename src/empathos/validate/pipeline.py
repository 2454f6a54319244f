"""The shell of ``empathos validate``: load, sample, re-judge, summarise, write.

:func:`run_validation` reads the records and scenarios, builds the judge clients (with the
response cache, so a rerun is free and an interrupted run resumes), runs the perturbation
study and the agreement checks, and returns the JSON document; :func:`write_outputs` writes
``validate.json`` and ``validate.md`` into the output directory.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from empathos import __version__
from empathos.errors import InputError
from empathos.llm import ResponseCache
from empathos.llm.config import redact_url
from empathos.llm.offline import OFFLINE_MODEL_ID
from empathos.llm.roles import RoleEndpoint, build_role_model
from empathos.records import load_records
from empathos.records.io import write_text_atomic
from empathos.scenarios import Scenario, load_scenarios
from empathos.validate.judge import Judge
from empathos.validate.output import markdown
from empathos.validate.points import eval_points, sample_points
from empathos.validate.scorers import DIRECT_TEMPLATE_ID, DIRECT_TEMPLATE_VERSION
from empathos.validate.study import (
    AgreementResult,
    PairResult,
    StudyOptions,
    SummaryRow,
    pick_dialogues,
    run_agreement,
    run_perturbations,
    summarize,
)

__all__ = [
    "JSON_NAME",
    "MD_NAME",
    "MIN_MEANINGFUL_POINTS",
    "JudgeSpec",
    "conclusion",
    "run_validation",
    "write_outputs",
]

JSON_NAME = "validate.json"
MD_NAME = "validate.md"
#: Below this many evaluation points the output warns that the sample is too small.
MIN_MEANINGFUL_POINTS = 20
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    """A judge endpoint (a run's judge config) and the name it is reported under."""

    endpoint: RoleEndpoint
    label: str = "judge"

    def public(self) -> dict[str, Any]:
        """What the output records about it: no key, only the variable's name."""
        e = self.endpoint
        return {
            "name": e.model,
            "kind": e.kind,
            "base_url": redact_url(e.base_url),
            "api_key_env": e.api_key_env,
            "handler": e.handler,
            "sampling": e.sampling(),
        }


def _judge(
    spec: JudgeSpec, cache: ResponseCache | None, name: str, **sampling: float | int
) -> Judge:
    endpoint = spec.endpoint.model_copy(update={"cache": cache is not None, **sampling})
    return Judge(name, build_role_model(endpoint, "judge", cache, name=spec.label))


def _nan_to_none(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _nan_to_none(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_nan_to_none(v) for v in x]
    return x


def _row(rows: Sequence[SummaryRow], pert: str, subset: str, scorer: str) -> SummaryRow | None:
    for r in rows:
        if (r.perturbation, r.subset, r.scorer) == (pert, subset, scorer):
            return r
    return None


def conclusion(rows: Sequence[SummaryRow]) -> str:
    """One sentence per perturbation on what the judge-plus-EPM did."""
    parts: list[str] = []
    flip = _row(rows, "persona_flip", "aligned", "epm")
    if flip is not None:
        parts.append(
            {
                "detects": "The judge responds to the persona: flipping it lowers delta_E.",
                "insensitive": "The judge is INSENSITIVE to the persona: flipping it leaves "
                "most judgements unchanged (ties), so its scores do not reflect who is "
                "being supported.",
                "rewards": "The judge scores replies HIGHER for the flipped persona, the "
                "opposite of what a persona-aware judge does.",
                "inconclusive": "Persona Flip is inconclusive (too few pairs or no "
                "consistent direction).",
                "no pairs": "Persona Flip has no usable pairs (no aligned original moves).",
            }[flip.verdict]
        )
    syc = _row(rows, "sycophancy", "all kinds", "epm")
    if syc is not None:
        parts.append(
            {
                "detects": "Sycophantic replies are penalised (delta_E drops).",
                "insensitive": "The judge is INSENSITIVE to sycophancy: performative replies "
                "score the same as the originals.",
                "rewards": "The judge REWARDS sycophancy: performative replies score higher "
                "than the originals.",
                "inconclusive": "Sycophancy is inconclusive (too few pairs or no consistent "
                "direction).",
                "no pairs": "Sycophancy has no usable pairs.",
            }[syc.verdict]
        )
    return " ".join(parts)


def _warnings(
    judge: JudgeSpec, n_points: int, missing: Sequence[str], unreadable: int
) -> list[str]:
    out: list[str] = []
    e = judge.endpoint
    if e.kind == "offline" or e.model == OFFLINE_MODEL_ID:
        out.append(
            "the judge is the bundled offline model (SmolLM2-135M-Instruct): far too small "
            "to be a meaningful judge; this run only shows that the pipeline works"
        )
    if e.kind == "scripted":
        out.append("the judge is a scripted (rule-based) backend: the numbers test the tool")
    if n_points < MIN_MEANINGFUL_POINTS:
        out.append(
            f"only {n_points} evaluation points (fewer than {MIN_MEANINGFUL_POINTS}): the "
            "intervals are wide and verdicts rarely reach significance; use more --pairs"
        )
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        out.append(
            f"{len(missing)} scenario id(s) of the records are not in --scenarios and were "
            f"skipped: {shown}"
        )
    if unreadable:
        out.append(f"{unreadable} record file(s) could not be read and were skipped")
    return out


async def run_validation(
    paths: Sequence[str | Path],
    *,
    scenarios: Sequence[str | Path],
    judge: JudgeSpec,
    judge_b: JudgeSpec | None,
    self_temperature: float | None,
    options: StudyOptions,
    cache_path: Path | None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the study and return its JSON document (see :mod:`empathos.validate.output`)."""
    loaded, bad = load_records(paths)
    if not loaded:
        first = bad[0].line() if bad else "no record files found"
        raise InputError(f"no readable records: {first}", field="PATH")
    by_id: dict[str, Scenario] = {}
    problems: list[str] = []
    for src in scenarios:
        found = load_scenarios(src)
        problems += [e.line() for e in found.errors]
        for sc in found.scenarios:
            by_id.setdefault(sc.id, sc)
    if not by_id:
        first = problems[0] if problems else "no scenarios"
        raise InputError(f"no scenarios loaded: {first}", field="--scenarios")
    dialogues, missing = eval_points(loaded, by_id)
    if not dialogues:
        ids = {x.record.scenario_id for x in loaded}
        raise InputError(
            "no evaluation point to re-judge: no record matches a scenario of --scenarios "
            f"(record scenario ids: {', '.join(sorted(ids)[:5])})",
            field="--scenarios",
        )
    points = sample_points(dialogues, options.pairs, options.seed)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    judges: list[Judge] = []
    try:
        judge_a = _judge(judge, cache, judge.endpoint.model)
        judges.append(judge_a)

        def tick(stage: str, total: int) -> Callable[[int], None]:
            done = [0]

            def step(n: int) -> None:
                done[0] += n
                if progress is not None:
                    progress(stage, done[0], total)

            return step

        pairs = await run_perturbations(
            points, judge_a, options, tick("perturbations", len(points))
        )
        rows = summarize(pairs, options)
        agreement: list[AgreementResult] = []
        chosen = pick_dialogues(dialogues, options.agreement_dialogues, options.seed)
        if judge_b is not None and chosen:
            jb = _judge(judge_b, cache, f"{judge_b.endpoint.model} (B)")
            judges.append(jb)
            agreement.append(
                await run_agreement(
                    chosen, judge_a, jb, "judge A vs judge B", tick("agreement", len(chosen))
                )
            )
        if self_temperature is not None and chosen:
            seed = judge.endpoint.seed or 0
            r1 = _judge(
                judge,
                cache,
                f"{judge.endpoint.model} #1",
                temperature=self_temperature,
                seed=seed + 1,
            )
            r2 = _judge(
                judge,
                cache,
                f"{judge.endpoint.model} #2",
                temperature=self_temperature,
                seed=seed + 2,
            )
            judges += [r1, r2]
            agreement.append(
                await run_agreement(
                    chosen,
                    r1,
                    r2,
                    f"self-consistency at temperature {self_temperature:g}",
                    tick("self-consistency", len(chosen)),
                )
            )
    finally:
        for j in judges:
            await j.client.aclose()
        if cache is not None:
            cache.close()
    doc: dict[str, Any] = {
        "empathos_version": __version__,
        "judge": judge.public(),
        "judge_b": judge_b.public() if judge_b is not None else None,
        "self_consistency_temperature": self_temperature,
        "options": {**asdict(options), "sycophancy": list(options.sycophancy)},
        "direct_template": {"id": DIRECT_TEMPLATE_ID, "version": DIRECT_TEMPLATE_VERSION},
        "inputs": {
            "paths": [str(p) for p in paths],
            "scenarios": [str(x) for x in scenarios],
            "records_loaded": len(loaded),
            "records_unreadable": len(bad),
            "missing_scenarios": missing,
        },
        "sample": {
            "dialogues_available": len(dialogues),
            "points_available": sum(len(d) for d in dialogues),
            "points": len(points),
            "point_ids": [p.id for p in points],
            "pairs": len(pairs),
            "pairs_failed": sum(1 for p in pairs if p.error),
            "judge_calls": sum(j.calls for j in judges),
            "cache_hits": sum(j.cache_hits for j in judges),
        },
        "warnings": _warnings(judge, len(points), missing, len(bad)),
        "conclusion": conclusion(rows),
        "table": [r.as_dict() for r in rows],
        "agreement": [a.as_dict() for a in agreement],
        "pairs": [_pair(p) for p in pairs],
    }
    return _nan_to_none(doc)  # type: ignore[no-any-return]


def _pair(p: PairResult) -> dict[str, Any]:
    d = asdict(p)
    d["d"] = {s: p.delta(s) for s in p.original if p.delta(s) is not None}
    return d


def write_outputs(doc: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """``validate.json`` and ``validate.md`` in ``out`` (atomic writes)."""
    out.mkdir(parents=True, exist_ok=True)
    j = write_text_atomic(out / JSON_NAME, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    m = write_text_atomic(out / MD_NAME, markdown(doc))
    return j, m
