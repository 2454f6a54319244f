"""The bootstrap and the paired test against direct implementations on small fixed samples."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from empathos.scoring.stats import (
    bootstrap_means,
    cluster_bootstrap_weights,
    paired_summary,
    permutation_pvalue,
)

VALUES = np.asarray([3.0, 7.5, -1.0, 4.25, 10.0])


def _loop_two_stage(values: np.ndarray, clusters: np.ndarray, resamples: int, seed: int):
    """The readable loop: draw scenarios, then trials within each, and take the mean."""
    k = int(clusters.max()) + 1
    members = [np.flatnonzero(clusters == c) for c in range(k)]
    m_max = max(len(x) for x in members)
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, k, size=(resamples, k))
    u = rng.random((resamples, k, m_max)) if m_max > 1 else None
    means = []
    for b in range(resamples):
        picked: list[float] = []
        for j in range(k):
            group = members[drawn[b, j]]
            if u is None:
                picked.append(values[group[0]])
            else:
                for t in range(len(group)):
                    picked.append(values[group[int(u[b, j, t] * len(group))]])
        means.append(sum(picked) / len(picked))
    return np.percentile(means, [2.5, 97.5])


def test_flat_bootstrap_equals_the_exact_bootstrap_distribution() -> None:
    # Every one of the 5^5 equally likely resamples, enumerated: the exact percentiles.
    n = VALUES.size
    exact = np.asarray([VALUES[list(ix)].mean() for ix in itertools.product(range(n), repeat=n)])
    lo_exact, hi_exact = np.percentile(exact, [2.5, 97.5])
    w = cluster_bootstrap_weights(np.arange(n), resamples=40000, seed=3)
    lo, hi = bootstrap_means(VALUES[:, None], w)[:, 0]
    spread = exact.std()
    assert abs(lo - lo_exact) < 0.05 * spread and abs(hi - hi_exact) < 0.05 * spread


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_two_stage_bootstrap_equals_the_loop(seed: int) -> None:
    values = np.asarray([1.0, 2.0, 4.0, -3.0, 0.5, 8.0, 2.5, 6.0, 1.5])
    clusters = np.asarray([0, 0, 0, 1, 2, 2, 3, 3, 3])  # 1 to 3 trials per scenario
    w = cluster_bootstrap_weights(clusters, resamples=500, seed=seed)
    got = bootstrap_means(values[:, None], w)[:, 0]
    np.testing.assert_allclose(got, _loop_two_stage(values, clusters, 500, seed), rtol=1e-12)


def test_one_trial_each_is_the_plain_bootstrap_of_the_leaderboard() -> None:
    from empathos.scoring import bootstrap_ci

    w = cluster_bootstrap_weights(np.arange(VALUES.size), resamples=2000, seed=0)
    got = bootstrap_means(VALUES[:, None], w)[:, 0]
    np.testing.assert_allclose(got, bootstrap_ci(VALUES), rtol=1e-12)


def test_nan_values_are_left_out_of_their_column() -> None:
    v = np.asarray([[1.0, 1.0], [2.0, np.nan], [3.0, 3.0], [4.0, np.nan]])
    w = cluster_bootstrap_weights(np.arange(4), resamples=300, seed=0)
    out = bootstrap_means(v, w)
    assert 1.0 <= out[0, 1] <= out[1, 1] <= 3.0  # only 1 and 3 feed the second column


def test_permutation_pvalue_equals_exact_sign_flips() -> None:
    a = np.asarray([5.0, 3.0, 6.5, 2.0, 7.0, 4.0])
    b = np.asarray([4.0, 3.5, 4.0, 1.0, 5.5, 4.5])
    d = a - b
    observed = d.mean()
    flips = np.asarray(list(itertools.product([1.0, -1.0], repeat=d.size)))
    null = (flips * d).mean(axis=1)
    tol = 1e-12
    exact = min(1.0, 2 * min((null >= observed - tol).mean(), (null <= observed + tol).mean()))
    assert permutation_pvalue(a, b, d.size) == pytest.approx(exact, abs=1e-12)


def test_paired_summary_counts_and_interval() -> None:
    a = np.asarray([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    b = np.asarray([0.0, 2.0, 1.0, 5.0, 5.0, 3.0])
    clusters = np.asarray([0, 1, 2, 3, 4, 5])
    s = paired_summary(a, b, clusters)
    assert (s.wins, s.losses, s.ties) == (3, 1, 2)
    assert s.mean_diff == pytest.approx((a - b).mean())
    assert s.ci is not None and s.ci[0] <= s.mean_diff <= s.ci[1]
    assert 0.0 < s.p_value <= 1.0
    same = paired_summary(a, a, clusters)
    assert same.p_value == 1.0 and same.ties == 6
