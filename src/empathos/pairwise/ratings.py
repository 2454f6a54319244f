"""Ratings from pairwise outcomes: Bradley-Terry, bootstrap over scenarios, length control.

Pure: outcomes in, arrays out. The Bradley-Terry model says model i beats model j with
probability ``sigmoid(s_i - s_j)``. Without a covariate the strengths are ``choix``'s
maximum-likelihood estimate on the win matrix (a tie counts half a win to each side; a
pair's margin does not weigh it: judges' margins are not on a calibrated scale, so they are
reported, not fitted). With the length covariate (style control, as Arena-Hard fits it) the
model is ``sigmoid(s_i - s_j + beta * x)`` with ``x = log(len_i / len_j)``, the log ratio
of the two dialogues' reply lengths; ``choix`` has no covariates, so this one is fitted by
maximum likelihood with scipy; ``beta`` > 0 means the judge favours the longer dialogue.
Both add a small ridge (``alpha``) that keeps a model that never lost finite.

Strengths are centred (mean 0). Intervals: percentile bootstrap over scenarios (every pair
of a scenario is drawn together, so a scenario's trials and matchups stay correlated as
they are). The Elo-like scale is ``anchor_rating + 400 / ln 10 * (s_i - s_anchor)``: 400
points is a factor of ten in the odds, as in chess.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import choix
import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

from empathos.pairwise.outcomes import Outcome

__all__ = [
    "ELO_SCALE",
    "Fit",
    "Ratings",
    "by_scenario_of",
    "elo",
    "fit",
    "rate",
    "win_matrix",
]

F64 = npt.NDArray[np.float64]
ELO_SCALE = 400.0 / math.log(10.0)
ALPHA = 0.01


@dataclass(frozen=True, slots=True)
class Fit:
    """Centred strengths (M,) in ``models`` order; ``length_coef`` None: no covariate."""

    strengths: F64
    length_coef: float | None


@dataclass(frozen=True, slots=True)
class Ratings:
    """The ratings of M models: strengths (M,), their 95% bootstrap bounds (M,) each, the
    same on the Elo-like scale, the length coefficient with its bounds, the win matrix
    (M, M; ties half) and the comparisons per model pair (M, M)."""

    models: tuple[str, ...]
    strengths: F64
    lower: F64
    upper: F64
    elo: F64
    elo_lower: F64
    elo_upper: F64
    anchor: str
    anchor_rating: float
    length_coef: float | None
    length_interval: tuple[float, float] | None
    wins: F64
    counts: F64
    n_boot: int


def win_matrix(outcomes: Sequence[Outcome], models: Sequence[str]) -> tuple[F64, F64]:
    """``wins[i, j]``: pairs model i won against model j (a tie half each); ``counts[i, j]``:
    pairs between them (symmetric)."""
    pos = {m: i for i, m in enumerate(models)}
    wins = np.zeros((len(models), len(models)))
    for o in outcomes:
        i, j = pos[o.a], pos[o.b]
        wins[i, j] += o.score
        wins[j, i] += 1.0 - o.score
    return wins, wins + wins.T


def _bt(wins: F64, alpha: float) -> F64:
    """choix's ML strengths of a win matrix, centred."""
    s = np.asarray(choix.ilsr_pairwise_dense(wins, alpha=alpha, max_iter=1000), dtype=np.float64)
    out: F64 = s - s.mean()
    return out


def _bt_length(outcomes: Sequence[Outcome], models: Sequence[str], x: F64, alpha: float) -> Fit:
    """ML fit of ``sigmoid(s_a - s_b + beta * x)`` with a ridge ``alpha`` on the strengths."""
    pos = {m: i for i, m in enumerate(models)}
    ia = np.array([pos[o.a] for o in outcomes], dtype=np.int64)
    ib = np.array([pos[o.b] for o in outcomes], dtype=np.int64)
    y = np.array([o.score for o in outcomes])
    m = len(models)

    def loss(theta: F64) -> tuple[float, F64]:
        s, beta = theta[:m], theta[m]
        z = s[ia] - s[ib] + beta * x
        p = 1.0 / (1.0 + np.exp(-z))
        nll = -np.sum(y * np.log(p + 1e-300) + (1.0 - y) * np.log(1.0 - p + 1e-300))
        r = p - y  # d nll / dz
        grad = np.zeros(m + 1)
        np.add.at(grad, ia, r)
        np.add.at(grad, ib, -r)
        grad[m] = float(np.sum(r * x))
        grad[:m] += 2.0 * alpha * s
        return float(nll + alpha * np.sum(s * s)), grad

    res = minimize(loss, np.zeros(m + 1), jac=True, method="L-BFGS-B")
    s = np.asarray(res.x[:m], dtype=np.float64)
    return Fit(s - s.mean(), float(res.x[m]))


