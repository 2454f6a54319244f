"""Per-turn rewards: telescoping distance reward, delta_E, potential; invalid turns are NaN."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from empathos.epm import half_space_distance
from empathos.rl.returns import discounted_returns
from empathos.rl.rewards import delta_e_rewards, distance_rewards, potential_rewards


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), b=st.integers(1, 6), t=st.integers(1, 12))
def test_distance_reward_telescopes_and_ignores_horizon(seed: int, b: int, t: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.cumsum(rng.normal(size=(b, t + 1, 3)) * 3, axis=1) - 20
    d = half_space_distance(p)
    valid = np.ones((b, t), dtype=bool)
    r = distance_rewards(d, valid)
    np.testing.assert_allclose(r.sum(axis=1), d[:, 0] - d[:, -1], atol=1e-9)
    # with gamma = 1 the return of turn 0 depends on the endpoints only, not on how many
    # turns the dialogue took: the shaping that keeps the per-turn normalisation free of
    # the constant-offset length bias (see test_length_bias_of_turn_normalisation)
    np.testing.assert_allclose(discounted_returns(r, 1.0)[:, 0], d[:, 0] - d[:, -1], atol=1e-9)


def test_invalid_turns_are_nan_never_zero() -> None:
    valid = np.array([[True, False, True]])
    d = np.array([[5.0, 4.0, 4.0, 1.0]])
    r = distance_rewards(d, valid)
    assert np.isnan(r[0, 1]) and r[0, 0] == 1.0 and r[0, 2] == 3.0
    assert np.isnan(delta_e_rewards(np.array([[0.5, 0.7, -1.0]]), valid)[0, 1])


def test_potential_reward_formula() -> None:
    norm = np.array([[9.0, 0.0]])
    r = potential_rewards(norm, np.ones((1, 1), dtype=bool), a=9.0, g=0.99)
    assert r[0, 0] == 0.99 * 1.0 - 0.5


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    b=st.integers(1, 7),
    t=st.integers(1, 12),
    p_invalid=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_numpy_and_torch_rewards_agree(seed: int, b: int, t: int, p_invalid: float) -> None:
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(b, t + 1)) * 5
    delta = rng.normal(size=(b, t))
    valid = rng.random((b, t)) >= p_invalid
    a, g = float(rng.uniform(1, 20)), float(rng.uniform(0.5, 1.0))
    cases = [
        (distance_rewards, (points, valid), {}),
        (delta_e_rewards, (delta, valid), {}),
        (potential_rewards, (np.abs(points), valid), {"a": a, "g": g}),
    ]
    for fn, args, kw in cases:
        want = fn(*args, **kw)
        got = fn(*(torch.as_tensor(x) for x in args), **kw)
        assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
        assert isinstance(want, np.ndarray) and want.shape == (b, t)
        # unscored turns are NaN in both, and only those
        np.testing.assert_array_equal(np.isnan(want), ~valid)
        np.testing.assert_array_equal(torch.isnan(got).numpy(), ~valid)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_torch_rewards_follow_the_formulas() -> None:
    """The torch path computes the documented numbers, not just whatever numpy does."""
    valid = torch.tensor([[True, False, True]])
    r = distance_rewards(torch.tensor([[5.0, 4.0, 4.0, 1.0]]), valid)
    assert r[0, 0].item() == 1.0 and torch.isnan(r[0, 1]) and r[0, 2].item() == 3.0
    p = potential_rewards(torch.tensor([[9.0, 0.0]]), torch.ones((1, 1), dtype=torch.bool))
    assert p[0, 0].item() == 0.99 * 1.0 - 0.5
