"""The conventions of the GRPO and REINFORCE++ baselines, pinned (docs/rl.md states them):
population standard deviation, singleton groups give 0, GRPO's outcome is undiscounted,
REINFORCE++ discounts with the config's gamma over turns."""

from __future__ import annotations

import numpy as np
import pytest

from empathos.rl.advantages import compute_advantages
from empathos.rl.batch import AdvantageConfig, TurnBatch

NAN = np.nan
CFG = AdvantageConfig()


def _batch(rewards: list[list[float]], uid: list[int]) -> TurnBatch:
    r = np.array(rewards, dtype=np.float64)
    turn_mask = ~np.isnan(r)
    return TurnBatch(r, turn_mask.copy(), turn_mask, np.array(uid))


def test_grpo_uses_the_population_std_of_undiscounted_outcomes() -> None:
    batch = _batch([[1.0, NAN], [0.5, 1.5], [6.0, NAN]], [0, 0, 0])
    res = compute_advantages("grpo", batch, CFG)
    outcome = np.array([1.0, 2.0, 6.0])  # plain sums: no discount
    want = (outcome - outcome.mean()) / (outcome.std(ddof=0) + CFG.eps)
    np.testing.assert_allclose(res.advantages[:, 0], want)
    np.testing.assert_allclose(res.advantages[1, 1], want[1])  # every turn gets its outcome's
    sample = (outcome - outcome.mean()) / (outcome.std(ddof=1) + CFG.eps)
    assert not np.allclose(res.advantages[:, 0], sample)


def test_grpo_outcome_is_not_discounted() -> None:
    # same sum, different timing: equal outcomes, equal advantages (a discount would differ)
    batch = _batch([[0.0, 3.0], [3.0, 0.0], [1.0, 0.0]], [0, 0, 0])
    res = compute_advantages("grpo", batch, CFG)
    assert res.advantages[0, 0] == pytest.approx(res.advantages[1, 0])


def test_grpo_singleton_group_gets_zero() -> None:
    batch = _batch([[1.0, 2.0], [3.0, NAN], [0.0, NAN]], [7, 8, 8])
    res = compute_advantages("grpo", batch, CFG)
    assert (res.advantages[0] == 0.0).all()  # scenario 7 has one rollout: no comparison
    assert res.stats["outcome/singleton"] == 1.0
    assert res.advantages[1, 0] > 0 > res.advantages[2, 0]


def test_reinforce_pp_whitens_gamma_discounted_turn_returns_over_the_batch() -> None:
    rewards = [[1.0, 0.0, 2.0], [0.5, -1.0, NAN], [0.0, NAN, NAN]]
    batch = _batch(rewards, [0, 1, 2])  # groups do not matter: one batch-wide population
    for gamma in (CFG.gamma, 1.0):
        cfg = AdvantageConfig(gamma=gamma)
        res = compute_advantages("reinforce_pp", batch, cfg)
        g = []
        for row in rewards:
            r = [x for x in row if not np.isnan(x)]
            g.append([sum(gamma**k * x for k, x in enumerate(r[t:])) for t in range(len(r))])
        flat = np.array([x for row in g for x in row])
        want = (flat - flat.mean()) / (flat.std(ddof=0) + cfg.eps)
        got = res.advantages[batch.turn_mask]
        np.testing.assert_allclose(got, want)
        np.testing.assert_allclose(res.returns[batch.turn_mask], flat)
    assert CFG.gamma == 0.85  # the default discount REINFORCE++ shares with MAPO's returns


def test_reinforce_pp_single_valid_turn_gets_zero() -> None:
    res = compute_advantages("reinforce_pp", _batch([[2.0]], [0]), CFG)
    assert res.advantages[0, 0] == 0.0