def fit(
    outcomes: Sequence[Outcome],
    models: Sequence[str],
    lengths: dict[tuple[str, int, str], float] | None = None,
    alpha: float = ALPHA,
) -> Fit:
    """Strengths of ``models`` from ``outcomes``; with ``lengths`` ((scenario, trial, model)
    -> the dialogue's reply length), the length-controlled fit and its coefficient."""
    if lengths is None:
        return Fit(_bt(win_matrix(outcomes, models)[0], alpha), None)
    x = np.array(
        [
            math.log(
                max(lengths[(o.scenario_id, o.trial, o.a)], 1.0)
                / max(lengths[(o.scenario_id, o.trial, o.b)], 1.0)
            )
            for o in outcomes
        ]
    )
    return _bt_length(outcomes, models, x, alpha)


def elo(strengths: F64, anchor: int, anchor_rating: float = 1000.0) -> F64:
    """Strengths on the Elo-like scale, model ``anchor`` at ``anchor_rating``."""
    out: F64 = anchor_rating + ELO_SCALE * (strengths - strengths[anchor])
    return out


def by_scenario_of(outcomes: Sequence[Outcome]) -> tuple[list[str], dict[str, list[Outcome]]]:
    """The scenarios in order, and the outcomes of each: what a bootstrap draws."""
    scenarios = sorted({o.scenario_id for o in outcomes})
    by_scenario: dict[str, list[Outcome]] = {s: [] for s in scenarios}
    for o in outcomes:
        by_scenario[o.scenario_id].append(o)
    return scenarios, by_scenario


def _boot(
    outcomes: Sequence[Outcome],
    models: Sequence[str],
    lengths: dict[tuple[str, int, str], float] | None,
    n_boot: int,
    seed: int,
) -> tuple[F64, F64]:
    """(n_boot, M) strengths and (n_boot,) length coefficients (NaN: none), each fitted on
    the outcomes of scenarios drawn with replacement."""
    scenarios, by_scenario = by_scenario_of(outcomes)
    rng = np.random.default_rng(seed)
    strengths = np.empty((n_boot, len(models)))
    coefs = np.full(n_boot, np.nan)
    if lengths is None:  # win matrices per scenario, summed per draw
        per = np.stack([win_matrix(by_scenario[s], models)[0] for s in scenarios])
        for k in range(n_boot):
            drawn = rng.integers(0, len(scenarios), len(scenarios))
            strengths[k] = _bt(per[drawn].sum(axis=0), ALPHA)
        return strengths, coefs
    for k in range(n_boot):
        drawn = rng.integers(0, len(scenarios), len(scenarios))
        sample = [o for d in drawn for o in by_scenario[scenarios[d]]]
        f = fit(sample, models, lengths)
        strengths[k] = f.strengths
        if f.length_coef is not None:
            coefs[k] = f.length_coef
    return strengths, coefs


def rate(
    outcomes: Sequence[Outcome],
    models: Sequence[str],
    *,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    lengths: dict[tuple[str, int, str], float] | None = None,
    n_boot: int = 200,
    seed: int = 0,
) -> Ratings:
    """Ratings of ``models`` with 95% bootstrap intervals over scenarios; the Elo-like scale
    anchored on ``anchor`` (None: the first model)."""
    models = tuple(models)
    point = fit(outcomes, models, lengths)
    a = models.index(anchor) if anchor is not None else 0
    boots, coefs = _boot(outcomes, models, lengths, n_boot, seed)
    lo, hi = np.percentile(boots, [2.5, 97.5], axis=0)
    elos = np.array([elo(b, a, anchor_rating) for b in boots])
    elo_lo, elo_hi = np.percentile(elos, [2.5, 97.5], axis=0)
    interval = None
    if point.length_coef is not None:
        c_lo, c_hi = np.percentile(coefs, [2.5, 97.5])
        interval = (float(c_lo), float(c_hi))
    wins, counts = win_matrix(outcomes, models)
    return Ratings(
        models, point.strengths, lo, hi, elo(point.strengths, a, anchor_rating), elo_lo, elo_hi,
        models[a], anchor_rating, point.length_coef, interval, wins, counts, n_boot,
    )  # fmt: skip
