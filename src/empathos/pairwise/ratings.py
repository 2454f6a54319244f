"""Ratings from pairwise outcomes: Bradley-Terry, bootstrap over scenarios, style control.

Pure: outcomes in, arrays out. The Bradley-Terry model says model i beats model j with
probability ``sigmoid(s_i - s_j)``; an outcome is a fractional score in [0, 1] with a weight
(:mod:`~empathos.pairwise.outcomes`). With style control the model is ``sigmoid(s_i - s_j +
beta . x)``, ``x`` the pair's four style covariates (:mod:`~empathos.pairwise.style`), all
fitted at once. Both are :func:`~empathos.pairwise.btfit.solve`, one loss and one ridge, so
turning style control on moves the ratings only by what the covariates explain.

Strengths are centred (mean 0). Only strengths the data bound are shown: a model with no
comparison, or one separated from the anchor (it won, or lost, every comparison linking
them) is **not identified** (:func:`~empathos.pairwise.btfit.identification`), its rating
NaN. Intervals: 95% percentile bootstrap over scenarios (every pair of a scenario is drawn
together), of each model's strength relative to the anchor; a bound is open (infinite) when
more than 2.5% of the draws leave the model separated on that side. The Elo-like scale is
``anchor_rating + 400 / ln 10 * (s_i - s_anchor)``: 400 points is a factor of ten in the
odds, as in chess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from empathos.pairwise.btfit import ALPHA, default_anchor, identification, solve
from empathos.pairwise.outcomes import Outcome
from empathos.pairwise.style import STYLE, StyleKey, covariates

__all__ = [
    "ALPHA",
    "ELO_SCALE",
    "Fit",
    "Ratings",
    "arrays_of",
    "bounded",
    "bounds",
    "by_scenario_of",
    "elo",
    "fit",
    "pair_counts",
    "rate",
    "status_note",
    "win_matrix",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
ELO_SCALE = 400.0 / math.log(10.0)
Style = Mapping[StyleKey, Sequence[float]]


@dataclass(frozen=True, slots=True)
class Fit:
    """Centred strengths (M,) in ``models`` order; ``coefs``: the style coefficients in
    :data:`~empathos.pairwise.style.STYLE` order (None: no style control)."""

    strengths: F64
    coefs: F64 | None = None

    @property
    def length_coef(self) -> float | None:
        """The length covariate's coefficient (None: no style control)."""
        return None if self.coefs is None else float(self.coefs[0])


@dataclass(frozen=True, slots=True)
class Ratings:
    """The ratings of M models: centred strengths (M,) and their 95% bootstrap bounds (NaN /
    infinite where not identified), the same on the Elo-like scale (relative to the anchor), the
    identification per model (0 identified, +1 / -1 separated above / below, NaN unlinked),
    the style coefficients with their bounds, the win matrix (M, M; fractional, weighted),
    the games per model pair (M, M; weighted) and the pairs per model pair (M, M)."""

    models: tuple[str, ...]
    strengths: F64
    lower: F64
    upper: F64
    elo: F64
    elo_lower: F64
    elo_upper: F64
    anchor: str
    anchor_rating: float
    coefs: F64 | None
    coef_bounds: tuple[F64, F64] | None
    wins: F64
    counts: F64
    n_boot: int
    status: F64
    pairs: F64

    @property
    def length_coef(self) -> float | None:
        """The length covariate's coefficient (None: no style control)."""
        return None if self.coefs is None else float(self.coefs[0])

    @property
    def length_interval(self) -> tuple[float, float] | None:
        """Its 95% bootstrap interval."""
        if self.coef_bounds is None:
            return None
        return float(self.coef_bounds[0][0]), float(self.coef_bounds[1][0])


def win_matrix(outcomes: Sequence[Outcome], models: Sequence[str]) -> tuple[F64, F64]:
    """``wins[i, j]``: what model i scored against model j (score x weight summed);
    ``counts[i, j]``: the weight of their pairs (symmetric)."""
    pos = {m: i for i, m in enumerate(models)}
    wins = np.zeros((len(models), len(models)))
    for o in outcomes:
        i, j = pos[o.a], pos[o.b]
        wins[i, j] += o.weight * o.score
        wins[j, i] += o.weight * (1.0 - o.score)
    return wins, wins + wins.T


def pair_counts(outcomes: Sequence[Outcome], models: Sequence[str]) -> F64:
    """``n[i, j]``: the pairs (outcomes) between models i and j."""
    pos = {m: i for i, m in enumerate(models)}
    n = np.zeros((len(models), len(models)))
    for o in outcomes:
        n[pos[o.a], pos[o.b]] += 1
        n[pos[o.b], pos[o.a]] += 1
    return n


def arrays_of(outcomes: Sequence[Outcome], models: Sequence[str]) -> tuple[I64, I64, F64, F64]:
    """The outcomes as arrays: index of a, index of b, score, weight."""
    pos = {m: i for i, m in enumerate(models)}
    ia = np.array([pos[o.a] for o in outcomes], dtype=np.int64)
    ib = np.array([pos[o.b] for o in outcomes], dtype=np.int64)
    y = np.array([o.score for o in outcomes], dtype=np.float64)
    w = np.array([o.weight for o in outcomes], dtype=np.float64)
    return ia, ib, y, w


def _x(outcomes: Sequence[Outcome], style: Style | None) -> F64 | None:
    if style is None:
        return None
    keys = [((o.scenario_id, o.trial, o.a), (o.scenario_id, o.trial, o.b)) for o in outcomes]
    return covariates(keys, style)


