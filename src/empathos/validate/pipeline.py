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
from empathos.records import LoadedRecord, load_records
from empathos.records.io import write_text_atomic
from empathos.scenarios import Scenario, load_scenarios
from empathos.validate.agreement import AgreementResult, pick_dialogues, run_agreement
from empathos.validate.judge import Judge
from empathos.validate.output import markdown
from empathos.validate.points import EvalPoint, eval_points, sample_points
from empathos.validate.scorers import DIRECT_TEMPLATE_ID, DIRECT_TEMPLATE_VERSION
from empathos.validate.study import (
    PairResult,
    StudyOptions,
    SummaryRow,
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


_FLIP = {
    "detects": "The judge responds to the persona: flipping it lowers delta_E.",
    "insensitive": "The judge is INSENSITIVE to the persona: flipping it leaves most "
    "judgements unchanged (ties), so its scores do not reflect who is being supported.",
    "rewards": "The judge scores replies HIGHER for the flipped persona, the opposite of what "
    "a persona-aware judge does.",
    "inconclusive": "Persona Flip is inconclusive (too few pairs or no consistent direction).",
    "no pairs": "Persona Flip has no usable pairs (no aligned original moves).",
}


def _kind_detail(r: SummaryRow) -> str:
    s = r.summary
    if s.n == 0:
        return f"{r.subset}: no pairs"
    return (
        f"{r.subset} {r.verdict} (n {s.n}, mean delta_E {s.mean:+.2f}, {s.pr_negative:.0%} "
        f"decreased, {s.tie_rate:.0%} ties, p {s.p_value:.2g})"
    )


def _sycophancy(rows: Sequence[SummaryRow]) -> str:
    """The sycophancy sentence, from the per-kind rows (a judge may reward one kind and
    penalise the others: the pooled row would average that into 'inconclusive')."""
    kinds = [
        r for r in rows if (r.perturbation, r.scorer) == ("sycophancy", "epm")
        and r.subset != "all kinds"
    ]  # fmt: skip
    if not kinds:
        return ""
    named = {v: [r.subset for r in kinds if r.verdict == v] for v in ("rewards", "insensitive")}
    if named["rewards"]:
        head = (
            f"The judge REWARDS sycophancy ({', '.join(named['rewards'])}): performative "
            "replies score higher than the originals."
        )
    elif named["insensitive"]:
        head = (
            f"The judge is INSENSITIVE to sycophancy ({', '.join(named['insensitive'])}): "
            "performative replies score the same as the originals."
        )
    elif all(r.verdict == "detects" for r in kinds):
        head = "Sycophantic replies are penalised (delta_E drops) for every kind."
    elif all(r.verdict == "no pairs" for r in kinds):
        return "Sycophancy has no usable pairs."
    else:
        head = "Sycophancy is inconclusive for some kinds (too few pairs or no consistent "
        head += "direction)."
    return f"{head} By kind: {'; '.join(_kind_detail(r) for r in kinds)}."


def conclusion(rows: Sequence[SummaryRow]) -> str:
    """One sentence on the Persona Flip, and the sycophancy verdict of each kind."""
    parts: list[str] = []
    flip = _row(rows, "persona_flip", "aligned", "epm")
    if flip is not None:
        parts.append(_FLIP[flip.verdict])
    syc = _sycophancy(rows)
    if syc:
        parts.append(syc)
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


@dataclass(frozen=True, slots=True)
class _Inputs:
    """The records and the evaluation points that found their scenario."""

    loaded: list[LoadedRecord]
    unreadable: int
    dialogues: list[list[EvalPoint]]
    missing: list[str]


def _load_inputs(paths: Sequence[str | Path], scenarios: Sequence[str | Path]) -> _Inputs:
    """Records and scenarios, matched into evaluation points; one InputError when nothing
    can be re-judged."""
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
    return _Inputs(loaded, len(bad), [list(d) for d in dialogues], missing)


def _ticker(progress: Progress | None) -> Callable[[str, int], Callable[[int], None]]:
    """``tick(stage, total)``: a counter that reports ``(stage, done, total)``."""

    def tick(stage: str, total: int) -> Callable[[int], None]:
        done = [0]

        def step(n: int) -> None:
            done[0] += n
            if progress is not None:
                progress(stage, done[0], total)

        return step

    return tick


async def _agreements(
    chosen: Sequence[Sequence[EvalPoint]],
    judge: JudgeSpec,
    judge_a: Judge,
    judge_b: JudgeSpec | None,
    self_temperature: float | None,
    cache: ResponseCache | None,
    judges: list[Judge],
    tick: Callable[[str, int], Callable[[int], None]],
) -> list[AgreementResult]:
    """Judge A against judge B, and the judge against itself at a temperature (each only
    when asked for); every judge built is added to ``judges`` (closed by the caller)."""
    out: list[AgreementResult] = []
    if judge_b is not None and chosen:
        jb = _judge(judge_b, cache, f"{judge_b.endpoint.model} (B)")
        judges.append(jb)
        out.append(
            await run_agreement(chosen, judge_a, jb, "judge A vs judge B",
                                tick("agreement", len(chosen)))
        )  # fmt: skip
    if self_temperature is not None and chosen:
        seed, model = judge.endpoint.seed or 0, judge.endpoint.model
        r1 = _judge(judge, cache, f"{model} #1", temperature=self_temperature, seed=seed + 1)
        r2 = _judge(judge, cache, f"{model} #2", temperature=self_temperature, seed=seed + 2)
        judges += [r1, r2]
        label = f"self-consistency at temperature {self_temperature:g}"
        out.append(
            await run_agreement(chosen, r1, r2, label, tick("self-consistency", len(chosen)))
        )
    return out


def _document(
    paths: Sequence[str | Path],
    scenarios: Sequence[str | Path],
    judge: JudgeSpec,
    judge_b: JudgeSpec | None,
    self_temperature: float | None,
    options: StudyOptions,
    inputs: _Inputs,
    study: tuple[list[EvalPoint], list[PairResult], list[AgreementResult], list[Judge]],
) -> dict[str, Any]:
    """The JSON document of a validation (see :mod:`empathos.validate.output`)."""
    points, pairs, agreement, judges = study
    rows = summarize(pairs, options)
    return {
        "empathos_version": __version__,
        "judge": judge.public(),
        "judge_b": judge_b.public() if judge_b is not None else None,
        "self_consistency_temperature": self_temperature,
        "options": {**asdict(options), "sycophancy": list(options.sycophancy)},
        "direct_template": {"id": DIRECT_TEMPLATE_ID, "version": DIRECT_TEMPLATE_VERSION},
        "inputs": {
            "paths": [str(p) for p in paths],
            "scenarios": [str(x) for x in scenarios],
            "records_loaded": len(inputs.loaded),
            "records_unreadable": inputs.unreadable,
            "missing_scenarios": inputs.missing,
        },
        "sample": {
            "dialogues_available": len(inputs.dialogues),
            "points_available": sum(len(d) for d in inputs.dialogues),
            "points": len(points),
            "point_ids": [p.id for p in points],
            "pairs": len(pairs),
            "pairs_failed": sum(1 for p in pairs if p.error),
            "judge_calls": sum(j.calls for j in judges),
            "cache_hits": sum(j.cache_hits for j in judges),
        },
        "warnings": _warnings(judge, len(points), inputs.missing, inputs.unreadable),
        "conclusion": conclusion(rows),
        "table": [r.as_dict() for r in rows],
        "agreement": [a.as_dict() for a in agreement],
        "pairs": [_pair(p) for p in pairs],
    }


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
    inputs = _load_inputs(paths, scenarios)
    points = sample_points(inputs.dialogues, options.pairs, options.seed)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    judges: list[Judge] = []
    tick = _ticker(progress)
    try:
        judge_a = _judge(judge, cache, judge.endpoint.model)
        judges.append(judge_a)
        pairs = await run_perturbations(
            points, judge_a, options, tick("perturbations", len(points))
        )
        chosen = pick_dialogues(inputs.dialogues, options.agreement_dialogues, options.seed)
        agreement = await _agreements(
            chosen, judge, judge_a, judge_b, self_temperature, cache, judges, tick
        )
    finally:
        for j in judges:
            await j.client.aclose()
        if cache is not None:
            cache.close()
    study = (points, pairs, agreement, judges)
    doc = _document(paths, scenarios, judge, judge_b, self_temperature, options, inputs, study)
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
