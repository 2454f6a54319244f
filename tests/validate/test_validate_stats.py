"""The study's statistics against scipy and direct formulas on fixed samples."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from empathos.validate.stats import (
    kendall,
    sign_agreement,
    signed_rank_pvalue,
    spearman,
    summarize_deltas,
    weighted_kappa,
)

A = [0, 1, 2, 2, 1, 0, 2, 1, 1, 0, 2, 2, 0, 1]
B = [0, 1, 1, 2, 2, 0, 2, 0, 1, 1, 2, 1, 0, 1]


def _kappa_loops(a: list[int], b: list[int], k: int, weight: str) -> float:
    """Textbook weighted kappa with explicit sums (1 - sum w*O / sum w*E)."""
    n = len(a)
    num = den = 0.0
    for i, j in itertools.product(range(k), repeat=2):
        if weight == "linear":
            w = abs(i - j) / (k - 1)
        elif weight == "quadratic":
            w = ((i - j) / (k - 1)) ** 2
        else:
            w = float(i != j)
        o = sum(1 for x, y in zip(a, b, strict=True) if x == i and y == j) / n
        e = (a.count(i) / n) * (b.count(j) / n)
        num += w * o
        den += w * e
    return 1.0 - num / den


@pytest.mark.parametrize("weight", ["linear", "quadratic", "none"])
def test_weighted_kappa_matches_the_textbook_sums(weight: str) -> None:
    got = weighted_kappa(A, B, [0, 1, 2], weight)  # type: ignore[arg-type]
    assert got == pytest.approx(_kappa_loops(A, B, 3, weight))


def test_quadratic_kappa_equals_its_moment_form() -> None:
    """For equally spaced integer levels, quadratic kappa = 2 cov / (var a + var b + (ma-mb)^2)
    with population moments: an identity independent of the contingency-table code."""
    a, b = np.asarray(A, float), np.asarray(B, float)
    cov = float(np.mean((a - a.mean()) * (b - b.mean())))
    expected = 2 * cov / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    assert weighted_kappa(A, B, [0, 1, 2], "quadratic") == pytest.approx(expected)


def test_kappa_hand_computed_and_edge_cases() -> None:
    # p_o = 0.75, p_e = 0.5 * 0.25 + 0.5 * 0.75 = 0.5 -> kappa = 0.5
    assert weighted_kappa([1, 1, 0, 0], [1, 0, 0, 0], [0, 1], "none") == pytest.approx(0.5)
    assert weighted_kappa(A, A, [0, 1, 2]) == pytest.approx(1.0)
    assert np.isnan(weighted_kappa([1, 1], [1, 1], [0, 1, 2]))  # no disagreement mass
    # An unused level still counts in the weights: negative levels in their own order.
    assert weighted_kappa([0, -1, -2], [0, -1, -2], [-2, -1, 0]) == pytest.approx(1.0)


def test_signed_rank_matches_scipy_and_the_exact_distribution() -> None:
    d = [-1.3, -0.4, 0.9, -2.2, -0.7, -1.1, 0.2, -3.0, -0.05, -1.8]
    assert signed_rank_pvalue(d) == pytest.approx(float(sps.wilcoxon(d).pvalue))
    # All five positive: exact two-sided p = 2 / 2^5.
    assert signed_rank_pvalue([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(2 / 32)
    # Zeros are dropped before ranking (Wilcoxon's convention).
    assert signed_rank_pvalue([0.0, 0.0, *d]) == pytest.approx(signed_rank_pvalue(d))
    assert signed_rank_pvalue([0.0, 0.0]) == 1.0


def test_summary_numbers_are_the_direct_ones() -> None:
    d = np.asarray([-1.0, -2.0, 0.0, 0.5, -1.5, 0.0, -3.0, -0.5])
    s = summarize_deltas(d, [f"s{i}" for i in range(d.size)], resamples=500, seed=1)
    assert s.n == 8
    assert s.mean == pytest.approx(d.mean())
    assert s.median == pytest.approx(np.median(d))
    assert s.pr_negative == pytest.approx(5 / 8)
    assert s.pr_positive == pytest.approx(1 / 8)
    assert s.tie_rate == pytest.approx(2 / 8)
    assert s.ci_low < s.mean < s.ci_high
    assert s.p_value == pytest.approx(float(sps.wilcoxon(d[d != 0]).pvalue))


def test_bootstrap_interval_agrees_with_scipy_percentile_bootstrap() -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(-1.0, 2.0, size=60)
    ours = summarize_deltas(d, [str(i) for i in range(60)], resamples=4000, seed=3)
    ref = sps.bootstrap(
        (d,), np.mean, method="percentile", n_resamples=4000, rng=np.random.default_rng(3)
    ).confidence_interval
    se = d.std() / np.sqrt(d.size)
    assert ours.ci_low == pytest.approx(ref.low, abs=0.15 * se * 4)
    assert ours.ci_high == pytest.approx(ref.high, abs=0.15 * se * 4)


def test_interval_resamples_scenarios_not_pairs() -> None:
    """Pairs of one scenario move together: with two scenarios of identical pairs, the
    interval only has the two scenario means (and their mix) to draw from."""
    d = [-2.0] * 5 + [0.0] * 5
    s = summarize_deltas(d, ["a"] * 5 + ["b"] * 5, resamples=2000, seed=0)
    assert s.ci_low == pytest.approx(-2.0)
    assert s.ci_high == pytest.approx(0.0)


def test_rank_correlations_and_sign_agreement() -> None:
    x = [0.3, 0.1, 0.9, 0.4, 0.6]
    y = [0.2, 0.0, 0.7, 0.5, 0.8]
    assert spearman(x, y) == pytest.approx(float(sps.spearmanr(x, y).statistic))
    assert kendall(x, y) == pytest.approx(float(sps.kendalltau(x, y).statistic))
    assert np.isnan(spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))
    assert sign_agreement([1.0, -1.0, 0.0, 2.0], [3.0, 1.0, 0.0, -1.0]) == pytest.approx(0.5)
