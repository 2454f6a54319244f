"""Bradley-Terry with fixed opponents: new models placed on a leaderboard's scale.

Pure. The leaderboard's models keep their published ratings ``r``; a rating is the strength
``k r``, and the conversion ``k`` (logit per leaderboard point) is **fitted from the
leaderboard's own judged orders** (:func:`board_scale`): the maximum-likelihood ``k`` of
``sigmoid(k (r_test - r_other))`` over them, an order scoring 1 for the side with more
plus signs, 0.5 for equal counts. Only the new models' strengths are then fitted, by the
one solver (:func:`~empathos.pairwise.btfit.solve`: the same loss and ridge as every fit,
the ridge pulling a free strength towards the median of the held ones). Intervals: 95%
percentile bootstrap that carries the leaderboard's uncertainty as well as ours: each draw
resamples our scenarios, resamples the leaderboard's orders by scenario and refits ``k``,
and draws every held rating from a normal with the leaderboard's own sigma (its published
interval / 3.92 when it gives no sigma). A new model that won or lost every comparison
with the board is not identified (NaN, open bound), as in plain Bradley-Terry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from empathos.pairwise.btfit import identification, solve
from empathos.pairwise.leaderboard import BoardComparison
from empathos.pairwise.outcomes import Outcome
from empathos.pairwise.ratings import (
    Ratings,
    arrays_of,
    bounds,
    by_scenario_of,
    pair_counts,
    win_matrix,
)
from empathos.pairwise.trueskill_rating import fraction, pair_plus

__all__ = [
    "BOARD_SCALE",
    "Held",
    "board_outcomes",
    "board_scale",
    "fit_anchored",
    "rate_anchored",
]

F64 = npt.NDArray[np.float64]
#: The conversion EQ-Bench 3's TrueSkill settings would imply (beta = 350/6, probit read as
#: logistic: 1.702 / (sqrt 2 x 350/6)); used only to pick opponents before a fit is possible.
BOARD_SCALE = 1.702 / (2.0**0.5 * 350.0 / 6.0)


@dataclass(frozen=True, slots=True)
class Held:
    """One leaderboard model as published: rating, its sigma and interval (None: none)."""

    rating: float
    sigma: float | None = None
    ci: tuple[float, float] | None = None

    @property
    def sd(self) -> float:
        """The rating's standard deviation: sigma, or the interval's width / 3.92, or 0."""
        if self.sigma is not None:
            return self.sigma
        return (self.ci[1] - self.ci[0]) / 3.92 if self.ci is not None else 0.0


def board_outcomes(comparisons: Sequence[BoardComparison]) -> list[Outcome]:
    """The leaderboard's judged orders as outcomes, by the benchmark's rule (the one our
    EQ-Bench 3 verdicts are read by, :mod:`~empathos.pairwise.eqbench_outcomes`): the plus
    signs of a pair's orders summed per model, the pair's score the benchmark's fraction,
    weight 1."""
    out = []
    for (a, b, scenario, iteration), plus in pair_plus(comparisons).items():
        trial = int(iteration) if iteration.isdigit() else 0
        score = fraction(*plus)
        out.append(Outcome(scenario, trial, a, b, "leaderboard", score, 0.0, 1.0, False))
    return out


def board_scale(board: Sequence[Outcome], ratings: Mapping[str, float]) -> float:
    """The maximum-likelihood logit per leaderboard point of ``board``'s outcomes (each
    between two models of ``ratings``); NaN when they cannot fix it: none, no spread in
    rating, or every outcome as the ratings order it (the likelihood grows without bound)."""
    used = [o for o in board if o.a in ratings and o.b in ratings]
    diff = np.array([[ratings[o.a] - ratings[o.b]] for o in used], dtype=np.float64)
    d = diff[:, 0]
    y = np.array([o.score for o in used])
    upset = np.any((d > 0) & (y < 1.0)) or np.any((d < 0) & (y > 0.0))
    if not np.any(d) or not upset:  # no spread, or every order as the ratings say: k -> inf
        return float("nan")
    ia = ib = np.zeros(len(used), np.int64)  # one strength, held at 0: only k is fitted
    w = np.array([o.weight for o in used])
    _, k = solve(ia, ib, y, w, 1, diff, fixed={0: 0.0})
    return float(k[0])


def fit_anchored(
    outcomes: Sequence[Outcome], models: Sequence[str], fixed: Mapping[str, float]
) -> F64:
    """Strengths of ``models`` in ``models`` order: the ``fixed`` ones as given, the others
    fitted (see the module docstring)."""
    pos = {m: i for i, m in enumerate(models)}
    used = [o for o in outcomes if o.a in pos and o.b in pos]
    held = {pos[m]: v for m, v in fixed.items() if m in pos}
    s, _ = solve(*arrays_of(used, models), len(models), fixed=held)
    return s


def _draw_k(
    board: Sequence[Outcome], ratings: Mapping[str, float], rng: np.random.Generator
) -> float:
    """The scale refitted on the leaderboard's orders resampled by scenario."""
    scenarios, by_scenario = by_scenario_of(board)
    drawn = rng.integers(0, len(scenarios), len(scenarios))
    return board_scale([o for d in drawn for o in by_scenario[scenarios[d]]], ratings)


