"""The validation study: perturbation pairs, their summary table, and judge agreement.

``run_perturbations`` re-judges each sampled point three ways (original, persona flipped,
reply replaced by each sycophantic kind) and scores every judgement with each scorer;
``summarize`` turns the pairs into the paper's table (one row per perturbation, subset and
scorer) with a verdict per row; ``run_agreement`` has two raters re-rate every evaluation of
a few dialogues and compares them (weighted kappa per indicator, delta_E sign agreement,
EPM-Q rank correlation, the leaderboard order).
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from empathos.epm import (
    Termination,
    TerminationKind,
    check_termination,
    init_state,
    step,
)
from empathos.records import DialogueRecord, Evaluation, IndicatorRating, InitialDeficit
from empathos.rubric import EMPATHY_RUBRIC, action_vector
from empathos.scoring.dialogues import dialogue_scores
from empathos.validate.judge import Judge, JudgeFailure
from empathos.validate.perturb import (
    SYCOPHANCY_KINDS,
    SycophancyKind,
    flip_persona,
    sycophantic_reply,
)
from empathos.validate.points import EvalPoint, with_reply
from empathos.validate.scorers import SCORERS, ScorerName, epm_delta, rubric_linear
from empathos.validate.stats import (
    DeltaSummary,
    kendall,
    sign_agreement,
    spearman,
    summarize_deltas,
    weighted_kappa,
)

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
Progress = Callable[[int], None]
Rated = dict[str, int] | JudgeFailure


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

    ``insensitive``: half or more of the pairs are ties; ``detects``: the mean is negative,
    most pairs decrease and the signed-rank test rejects at ``alpha``; ``rewards``: the mean
    is positive and the test rejects; otherwise ``inconclusive`` (too few pairs, or no
    consistent direction).
    """
    if s.n == 0:
        return "no pairs"
    if s.tie_rate >= 0.5:
        return "insensitive"
    if s.p_value < alpha and s.mean < 0 and s.pr_negative > 0.5:
        return "detects"
    if s.p_value < alpha and s.mean > 0:
        return "rewards"
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


# -- agreement ---------------------------------------------------------------------------


def rescore_epmq(points: Sequence[EvalPoint], ratings: Sequence[dict[str, int]]) -> float:
    """EPM-Q of one dialogue whose evaluations (``points``, in turn order) are re-rated.

    The EPM runs from the stored P_0 over the new ratings; the dialogue stops at the first
    stop rule met, and one that meets none counts as a timeout at its last evaluated turn.
    """
    first = points[0]
    cfg = first.config
    state = init_state(first.P0, cfg)
    evals: list[Evaluation] = []
    term: Termination | None = None
    for point, levels in zip(points, ratings, strict=True):
        state = step(state, action_vector(levels, EMPATHY_RUBRIC).tolist(), cfg, turn=point.turn)
        evals.append(
            Evaluation(
                turn=point.turn,
                scored=True,
                ratings={k: IndicatorRating(level=v) for k, v in levels.items()},
                state=state.last,
            )
        )
        term = check_termination(state, cfg)
        if term is not None:
            break
    if term is None:
        term = Termination(
            kind=TerminationKind.TIMEOUT, turn=state.turn, reason="re-rated: no stop rule met"
        )
    record = DialogueRecord(
        scenario_id=first.scenario.id,
        model=first.group,
        epm_config=cfg,
        iedr=InitialDeficit(ratings={}, P0=first.P0),
        initial_state=state.points[0],
        evaluations=evals,
        total_turns=term.turn,
        termination=term,
        success=term.kind.is_success,
    )
    return float(dialogue_scores([record], cfg).epmq[0])


@dataclass(frozen=True, slots=True)
class AgreementResult:
    """Two raters over the same evaluations of the same dialogues."""

    label: str
    rater_a: str
    rater_b: str
    dialogues: list[str]
    points: int
    failed: int
    kappa: dict[str, float]
    kappa_weights: str
    sign_agreement: float
    epmq_spearman: float
    epmq_a: list[float]
    epmq_b: list[float]
    order_a: list[str]
    order_b: list[str]
    order_kendall: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "label": self.label,
            "rater_a": self.rater_a,
            "rater_b": self.rater_b,
            "dialogues": self.dialogues,
            "points": self.points,
            "failed": self.failed,
            "kappa_weights": self.kappa_weights,
            "kappa": self.kappa,
            "sign_agreement": self.sign_agreement,
            "epmq_spearman": self.epmq_spearman,
            "epmq_a": self.epmq_a,
            "epmq_b": self.epmq_b,
            "leaderboard_order_a": self.order_a,
            "leaderboard_order_b": self.order_b,
            "leaderboard_kendall": self.order_kendall,
        }


