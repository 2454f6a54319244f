"""KL-in-reward: token estimates, their reduction to turns, and the reward subtraction."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from empathos.errors import InputError
from empathos.rl.advantages import compute_advantages
from empathos.rl.batch import AdvantageConfig, TurnBatch
from empathos.rl.kl import (
    kl_in_reward,
    token_kl,
    turn_kl_from_response_mask,
    turn_kl_from_spans,
)
from empathos.rl.returns import discounted_returns


def packed(seed: int, b: int, t: int) -> dict[str, Any]:
    """Random packed rows: user tokens (>= 1) before each assistant turn, variable horizons."""
    rng = np.random.default_rng(seed)
    horizon = rng.integers(1, t + 1, size=b)
    turn_mask = np.arange(t)[None, :] < horizon[:, None]
    lengths = rng.integers(1, 6, size=(b, t))
    ends = np.cumsum(rng.integers(1, 4, size=(b, t)) + lengths, axis=1)
    spans = np.where(turn_mask[..., None], np.stack([ends - lengths, ends], axis=-1), 0)
    seq_len = int(ends.max()) + 2
    resp = np.zeros((b, seq_len), dtype=bool)
    for row in range(b):
        for k in range(int(horizon[row])):
            resp[row, spans[row, k, 0] : spans[row, k, 1]] = True
    kl = rng.normal(size=(b, seq_len))
    return {"spans": spans, "turn_mask": turn_mask, "resp": resp, "kl": kl}


def loop_turn_kl(kl: np.ndarray, resp: np.ndarray, t: int, reduce: str) -> np.ndarray:
    """Readable reference: walk each row, counting runs of ones."""
    total, count = np.zeros((kl.shape[0], t)), np.zeros((kl.shape[0], t))
    for row in range(kl.shape[0]):
        turn, prev = -1, False
        for pos in range(kl.shape[1]):
            if resp[row, pos]:
                turn += 0 if prev else 1
                total[row, turn] += kl[row, pos]
                count[row, turn] += 1
            prev = bool(resp[row, pos])
    return total if reduce == "sum" else total / np.maximum(count, 1)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    b=st.integers(1, 6),
    t=st.integers(1, 7),
    reduce=st.sampled_from(["sum", "mean"]),
)
def test_turn_kl_matches_loop_spans_and_torch(seed: int, b: int, t: int, reduce: Any) -> None:
    p = packed(seed, b, t)
    want = loop_turn_kl(p["kl"], p["resp"], t, reduce)
    got = turn_kl_from_response_mask(p["kl"], p["resp"], t, reduce)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    spans = turn_kl_from_spans(p["kl"], p["spans"], p["turn_mask"], reduce)
    np.testing.assert_allclose(spans, want, rtol=1e-12, atol=1e-12)
    tt = turn_kl_from_response_mask(torch.as_tensor(p["kl"]), torch.as_tensor(p["resp"]), t, reduce)
    assert isinstance(tt, torch.Tensor)
    np.testing.assert_allclose(tt.numpy(), want, rtol=1e-12, atol=1e-12)
    assert np.all(got[~p["turn_mask"]] == 0.0)  # turns that do not exist carry no KL


def test_kl_lands_on_its_own_turn_only() -> None:
    # row: user, turn0 (2 tokens), user, turn1 (1 token), user, turn2 (2 tokens)
    resp = np.array([[0, 1, 1, 0, 1, 0, 1, 1]], dtype=bool)
    kl = np.zeros((1, 8))
    kl[0, 4] = 3.0  # the single token of turn 1
    kl[0, 0] = 100.0  # a user token: never counted
    rewards = np.array([[1.0, 2.0, 4.0]])
    out = kl_in_reward(rewards, turn_kl_from_response_mask(kl, resp, 3), coef=0.5)
    np.testing.assert_array_equal(out, [[1.0, 2.0 - 1.5, 4.0]])
    mean = turn_kl_from_response_mask(np.ones((1, 8)), resp, 3, reduce="mean")
    np.testing.assert_array_equal(mean, [[1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(
        turn_kl_from_response_mask(np.ones((1, 8)), resp, 3), [[2.0, 1.0, 2.0]]
    )


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), b=st.integers(1, 6), t=st.integers(1, 9))
def test_coef_zero_is_identity_and_invalid_turns_stay_invalid(seed: int, b: int, t: int) -> None:
    rng = np.random.default_rng(seed)
    valid = rng.random((b, t)) > 0.3
    rewards = np.where(valid, rng.normal(size=(b, t)), np.nan)
    turn_kl = rng.exponential(size=(b, t))
    np.testing.assert_array_equal(kl_in_reward(rewards, turn_kl, 0.0), rewards)
    coef = float(rng.uniform(0.01, 1.0))
    out = kl_in_reward(rewards, turn_kl, coef)
    np.testing.assert_array_equal(np.isnan(out), ~valid)
    np.testing.assert_allclose(out[valid], rewards[valid] - coef * turn_kl[valid], rtol=1e-12)
    tout = kl_in_reward(torch.as_tensor(rewards), torch.as_tensor(turn_kl), coef)
    np.testing.assert_allclose(tout.numpy(), out, rtol=1e-12, equal_nan=True)


def test_penalty_enters_returns_and_advantages() -> None:
    """Applied before the estimators: an early turn pays, discounted, for later drift, and
    the rollout that drifted gets the lower advantage at equal task reward."""
    rewards = np.ones((2, 3))
    turn_kl = np.array([[0.0, 0.0, 4.0], [0.0, 0.0, 0.0]])
    pen = kl_in_reward(rewards, turn_kl, 0.05)
    g = discounted_returns(pen, 0.85) - discounted_returns(rewards, 0.85)
    np.testing.assert_allclose(g[0], [-0.2 * 0.85**2, -0.2 * 0.85, -0.2])
    np.testing.assert_array_equal(g[1], 0.0)
    mask = np.ones((2, 3), dtype=bool)
    batch = TurnBatch(pen, mask, mask, np.zeros(2, dtype=np.int64))
    adv = compute_advantages("mapo_dialogue", batch, AdvantageConfig()).advantages
    assert np.all(adv[0] < adv[1])
    same = TurnBatch(rewards, mask, mask, np.zeros(2, dtype=np.int64))
    assert np.all(compute_advantages("mapo_dialogue", same, AdvantageConfig()).advantages == 0)


def test_token_estimators() -> None:
    logp = np.log(np.array([[0.5, 0.25, 0.8]]))
    ref = np.log(np.array([[0.25, 0.5, 0.8]]))
    k1 = token_kl(logp, ref)
    np.testing.assert_allclose(k1, [[np.log(2.0), -np.log(2.0), 0.0]])
    # summed k1 over a reply is the reply's log-ratio log pi(y) - log pi_ref(y)
    assert k1.sum() == pytest.approx(np.log(0.5 * 0.25 * 0.8) - np.log(0.25 * 0.5 * 0.8))
    k3 = token_kl(logp, ref, "k3")
    np.testing.assert_allclose(k3, [[0.5 + np.log(2.0) - 1.0, 2.0 - np.log(2.0) - 1.0, 0.0]])
    assert np.all(k3 >= 0)
    lp = torch.tensor(logp, requires_grad=True)
    t3 = token_kl(lp, torch.as_tensor(ref), "k3")
    assert not t3.requires_grad  # a rollout-time number, never a gradient path
    np.testing.assert_allclose(t3.numpy(), k3, rtol=1e-12)


def test_bad_inputs_are_input_errors() -> None:
    with pytest.raises(InputError, match="coef"):
        kl_in_reward(np.zeros((1, 2)), np.zeros((1, 2)), -0.1)
    with pytest.raises(InputError, match="turn_kl"):
        kl_in_reward(np.zeros((1, 2)), np.zeros((1, 3)), 0.05)
    with pytest.raises(InputError, match="estimator"):
        token_kl(np.zeros((1, 2)), np.zeros((1, 2)), "k9")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="response_mask"):
        turn_kl_from_response_mask(np.zeros((1, 4)), np.array([[1, 0, 1, 0]]), 1)
