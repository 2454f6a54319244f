"""The validation study: perturbation pairs, their summary table, and judge agreement.

``run_perturbations`` re-judges each sampled point three ways (original, persona flipped,
reply replaced by each sycophantic kind) and scores every judgement with each scorer;
``summarize`` turns the pairs into the paper's table (one row per perturbation, subset and
scorer) with a verdict per row. Judge agreement (two raters re-rating the same evaluations)
lives in :mod:`.agreement`; its names are re-exported here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from empathos.validate.agreement import (
    AgreementResult,
    Progress,
    pick_dialogues,
    rescore_epmq,
    run_agreement,
)
from empathos.validate.judge import Judge, JudgeFailure
from empathos.validate.perturb import (
    SYCOPHANCY_KINDS,
    SycophancyKind,
    flip_persona,
    sycophantic_reply,
)
from empathos.validate.points import EvalPoint, with_reply
from empathos.validate.scorers import SCORERS, ScorerName, epm_delta, rubric_linear
from empathos.validate.stats import DeltaSummary, summarize_deltas

__all__ = [
    "ALPHA",
    "AgreementResult",
    "PairResult",
    "StudyOptions",
    "SummaryRow",
    "Verdict",
    "pick_dialogues",
    "rescore_epmq",
    "run_agreement",
    "run_perturbations",
    "scorer_names",
    "summarize",
    "verdict",
]

Verdict = Literal["detects", "insensitive", "rewards", "inconclusive", "no pairs", "n/a"]
#: Significance level of the verdicts.
ALPHA = 0.05


@dataclass(frozen=True, slots=True)
class StudyOptions:
    """What the study samples and computes (recorded in the output)."""

    pairs: int = 30
    seed: int = 0
    sycophancy: tuple[SycophancyKind, ...] = SYCOPHANCY_KINDS
    direct: bool = True
    resamples: int = 2000
    agreement_dialogues: int = 5


@dataclass(frozen=True, slots=True)
class PairResult:
    """One original/perturbed pair: each scorer's original and perturbed score.

    ``perturbation`` is ``persona_flip`` or ``sycophancy``; ``variant`` the sycophantic kind
    (``flip`` for the persona flip). ``aligned``: the original judgement's delta_E > 0.
    ``error`` holds the reason when a needed judge call failed (scores then partial).
    """

    id: str
    scenario_id: str
    group: str
    turn: int
    perturbation: str
    variant: str
    aligned: bool | None
    original: dict[str, float]
    perturbed: dict[str, float]
    d_alignment: float | None = None
    original_levels: dict[str, int] = field(default_factory=dict)
    perturbed_levels: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    def delta(self, scorer: str) -> float | None:
        """perturbed - original under ``scorer`` (None when either is missing)."""
        if scorer in self.original and scorer in self.perturbed:
            return self.perturbed[scorer] - self.original[scorer]
        return None


def _scores(
    levels: dict[str, int] | JudgeFailure, direct: int | JudgeFailure | None, point: EvalPoint
) -> tuple[dict[str, float], float | None]:
    out: dict[str, float] = {}
    align: float | None = None
    if not isinstance(levels, JudgeFailure):
        dE, align = epm_delta(levels, point.P_prev, point.v_star0, point.config)
        out["epm"] = dE
        out["rubric"] = rubric_linear(levels)
    if isinstance(direct, int):
        out["direct"] = float(direct)
    return out, align


def _reason(*results: object) -> str | None:
    for r in results:
        if isinstance(r, JudgeFailure):
            return r.reason
    return None


async def _judge_both(
    judge: Judge, point: EvalPoint, direct: bool
) -> tuple[dict[str, int] | JudgeFailure, int | JudgeFailure | None]:
    if not direct:
        return await judge.mdep(point), None
    levels, rating = await asyncio.gather(judge.mdep(point), judge.direct(point))
    return levels, rating


async def _one_point(point: EvalPoint, judge: Judge, options: StudyOptions) -> list[PairResult]:
    variants: list[tuple[str, str, EvalPoint]] = [
        ("persona_flip", "flip", _flipped(point)),
    ]
    for kind in options.sycophancy:
        reply = sycophantic_reply(kind, point.language, point.id, options.seed)
        variants.append(("sycophancy", kind, with_reply(point, reply)))
    results = await asyncio.gather(
        _judge_both(judge, point, options.direct),
        *(_judge_both(judge, p, options.direct) for _, _, p in variants),
    )
    (o_levels, o_direct), rest = results[0], results[1:]
    original, o_align = _scores(o_levels, o_direct, point)
    aligned = original["epm"] > 0 if "epm" in original else None
    out: list[PairResult] = []
    for (pert, variant, _), (p_levels, p_direct) in zip(variants, rest, strict=True):
        perturbed, p_align = _scores(p_levels, p_direct, point)
        out.append(
            PairResult(
                id=point.id,
                scenario_id=point.scenario.id,
                group=point.group,
                turn=point.turn,
                perturbation=pert,
                variant=variant,
                aligned=aligned,
                original=original,
                perturbed=perturbed,
                d_alignment=(
                    p_align - o_align if p_align is not None and o_align is not None else None
                ),
                original_levels={} if isinstance(o_levels, JudgeFailure) else o_levels,
                perturbed_levels={} if isinstance(p_levels, JudgeFailure) else p_levels,
                error=_reason(o_levels, o_direct, p_levels, p_direct),
            )
        )
    return out


def _flipped(point: EvalPoint) -> EvalPoint:
    return replace(point, scenario=flip_persona(point.scenario))


async def run_perturbations(
    points: Sequence[EvalPoint],
    judge: Judge,
    options: StudyOptions,
    progress: Progress | None = None,
) -> list[PairResult]:
    """Every pair of every point, in point order (the judge client bounds concurrency)."""

    async def one(p: EvalPoint) -> list[PairResult]:
        res = await _one_point(p, judge, options)
        if progress is not None:
            progress(1)
        return res

    nested = await asyncio.gather(*(one(p) for p in points))
    return [pair for group in nested for pair in group]


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One row of the table: a perturbation (and subset) under one scorer."""

    perturbation: str
    subset: str
    scorer: str
    summary: DeltaSummary
    verdict: Verdict
    mean_d_alignment: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "perturbation": self.perturbation,
            "subset": self.subset,
            "scorer": self.scorer,
            **self.summary.as_dict(),
            "verdict": self.verdict,
            "mean_d_alignment": self.mean_d_alignment,
        }


