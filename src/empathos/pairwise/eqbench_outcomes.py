"""EQ-Bench 3's plus-count rule as the outcomes of a Bradley-Terry fit (docs/pairwise.md,
"EQ-Bench 3's Elo pass").

The benchmark turns a pair's two judged orders into one fraction: the plus signs of both
orders summed per model (each order's counts recomputed from the judge's whole reply, an
analysis task's cut to 1-0 / 0-1 / 0-0), then ``m = min(difference / 30, 1) / 2 + 0.5`` for
the model with more, ``1 - m`` for the other, 0.5 when equal. Its TrueSkill plays that
fraction as games; here it is the pair's Bradley-Terry score, with weight 1. The code is
the TrueSkill path's own (:func:`~empathos.pairwise.trueskill_rating.comparisons_of`,
:func:`~empathos.pairwise.trueskill_rating.pair_plus`,
:func:`~empathos.pairwise.trueskill_rating.fraction`), so both ratings read the same
fractions.

A pair counts once both orders are judged, as under our judge's rule; a rerun of an order
replaces the earlier judgement. ``flipped`` and ``margin`` stay those of the aspect's
verdicts (:func:`~empathos.pairwise.outcomes.combine`), so the flip rate still says whether
the two orders picked different dialogues. For an aspect other than ``overall`` the plus
signs are that criterion's alone (the pick's margin).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from empathos.pairwise.eqbench_plus import downscale
from empathos.pairwise.leaderboard import BoardComparison
from empathos.pairwise.model import Judgement
from empathos.pairwise.outcomes import Outcome, combine
from empathos.pairwise.trueskill_rating import PairOf, comparisons_of, fraction, pair_plus

__all__ = ["PLUS_SCORING", "PlusRule", "plus_rule"]

#: How a pair scores under this rule, for the table and the report.
PLUS_SCORING = "a pair scores EQ-Bench 3's plus-count fraction of its two orders"


def _aspect_orders(
    judgements: Sequence[Judgement], judge: str, aspect: str
) -> list[BoardComparison]:
    """``judge``'s orders as plus counts: the whole reply's for ``overall`` (the
    benchmark's), else the ``aspect`` pick's margin for the side it picked."""
    if aspect == "overall":
        return comparisons_of(judgements, judge)
    out = []
    for j in judgements:
        v = j.verdict(aspect) if j.judge == judge else None
        if v is None:
            continue
        margin = float(v.margin)
        plus = downscale(j.scenario_id, *((margin, 0.0) if v.winner == "first" else (0.0, margin)))
        out.append(BoardComparison(j.scenario_id, str(j.trial), j.first, j.second, *plus))
    return out


def plus_rule(judgements: Sequence[Judgement], aspect: str = "overall") -> list[Outcome]:
    """One outcome per (pair, judge) with both orders judged, its score the benchmark's
    plus-count fraction for ``a`` (see the module docstring)."""
    paired = combine([v for j in judgements if (v := j.verdict(aspect)) is not None])
    sums: dict[tuple[str, PairOf], tuple[float, float]] = {}
    for judge in sorted({o.judge for o in paired}):
        latest = {
            (c.scenario_id, c.iteration, c.test, c.other): c
            for c in _aspect_orders(judgements, judge, aspect)
        }
        for key, summed in pair_plus(latest.values()).items():
            sums[judge, key] = summed
    out = []
    for o in paired:
        plus = sums.get((o.judge, (o.a, o.b, o.scenario_id, str(o.trial))))
        if plus is not None:
            out.append(replace(o, score=fraction(*plus), weight=1.0))
    return out


@dataclass(frozen=True, slots=True)
class PlusRule:
    """:func:`plus_rule` as an outcome rule for ``summarize``, with its ``scoring`` line."""

    scoring: str = PLUS_SCORING

    def __call__(self, judgements: Sequence[Judgement], aspect: str) -> list[Outcome]:
        return plus_rule(judgements, aspect)
