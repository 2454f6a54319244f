"""Statistics for leaderboards and comparisons: pure functions over arrays (no I/O).

- :func:`cluster_bootstrap_weights`: how often each dialogue is drawn in each bootstrap
  resample, resampling scenarios with replacement and then, within each drawn scenario, its
  trials with replacement (a two-stage bootstrap; with one trial per scenario it is the
  ordinary bootstrap over scenarios).
- :func:`bootstrap_means`: percentile 95% intervals of several per-dialogue means at once,
  from one set of weights; :func:`bootstrap_ratio` for a ratio of sums (turns to success).
- :func:`paired_summary`: wins, losses and ties per scenario, the mean paired difference with
  its paired bootstrap interval, and a sign-flip permutation p-value (via
  ``scipy.stats.permutation_test``, exact when the scenarios are few).

Weights make every statistic a matrix product: a resampled mean is ``W @ x / W.sum(1)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

__all__ = [
    "PairedSummary",
    "bootstrap_means",
    "bootstrap_ratio",
    "cluster_bootstrap_weights",
    "cluster_index",
    "paired_summary",
    "permutation_pvalue",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

DEFAULT_RESAMPLES = 2000
LEVEL = 0.95


def cluster_index(labels: Sequence[str]) -> I64:
    """Integer cluster ids (0..k-1, in order of first appearance) of ``labels``."""
    seen: dict[str, int] = {}
    return np.asarray([seen.setdefault(x, len(seen)) for x in labels], dtype=np.int64)


def cluster_bootstrap_weights(
    clusters: I64, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> I64:
    """Counts ``W`` of shape (resamples, n): how often dialogue j is drawn in resample b.

    ``clusters`` (n,) gives each dialogue's scenario id (0..k-1, every id present). Stage 1
    draws k scenarios with replacement: ``rng.integers(0, k, (resamples, k))``. Stage 2, only
    when some scenario has several trials, draws for each drawn scenario as many trials as it
    has, with replacement: ``u = rng.random((resamples, k, m_max))`` and trial
    ``floor(u * m)`` of that scenario (slots beyond its m unused). Deterministic in ``seed``.
    """
    c = np.asarray(clusters, dtype=np.int64)
    n = c.size
    if n == 0:
        return np.zeros((resamples, 0), dtype=np.int64)
    k = int(c.max()) + 1
    order = np.argsort(c, kind="stable")  # dialogues grouped by scenario
    sizes = np.bincount(c, minlength=k)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, k, size=(resamples, k))
    rows = np.repeat(np.arange(resamples), k)
    weights = np.zeros((resamples, n), dtype=np.int64)
    if int(sizes.max()) == 1:
        np.add.at(weights, (rows, order[starts[drawn.ravel()]]), 1)
        return weights
    m_max = int(sizes.max())
    u = rng.random((resamples, k, m_max))
    m = sizes[drawn]  # (resamples, k)
    pick = np.floor(u * m[:, :, None]).astype(np.int64)
    valid = np.arange(m_max)[None, None, :] < m[:, :, None]
    pos = starts[drawn][:, :, None] + pick
    rr = np.broadcast_to(np.arange(resamples)[:, None, None], pos.shape)
    np.add.at(weights, (rr[valid], order[pos[valid]]), 1)
    return weights


def _percentiles(samples: F64) -> F64:
    tail = (1.0 - LEVEL) / 2.0 * 100.0
    return np.asarray(np.nanpercentile(samples, [tail, 100.0 - tail], axis=0), dtype=np.float64)


def bootstrap_means(values: F64, weights: I64) -> F64:
    """Percentile 95% intervals of column means: ``values`` (n, c) -> (2, c) [low; high].

    NaN entries are left out of their column's mean (a dialogue with no value there); a
    resample that draws no value of a column is skipped for that column. Columns with fewer
    than two values get NaN bounds.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    present = ~np.isnan(v)
    w = weights.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (w @ np.where(present, v, 0.0)) / (w @ present.astype(np.float64))
    out = _percentiles(means)
    out[:, present.sum(axis=0) < 2] = np.nan
    return out