def verdict(s: DeltaSummary, alpha: float = ALPHA) -> Verdict:
    """How a scorer reacted to a perturbation that should lower the score.

    A significant shift of the pairs that moved comes first, whatever the share of ties:
    ``detects`` when the signed-rank test (ties dropped, as Wilcoxon did) rejects at
    ``alpha``, the mean is negative and more pairs decrease than increase; ``rewards`` when it
    rejects, the mean is positive and more pairs increase. Only then the ties:
    ``insensitive`` when half or more of the pairs are ties; otherwise ``inconclusive`` (too
    few pairs, or no consistent direction). A judge that scores sycophantic replies higher
    on the few points where it reacts at all rewards them, however often it ties.
    """
    if s.n == 0:
        return "no pairs"
    if s.p_value < alpha and s.mean < 0 and s.pr_negative > s.pr_positive:
        return "detects"
    if s.p_value < alpha and s.mean > 0 and s.pr_positive > s.pr_negative:
        return "rewards"
    if s.tie_rate >= 0.5:
        return "insensitive"
    return "inconclusive"


def _row(
    pert: str, subset: str, scorer: str, pairs: Sequence[PairResult], options: StudyOptions
) -> SummaryRow:
    used = [p for p in pairs if p.delta(scorer) is not None]
    d = [p.delta(scorer) or 0.0 for p in used]
    summary = summarize_deltas(
        d, [p.scenario_id for p in used], resamples=options.resamples, seed=options.seed
    )
    align = [p.d_alignment for p in used if p.d_alignment is not None]
    mean_align = float(np.mean(align)) if scorer == "epm" and align else None
    # Pairs whose original move was not aligned have no expected direction: no verdict.
    v: Verdict = "n/a" if subset == "not aligned" else verdict(summary)
    return SummaryRow(pert, subset, scorer, summary, v, mean_align)


def summarize(pairs: Sequence[PairResult], options: StudyOptions) -> list[SummaryRow]:
    """The table. Persona flip: the pairs whose original move was aligned (delta_E > 0, the
    paper's population), then the others apart. Sycophancy: all kinds pooled, then each."""
    scorers = scorer_names(options)
    rows: list[SummaryRow] = []
    flips = [p for p in pairs if p.perturbation == "persona_flip"]
    for subset, chosen in (
        ("aligned", [p for p in flips if p.aligned]),
        ("not aligned", [p for p in flips if p.aligned is False]),
    ):
        rows += [_row("persona_flip", subset, s, chosen, options) for s in scorers]
    syc = [p for p in pairs if p.perturbation == "sycophancy"]
    rows += [_row("sycophancy", "all kinds", s, syc, options) for s in scorers]
    for kind in options.sycophancy:
        chosen = [p for p in syc if p.variant == kind]
        rows += [_row("sycophancy", kind, s, chosen, options) for s in scorers]
    return rows


def scorer_names(options: StudyOptions) -> list[ScorerName]:
    """The scorers the study uses (``direct`` only when enabled)."""
    return [s for s in SCORERS if s != "direct" or options.direct]
