"""Statistics of the validation study: pure functions over arrays (no I/O).

- :func:`summarize_deltas`: the paper's row for one perturbation and one scorer: mean,
  median, Pr(d < 0), a 95% bootstrap interval of the mean (resampling scenarios, then their
  pairs, through :func:`empathos.scoring.stats.cluster_bootstrap_weights`), the tie rate and
  a two-sided Wilcoxon signed-rank p-value (``scipy.stats.wilcoxon``).
- :func:`weighted_kappa`: Cohen's kappa with linear or quadratic disagreement weights, over a
  fixed ordered set of categories.
- :func:`spearman`, :func:`kendall`: rank correlations (``scipy.stats``), NaN when undefined.
- :func:`sign_agreement`: how often two raters give the same sign (-, 0, +).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from empathos.scoring.stats import bootstrap_means, cluster_bootstrap_weights, cluster_index

__all__ = [
    "TIE_TOL",
    "DeltaSummary",
    "kendall",
    "sign_agreement",
    "signed_rank_pvalue",
    "spearman",
    "summarize_deltas",
    "weighted_kappa",
]

F64 = npt.NDArray[np.float64]

#: |d| at or below this counts as a tie (scores are sums of rubric scores, so exact ties are
#: common; the tolerance only absorbs floating-point noise).
TIE_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class DeltaSummary:
    """One row of the perturbation table: paired differences d = perturbed - original."""

    n: int
    mean: float
    median: float
    pr_negative: float
    pr_positive: float
    tie_rate: float
    ci_low: float
    ci_high: float
    p_value: float

    def as_dict(self) -> dict[str, float | int]:
        """Plain JSON-ready numbers (NaN stays NaN; the writer turns it into null)."""
        return asdict(self)


def signed_rank_pvalue(d: Sequence[float] | F64) -> float:
    """Two-sided Wilcoxon signed-rank p-value of ``d`` against 0 (zeros dropped, as Wilcoxon
    did); 1.0 when every difference is zero, NaN when ``d`` is empty."""
    arr = np.asarray(d, dtype=np.float64)
    if arr.size == 0:
        return float("nan")
    nonzero = arr[np.abs(arr) > TIE_TOL]
    if nonzero.size == 0:
        return 1.0
    res = sps.wilcoxon(nonzero, zero_method="wilcox", alternative="two-sided")
    return float(res.pvalue)


def summarize_deltas(
    d: Sequence[float] | F64,
    clusters: Sequence[str],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> DeltaSummary:
    """The table row of the paired differences ``d`` (n,), ``clusters`` their scenario ids.

    The interval resamples scenarios (then their pairs), because pairs of one scenario share
    a persona and are not independent; with one pair per scenario it is the plain bootstrap.
    """
    arr = np.asarray(d, dtype=np.float64)
    n = int(arr.size)
    nan = float("nan")
    if n == 0:
        return DeltaSummary(0, nan, nan, nan, nan, nan, nan, nan, nan)
    lo = hi = nan
    if n >= 2:
        weights = cluster_bootstrap_weights(
            cluster_index(list(clusters)), resamples=resamples, seed=seed
        )
        low, high = bootstrap_means(arr[:, None], weights)[:, 0]
        lo, hi = float(low), float(high)
    return DeltaSummary(
        n=n,
        mean=float(arr.mean()),
        median=float(np.median(arr)),
        pr_negative=float(np.mean(arr < -TIE_TOL)),
        pr_positive=float(np.mean(arr > TIE_TOL)),
        tie_rate=float(np.mean(np.abs(arr) <= TIE_TOL)),
        ci_low=lo,
        ci_high=hi,
        p_value=signed_rank_pvalue(arr),
    )


def weighted_kappa(
    a: Sequence[int],
    b: Sequence[int],
    categories: Sequence[int],
    weights: Literal["linear", "quadratic", "none"] = "quadratic",
) -> float:
    """Cohen's weighted kappa of two raters' ordinal ratings ``a``, ``b`` (same length).

    ``categories`` lists the possible levels in order (so a level nobody used still counts in
    the weights). Disagreement weights w_ij = |i-j|/(k-1) (linear), ((i-j)/(k-1))^2
    (quadratic) or 1 for i != j (none: Cohen's kappa). kappa = 1 - sum(w O) / sum(w E), O the
    observed joint proportions and E the product of the marginals. NaN when undefined (no
    ratings, or both raters constant on the same level, so E has no disagreement mass).
    """
    if len(a) != len(b):
        raise ValueError("the two raters must rate the same items")
    if not a:
        return float("nan")
    cats = list(categories)
    pos = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    observed = np.zeros((k, k), dtype=np.float64)
    for x, y in zip(a, b, strict=True):
        observed[pos[x], pos[y]] += 1.0
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    idx = np.arange(k, dtype=np.float64)
    diff = np.abs(idx[:, None] - idx[None, :])
    if weights == "none":
        w = (diff > 0).astype(np.float64)
    else:
        w = diff / max(k - 1, 1)
        if weights == "quadratic":
            w = w**2
    denom = float((w * expected).sum())
    if denom <= 0.0:
        return float("nan")
    return 1.0 - float((w * observed).sum()) / denom


def _rank_corr(kind: str, x: Sequence[float], y: Sequence[float]) -> float:
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    keep = ~(np.isnan(xa) | np.isnan(ya))
    xa, ya = xa[keep], ya[keep]
    if xa.size < 2 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return float("nan")
    res = sps.spearmanr(xa, ya) if kind == "spearman" else sps.kendalltau(xa, ya)
    value = float(res.statistic)
    return value if math.isfinite(value) else float("nan")


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho over the pairs where both are finite; NaN with < 2 pairs or a constant."""
    return _rank_corr("spearman", x, y)


def kendall(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b over the pairs where both are finite; NaN with < 2 pairs or a constant."""
    return _rank_corr("kendall", x, y)


def sign_agreement(x: Sequence[float], y: Sequence[float]) -> float:
    """Share of items where ``x`` and ``y`` have the same sign (-, 0 or +, ties within
    :data:`TIE_TOL`); NaN when empty."""
    if len(x) != len(y):
        raise ValueError("the two raters must rate the same items")
    if not x:
        return float("nan")

    def sign(v: float) -> int:
        return 0 if abs(v) <= TIE_TOL else (1 if v > 0 else -1)

    return float(np.mean([sign(p) == sign(q) for p, q in zip(x, y, strict=True)]))
