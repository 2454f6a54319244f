"""Bradley-Terry with fixed opponents: new models placed on a leaderboard's scale.

Pure. The leaderboard's models keep their published ratings; only the new models' strengths
are fitted, by maximum likelihood of ``sigmoid(s_i - s_j)`` over the outcomes (both orders
combined, a tie half), with a small ridge (``alpha``) that pulls a free strength towards
the median of the fixed ones, so a model that never lost stays finite. A rating ``r`` on
the leaderboard's scale is the strength ``r * scale``; the default scale reads EQ-Bench 3's
numbers as its TrueSkill environment does (beta = 350/6: ``P(i beats j) = Phi((r_i -
r_j) / (sqrt 2 * beta))``, and ``Phi(x)`` is close to ``sigmoid(1.702 x)``). Intervals:
percentile bootstrap over scenarios, the fixed ratings held (a fixed model's interval is the
leaderboard's own, when it publishes one).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

from empathos.pairwise.outcomes import Outcome
from empathos.pairwise.ratings import ALPHA, Ratings, by_scenario_of, win_matrix

__all__ = ["BOARD_SCALE", "fit_anchored", "rate_anchored"]

F64 = npt.NDArray[np.float64]
#: Logit per leaderboard point: 1.702 / (sqrt 2 * 350 / 6).
BOARD_SCALE = 1.702 / (math.sqrt(2.0) * 350.0 / 6.0)


def fit_anchored(
    outcomes: Sequence[Outcome],
    models: Sequence[str],
    fixed: Mapping[str, float],
    alpha: float = ALPHA,
) -> F64:
    """Strengths of ``models`` in ``models`` order: the ``fixed`` ones as given, the others
    fitted (see the module docstring)."""
    pos = {m: i for i, m in enumerate(models)}
    free = [m for m in models if m not in fixed]
    s = np.array([fixed.get(m, 0.0) for m in models], dtype=np.float64)
    center = float(np.median(list(fixed.values()))) if fixed else 0.0
    if not free:
        return s
    idx = np.array([pos[m] for m in free], dtype=np.int64)
    s[idx] = center
    used = [o for o in outcomes if o.a in pos and o.b in pos]
    ia = np.array([pos[o.a] for o in used], dtype=np.int64)
    ib = np.array([pos[o.b] for o in used], dtype=np.int64)
    y = np.array([o.score for o in used], dtype=np.float64)

    def loss(theta: F64) -> tuple[float, F64]:
        full = s.copy()
        full[idx] = theta
        z = full[ia] - full[ib]
        p = 1.0 / (1.0 + np.exp(-z))
        nll = -np.sum(y * np.log(p + 1e-300) + (1.0 - y) * np.log(1.0 - p + 1e-300))
        r = p - y
        grad = np.zeros(len(models))
        np.add.at(grad, ia, r)
        np.add.at(grad, ib, -r)
        g = grad[idx] + 2.0 * alpha * (theta - center)
        return float(nll + alpha * np.sum((theta - center) ** 2)), g

    res = minimize(loss, np.full(len(free), center), jac=True, method="L-BFGS-B")
    s[idx] = res.x
    return s


def rate_anchored(
    outcomes: Sequence[Outcome],
    models: Sequence[str],
    board: Mapping[str, tuple[float, tuple[float, float] | None]],
    *,
    scale: float = BOARD_SCALE,
    n_boot: int = 200,
    seed: int = 0,
) -> Ratings:
    """Ratings of ``models`` on the leaderboard's scale: ``board`` maps a leaderboard model
    to its rating and published interval (None: none); the others are fitted."""
    models = tuple(models)
    fixed = {m: r * scale for m, (r, _) in board.items() if m in models}
    point = fit_anchored(outcomes, models, fixed)
    scenarios, by_scenario = by_scenario_of(outcomes)
    rng = np.random.default_rng(seed)
    boots = np.empty((n_boot, len(models)))
    for k in range(n_boot):
        drawn = rng.integers(0, len(scenarios), len(scenarios))
        sample = [o for d in drawn for o in by_scenario[scenarios[d]]]
        boots[k] = fit_anchored(sample, models, fixed)
    lo, hi = np.percentile(boots, [2.5, 97.5], axis=0)
    elo, elo_lo, elo_hi = point / scale, lo / scale, hi / scale
    for i, m in enumerate(models):
        if m in board:
            rating, ci = board[m]
            elo[i] = rating
            elo_lo[i], elo_hi[i] = ci if ci is not None else (rating, rating)
    wins, counts = win_matrix(outcomes, models)
    return Ratings(
        models, point, lo, hi, elo, elo_lo, elo_hi, "leaderboard", float("nan"), None, None,
        wins, counts, n_boot,
    )  # fmt: skip