def fit(outcomes: Sequence[Outcome], models: Sequence[str], style: Style | None = None) -> Fit:
    """Strengths of ``models`` from ``outcomes``; with ``style`` ((scenario, trial, model)
    -> the dialogue's style counts as the judge saw it), the style-controlled fit and its
    coefficients."""
    s, c = solve(*arrays_of(outcomes, models), len(models), _x(outcomes, style))
    return Fit(s, c if style is not None else None)


def bounded(outcomes: Sequence[Outcome], models: Sequence[str]) -> F64:
    """The fitted strengths with those the data do not bound replaced: one logit above the
    highest bounded one when separated above, below the lowest when below, the mean when
    unlinked (what selection needs: a finite guess, not the ridge's far-off value)."""
    s = fit(outcomes, models).strengths
    wins, _ = win_matrix(outcomes, models)
    st = identification(wins, default_anchor(wins, models))
    ok = s[st == 0.0]
    out: F64 = np.where(st == 1.0, ok.max() + 1.0, np.where(st == -1.0, ok.min() - 1.0, s))
    out[np.isnan(st)] = float(ok.mean())
    return out


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


def bounds(draws: F64) -> tuple[F64, F64]:
    """95% percentile bounds per column of ``draws`` (n, M), whose entries may be +-inf
    (separated on that side) or NaN (unlinked): a bound is infinite when more than 2.5% of
    the draws lie beyond it (the lower bound takes the nearest draw at or below the 2.5th
    percentile, the upper at or above the 97.5th, so no bound is interpolated from an
    infinite draw)."""
    lo = np.empty(draws.shape[1])
    hi = np.empty(draws.shape[1])
    for i in range(draws.shape[1]):
        col = draws[:, i]
        unlinked = np.isnan(col)
        known = col[~unlinked]
        if unlinked.mean() > 0.025 or not len(known):
            lo[i], hi[i] = -np.inf, np.inf
            continue
        lo[i] = np.percentile(known, 2.5, method="lower")
        hi[i] = np.percentile(known, 97.5, method="higher")
    return lo, hi


def status_note(status: float, wins: F64, counts: F64, i: int) -> str | None:
    """Why model i is not identified (None: it is)."""
    if status == 0.0:
        return None
    if counts[i].sum() == 0:
        return "no comparisons"
    if wins[:, i].sum() == 0:
        return "won every comparison"
    if wins[i].sum() == 0:
        return "lost every comparison"
    if status == 1.0:
        return "separated above the anchor"
    return "separated below the anchor" if status == -1.0 else "not linked to the anchor"


def _relative(s: F64, st: F64, a: int) -> F64:
    """Strengths relative to the anchor, +-inf / NaN where not identified."""
    rel: F64 = s - s[a]
    rel[st == 1.0] = np.inf
    rel[st == -1.0] = -np.inf
    rel[np.isnan(st)] = np.nan
    return rel


def _centred(rel: F64, identified: npt.NDArray[np.bool_]) -> F64:
    """Draws of strengths relative to the anchor, each centred over the finite strengths of
    the models the full data identify (the scale of :attr:`Ratings.strengths`)."""
    out = rel.copy()
    for row in out:
        ok = identified & np.isfinite(row)
        row -= row[ok].mean() if ok.any() else 0.0
    return out


def rate(
    outcomes: Sequence[Outcome],
    models: Sequence[str],
    *,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    style: Style | None = None,
    n_boot: int = 200,
    seed: int = 0,
) -> Ratings:
    """Ratings of ``models`` with 95% bootstrap intervals over scenarios; the Elo-like scale
    anchored on ``anchor`` (None: the first by name of the largest identified group)."""
    models = tuple(models)
    m = len(models)
    ia, ib, y, w = arrays_of(outcomes, models)
    x = _x(outcomes, style)
    point, coefs = solve(ia, ib, y, w, m, x)
    wins, counts = win_matrix(outcomes, models)
    a = models.index(anchor) if anchor is not None else default_anchor(wins, models)
    status = identification(wins, a)
    scenarios, by_scenario = by_scenario_of(outcomes)
    where: dict[str, list[int]] = {s: [] for s in scenarios}
    for n, o in enumerate(outcomes):
        where[o.scenario_id].append(n)
    groups = [np.array(where[s], dtype=np.int64) for s in scenarios]
    per: F64 = np.stack([win_matrix(by_scenario[s], models)[0] for s in scenarios])
    rng = np.random.default_rng(seed)
    rel = np.empty((n_boot, m))
    cs = np.full((n_boot, len(STYLE)), np.nan)
    for k in range(n_boot):
        drawn = rng.integers(0, len(scenarios), len(scenarios))
        idx = np.concatenate([groups[d] for d in drawn])
        s, c = solve(ia[idx], ib[idx], y[idx], w[idx], m, None if x is None else x[idx])
        rel[k] = _relative(s, identification(np.sum(per[drawn], axis=0), a), a)
        if x is not None:
            cs[k] = c
    lo, hi = bounds(rel)
    s_lo, s_hi = bounds(_centred(rel, status == 0.0))
    shown = np.where(status == 0.0, point, np.nan)
    elos = np.where(status == 0.0, elo(point, a, anchor_rating), np.nan)
    coef_bounds = None
    if x is not None:
        c_lo, c_hi = np.percentile(cs, [2.5, 97.5], axis=0)
        coef_bounds = (c_lo, c_hi)
    return Ratings(
        models, shown, s_lo, s_hi, elos, anchor_rating + ELO_SCALE * lo,
        anchor_rating + ELO_SCALE * hi, models[a], anchor_rating,
        coefs if x is not None else None, coef_bounds, wins, counts, n_boot, status,
        pair_counts(outcomes, models),
    )  # fmt: skip
