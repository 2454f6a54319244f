"""Token broadcast of turn advantages, and the PPO clip loss."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from rl_reference import reference_tokens

from empathos.errors import InputError
from empathos.rl.loss import PPOLossConfig, ppo_clip_loss
from empathos.rl.tokens import broadcast_from_response_mask, broadcast_from_spans


def packed(seed: int, b: int, t: int) -> dict[str, Any]:
    """Random packed sequences: user segments and assistant turns alternate with gaps."""
    rng = np.random.default_rng(seed)
    horizon = rng.integers(1, t + 1, size=b)
    turn_mask = np.arange(t)[None, :] < horizon[:, None]
    spans = np.zeros((b, t, 2), dtype=np.int64)
    lengths = rng.integers(1, 6, size=(b, t))
    gaps = rng.integers(1, 4, size=(b, t))  # user tokens before each reply (>= 1)
    ends = np.cumsum(gaps + lengths, axis=1)
    spans[..., 1] = ends
    spans[..., 0] = ends - lengths
    seq_len = int(ends.max()) + int(rng.integers(0, 4))
    spans = np.where(turn_mask[..., None], spans, 0)
    resp = np.zeros((b, seq_len), dtype=bool)
    for row in range(b):
        for k in range(int(horizon[row])):
            resp[row, spans[row, k, 0] : spans[row, k, 1]] = True
    adv = rng.normal(size=(b, t))
    loss = turn_mask & (rng.random((b, t)) > 0.2)
    return {"adv": adv, "loss": loss, "spans": spans, "turn_mask": turn_mask, "resp": resp}


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31), b=st.integers(1, 6), t=st.integers(1, 7))
def test_spans_mask_and_loop_reference_agree(seed: int, b: int, t: int) -> None:
    p = packed(seed, b, t)
    seq_len = p["resp"].shape[1]
    want, want_mask = reference_tokens(p["adv"], p["loss"], p["resp"])
    got, got_mask = broadcast_from_response_mask(p["adv"], p["loss"], p["resp"])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_mask, want_mask)
    got2, got2_mask = broadcast_from_spans(p["adv"], p["loss"], p["spans"], p["turn_mask"], seq_len)
    np.testing.assert_array_equal(got2, want)
    np.testing.assert_array_equal(got2_mask, want_mask)
    tt = {k: torch.as_tensor(v) for k, v in p.items()}
    got3, _ = broadcast_from_spans(tt["adv"], tt["loss"], tt["spans"], tt["turn_mask"], seq_len)
    np.testing.assert_array_equal(got3.numpy(), want)
    got4, _ = broadcast_from_response_mask(tt["adv"], tt["loss"], tt["resp"])
    np.testing.assert_array_equal(got4.numpy(), want)
    assert not got_mask[~p["resp"]].any()  # user tokens never enter the loss


def test_too_many_runs_or_bad_spans_are_input_errors() -> None:
    adv = np.zeros((1, 1))
    with pytest.raises(InputError, match="runs"):
        broadcast_from_response_mask(adv, adv > -1, np.array([[1, 0, 1]]))
    with pytest.raises(InputError, match="span"):
        broadcast_from_spans(adv, adv > -1, np.array([[[2, 9]]]), np.ones((1, 1), bool), 4)


def test_ppo_clip_loss_clip_higher_and_dual_clip() -> None:
    cfg = PPOLossConfig()
    old = torch.zeros(4)
    new = torch.log(torch.tensor([1.5, 0.9, 20.0, 1.1])).requires_grad_()
    adv = torch.tensor([1.0, -1.0, -1.0, 1.0])
    mask = torch.tensor([1.0, 1.0, 1.0, 0.0])
    loss, stats = ppo_clip_loss(new, old, adv, mask, cfg)
    # entry 0: ratio 1.5 > 1.28 with A > 0 -> clipped at 1.28 -> -1.28
    # entry 1: ratio 0.9 inside the clip range -> +0.9
    # entry 2: ratio 20 with A < 0 -> 20, dual clip caps it at c * |A| = 10
    # entry 3: masked out
    assert float(loss.detach()) == pytest.approx((-1.28 + 0.9 + 10.0) / 3)
    loss.backward()
    assert new.grad is not None
    assert float(new.grad[0]) == 0.0 and float(new.grad[2]) == 0.0 and float(new.grad[3]) == 0.0
    assert float(new.grad[1]) != 0.0  # the unclipped entry still moves
    assert stats["clip_frac"] == pytest.approx(1 / 3)


def test_ppo_loss_kl_and_entropy_terms() -> None:
    logp = torch.log(torch.tensor([0.5, 0.25]))
    base, _ = ppo_clip_loss(logp, logp, torch.zeros(2), torch.ones(2), PPOLossConfig())
    assert float(base) == 0.0
    ref = torch.log(torch.tensor([0.25, 0.5]))
    kl, _ = ppo_clip_loss(
        logp, logp, torch.zeros(2), torch.ones(2), PPOLossConfig(kl_coef=0.05), logp_ref=ref
    )
    assert float(kl) > 0.0
    ent, _ = ppo_clip_loss(
        logp,
        logp,
        torch.zeros(2),
        torch.ones(2),
        PPOLossConfig(entropy_coef=0.1),
        entropy=torch.ones(2),
    )
    assert float(ent) == pytest.approx(-0.1)