def pick_dialogues(
    dialogues: Sequence[Sequence[EvalPoint]], n: int, seed: int
) -> list[Sequence[EvalPoint]]:
    """``n`` dialogues drawn without replacement (seeded), in their original order."""
    idx = sorted(random.Random(seed).sample(range(len(dialogues)), min(n, len(dialogues))))
    return [dialogues[i] for i in idx]


def _order(groups: Sequence[str], epmq: Sequence[float]) -> list[str]:
    by: dict[str, list[float]] = defaultdict(list)
    for g, q in zip(groups, epmq, strict=True):
        if np.isfinite(q):
            by[g].append(q)
    return sorted(by, key=lambda g: (-float(np.mean(by[g])), g))


async def run_agreement(
    dialogues: Sequence[Sequence[EvalPoint]],
    judge_a: Judge,
    judge_b: Judge,
    label: str,
    progress: Progress | None = None,
) -> AgreementResult:
    """Both judges re-rate every evaluation of ``dialogues``; compare them."""

    async def both(p: EvalPoint) -> tuple[Rated, Rated]:
        a, b = await asyncio.gather(judge_a.mdep(p), judge_b.mdep(p))
        return a, b

    async def rate(points: Sequence[EvalPoint]) -> list[tuple[Rated, Rated]]:
        out = list(await asyncio.gather(*(both(p) for p in points)))
        if progress is not None:
            progress(1)
        return out

    rated = await asyncio.gather(*(rate(d) for d in dialogues))
    keys = [ind.key for ind in EMPATHY_RUBRIC.mdep]
    levels_a: dict[str, list[int]] = {k: [] for k in keys}
    levels_b: dict[str, list[int]] = {k: [] for k in keys}
    dE_a: list[float] = []
    dE_b: list[float] = []
    epmq_a: list[float] = []
    epmq_b: list[float] = []
    groups: list[str] = []
    names: list[str] = []
    failed = 0
    points = 0
    for pts, pairs in zip(dialogues, rated, strict=True):
        ok_pts = []
        ok_a: list[dict[str, int]] = []
        ok_b: list[dict[str, int]] = []
        for p, (a, b) in zip(pts, pairs, strict=True):
            points += 1
            if isinstance(a, JudgeFailure) or isinstance(b, JudgeFailure):
                failed += 1
                continue
            ok_pts.append(p)
            ok_a.append(a)
            ok_b.append(b)
            for k in keys:
                levels_a[k].append(a[k])
                levels_b[k].append(b[k])
            dE_a.append(epm_delta(a, p.P_prev, p.v_star0, p.config)[0])
            dE_b.append(epm_delta(b, p.P_prev, p.v_star0, p.config)[0])
        if ok_pts:
            names.append(ok_pts[0].id.rsplit("@", 1)[0])
            groups.append(ok_pts[0].group)
            epmq_a.append(rescore_epmq(ok_pts, ok_a))
            epmq_b.append(rescore_epmq(ok_pts, ok_b))
    kappa = {
        k: weighted_kappa(
            levels_a[k],
            levels_b[k],
            sorted(EMPATHY_RUBRIC.indicator(k).levels),
            "quadratic",
        )
        for k in keys
    }
    order_a = _order(groups, epmq_a)
    order_b = _order(groups, epmq_b)
    common = [g for g in order_a if g in order_b]
    tau = kendall(
        [float(order_a.index(g)) for g in common], [float(order_b.index(g)) for g in common]
    )
    return AgreementResult(
        label=label,
        rater_a=judge_a.name,
        rater_b=judge_b.name,
        dialogues=names,
        points=points,
        failed=failed,
        kappa=kappa,
        kappa_weights="quadratic",
        sign_agreement=sign_agreement(dE_a, dE_b),
        epmq_spearman=spearman(epmq_a, epmq_b),
        epmq_a=epmq_a,
        epmq_b=epmq_b,
        order_a=order_a,
        order_b=order_b,
        order_kendall=tau,
    )


def scorer_names(options: StudyOptions) -> list[ScorerName]:
    """The scorers the study uses (``direct`` only when enabled)."""
    return [s for s in SCORERS if s != "direct" or options.direct]