def rate_anchored(
    outcomes: Sequence[Outcome],
    models: Sequence[str],
    board: Mapping[str, Held],
    board_outcomes: Sequence[Outcome],
    *,
    n_boot: int = 200,
    seed: int = 0,
) -> tuple[Ratings, float]:
    """Ratings of ``models`` on the leaderboard's scale, and the fitted scale: ``board``
    maps a leaderboard model to its published rating; the others are fitted."""
    models = tuple(models)
    ratings = {m: h.rating for m, h in board.items()}
    k = board_scale(board_outcomes, ratings)
    if not math.isfinite(k) or k <= 0:
        raise ValueError("the leaderboard's judged orders do not fix its scale")
    held = [m for m in models if m in board]
    tied = [models.index(m) for m in held]
    point = fit_anchored(outcomes, models, {m: k * board[m].rating for m in held})
    wins, counts = win_matrix(outcomes, models)
    status = identification(wins, tied[0], tied)
    scenarios, by_scenario = by_scenario_of(outcomes)
    rng = np.random.default_rng(seed)
    draws = np.empty((n_boot, len(models)))
    for n in range(n_boot):
        sample = [o for d in rng.integers(0, len(scenarios), len(scenarios))
                  for o in by_scenario[scenarios[d]]]  # fmt: skip
        kd = _draw_k(board_outcomes, ratings, rng)
        kd = kd if math.isfinite(kd) and kd > 0 else k
        r = {m: board[m].rating + board[m].sd * rng.standard_normal() for m in held}
        s = fit_anchored(sample, models, {m: kd * v for m, v in r.items()}) / kd
        st = identification(win_matrix(sample, models)[0], tied[0], tied)
        s[st == 1.0], s[st == -1.0], s[np.isnan(st)] = np.inf, -np.inf, np.nan
        draws[n] = s
    lo, hi = bounds(draws)
    elo = np.where(status == 0.0, point / k, np.nan)
    elo_lo, elo_hi = lo.copy(), hi.copy()
    for i, m in enumerate(models):
        if m in board:
            h = board[m]
            elo[i] = h.rating
            elo_lo[i], elo_hi[i] = (
                h.ci if h.ci is not None else (h.rating - 1.96 * h.sd, h.rating + 1.96 * h.sd)
            )
    shown = np.where(status == 0.0, point, np.nan)
    r_out = Ratings(
        models, shown, lo * k, hi * k, elo, elo_lo, elo_hi, "leaderboard", float("nan"),
        None, None, wins, counts, n_boot, status, pair_counts(outcomes, models),
    )  # fmt: skip
    return r_out, k