def bootstrap_ratio(num: F64, den: F64, weights: I64) -> tuple[float, float] | None:
    """95% interval of ``sum(num) / sum(den)`` under the bootstrap (None if den has < 2
    nonzero entries). Turns to success: num = turn x success, den = success."""
    if int(np.count_nonzero(den)) < 2:
        return None
    w = weights.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = (w @ np.asarray(num, np.float64)) / (w @ np.asarray(den, np.float64))
    lo, hi = _percentiles(ratio)
    return float(lo), float(hi)


def permutation_pvalue(
    sum_a: F64, sum_b: F64, n_pairs: int, *, resamples: int = 9999, seed: int = 0
) -> float:
    """Two-sided p-value of a paired sign-flip test with scenarios as the exchangeable units.

    ``sum_a``/``sum_b`` (k,) hold, per scenario, the sums of A's and B's values over the
    pairs of that scenario; the statistic is ``(sum(sum_a) - sum(sum_b)) / n_pairs``, the
    mean paired difference. Under the null hypothesis A and B are exchangeable within a
    scenario, so each scenario's difference may flip sign. Exact over all 2^k flips when
    2^k <= ``resamples``, else Monte Carlo (``scipy.stats.permutation_test``).
    """
    a = np.asarray(sum_a, dtype=np.float64)
    b = np.asarray(sum_b, dtype=np.float64)
    if a.size == 0:
        return float("nan")
    if np.allclose(a, b, rtol=0.0, atol=1e-12):
        return 1.0

    def statistic(x: F64, y: F64, axis: int) -> F64:
        return np.asarray((x.sum(axis=axis) - y.sum(axis=axis)) / n_pairs, dtype=np.float64)

    res = sps.permutation_test(
        (a, b),
        statistic,
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=resamples,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return float(res.pvalue)


@dataclass(frozen=True, slots=True)
class PairedSummary:
    """A paired comparison of A and B over shared scenarios (and trials)."""

    scenarios: int
    pairs: int
    wins: int
    losses: int
    ties: int
    mean_a: float
    mean_b: float
    mean_diff: float
    ci: tuple[float, float] | None
    p_value: float


def paired_summary(
    a: F64,
    b: F64,
    clusters: I64,
    *,
    tie_tol: float = 1e-9,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PairedSummary:
    """Compare paired values ``a``, ``b`` (n,) of n (scenario, trial) pairs.

    Wins, losses and ties compare the per-scenario means of A and B (a tie: |difference| <=
    ``tie_tol``). The mean paired difference is the mean of ``a - b`` over the pairs, its 95%
    interval a two-stage bootstrap over scenarios and trials (:func:`cluster_bootstrap_weights`),
    and the p-value a sign-flip permutation test over scenarios (:func:`permutation_pvalue`).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(clusters, dtype=np.int64)
    n = a.size
    if n == 0:
        nan = float("nan")
        return PairedSummary(0, 0, 0, 0, 0, nan, nan, nan, None, nan)
    k = int(c.max()) + 1
    counts = np.bincount(c, minlength=k).astype(np.float64)
    sum_a = np.bincount(c, weights=a, minlength=k).astype(np.float64)
    sum_b = np.bincount(c, weights=b, minlength=k).astype(np.float64)
    per = (sum_a - sum_b) / counts
    wins = int(np.sum(per > tie_tol))
    losses = int(np.sum(per < -tie_tol))
    ci: tuple[float, float] | None = None
    if k >= 2 or n >= 2:
        weights = cluster_bootstrap_weights(c, resamples=resamples, seed=seed)
        lo, hi = bootstrap_means((a - b)[:, None], weights)[:, 0]
        ci = (float(lo), float(hi))
    return PairedSummary(
        scenarios=k,
        pairs=n,
        wins=wins,
        losses=losses,
        ties=k - wins - losses,
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        mean_diff=float((a - b).mean()),
        ci=ci,
        p_value=permutation_pvalue(sum_a, sum_b, n, seed=seed),
    )
