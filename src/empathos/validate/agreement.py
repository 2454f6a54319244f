"""Judge agreement: two raters re-rate every evaluation of a few dialogues, and compare.

Per indicator a quadratically weighted kappa, the share of evaluations whose delta_E has the
same sign, the rank correlation of the dialogues' re-rated EPM-Q, and the leaderboard order
each rater gives (Kendall's tau).
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from empathos.epm import Termination, TerminationKind, check_termination, init_state, step
from empathos.records import DialogueRecord, Evaluation, IndicatorRating, InitialDeficit
from empathos.rubric import EMPATHY_RUBRIC, action_vector
from empathos.scoring.dialogues import dialogue_scores
from empathos.validate.judge import Judge, JudgeFailure
from empathos.validate.points import EvalPoint
from empathos.validate.scorers import epm_delta
from empathos.validate.stats import kendall, sign_agreement, spearman, weighted_kappa

__all__ = [
    "AgreementResult",
    "Progress",
    "pick_dialogues",
    "rescore_epmq",
    "run_agreement",
]

Progress = Callable[[int], None]
Rated = dict[str, int] | JudgeFailure
_KEYS = [ind.key for ind in EMPATHY_RUBRIC.mdep]


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


@dataclass
class _Tally:
    """What both raters said, gathered over the dialogues."""

    levels_a: dict[str, list[int]] = field(default_factory=lambda: {k: [] for k in _KEYS})
    levels_b: dict[str, list[int]] = field(default_factory=lambda: {k: [] for k in _KEYS})
    dE_a: list[float] = field(default_factory=list)
    dE_b: list[float] = field(default_factory=list)
    epmq_a: list[float] = field(default_factory=list)
    epmq_b: list[float] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    points: int = 0
    failed: int = 0

    def add(self, pts: Sequence[EvalPoint], pairs: Sequence[tuple[Rated, Rated]]) -> None:
        """One dialogue: its evaluations both raters rated count; its re-rated EPM-Q."""
        ok_pts: list[EvalPoint] = []
        ok_a: list[dict[str, int]] = []
        ok_b: list[dict[str, int]] = []
        for p, (a, b) in zip(pts, pairs, strict=True):
            self.points += 1
            if isinstance(a, JudgeFailure) or isinstance(b, JudgeFailure):
                self.failed += 1
                continue
            ok_pts.append(p)
            ok_a.append(a)
            ok_b.append(b)
            for k in _KEYS:
                self.levels_a[k].append(a[k])
                self.levels_b[k].append(b[k])
            self.dE_a.append(epm_delta(a, p.P_prev, p.v_star0, p.config)[0])
            self.dE_b.append(epm_delta(b, p.P_prev, p.v_star0, p.config)[0])
        if ok_pts:
            self.names.append(ok_pts[0].id.rsplit("@", 1)[0])
            self.groups.append(ok_pts[0].group)
            self.epmq_a.append(rescore_epmq(ok_pts, ok_a))
            self.epmq_b.append(rescore_epmq(ok_pts, ok_b))


async def _rate(
    dialogues: Sequence[Sequence[EvalPoint]],
    judge_a: Judge,
    judge_b: Judge,
    progress: Progress | None,
) -> list[list[tuple[Rated, Rated]]]:
    """Both judges' MDEP levels of every evaluation, per dialogue."""

    async def both(p: EvalPoint) -> tuple[Rated, Rated]:
        a, b = await asyncio.gather(judge_a.mdep(p), judge_b.mdep(p))
        return a, b

    async def rate(points: Sequence[EvalPoint]) -> list[tuple[Rated, Rated]]:
        out = list(await asyncio.gather(*(both(p) for p in points)))
        if progress is not None:
            progress(1)
        return out

    return list(await asyncio.gather(*(rate(d) for d in dialogues)))


async def run_agreement(
    dialogues: Sequence[Sequence[EvalPoint]],
    judge_a: Judge,
    judge_b: Judge,
    label: str,
    progress: Progress | None = None,
) -> AgreementResult:
    """Both judges re-rate every evaluation of ``dialogues``; compare them."""
    tally = _Tally()
    for pts, pairs in zip(
        dialogues, await _rate(dialogues, judge_a, judge_b, progress), strict=True
    ):
        tally.add(pts, pairs)
    kappa = {
        k: weighted_kappa(
            tally.levels_a[k],
            tally.levels_b[k],
            sorted(EMPATHY_RUBRIC.indicator(k).levels),
            "quadratic",
        )
        for k in _KEYS
    }
    order_a = _order(tally.groups, tally.epmq_a)
    order_b = _order(tally.groups, tally.epmq_b)
    common = [g for g in order_a if g in order_b]
    tau = kendall(
        [float(order_a.index(g)) for g in common], [float(order_b.index(g)) for g in common]
    )
    return AgreementResult(
        label=label,
        rater_a=judge_a.name,
        rater_b=judge_b.name,
        dialogues=tally.names,
        points=tally.points,
        failed=tally.failed,
        kappa=kappa,
        kappa_weights="quadratic",
        sign_agreement=sign_agreement(tally.dE_a, tally.dE_b),
        epmq_spearman=spearman(tally.epmq_a, tally.epmq_b),
        epmq_a=tally.epmq_a,
        epmq_b=tally.epmq_b,
        order_a=order_a,
        order_b=order_b,
        order_kendall=tau,
    )
