"""The policy loss of MAPO_SPEC section 4 as one pure torch function.

Token-level PPO clipped surrogate with "clip-higher" ([1 - 0.2, 1 + 0.28]) and a dual clip
(c = 10) for negative advantages, mean over the masked entries; optional KL penalty against a
reference policy and entropy bonus (both 0 by default); the spec's other option, KL-in-reward,
is :mod:`empathos.rl.kl` (use one of the two). An "entry" is a token for the language
model trainer and a whole action for the simulated environment: shapes are free as long as
all arguments broadcast to the same shape.
"""

from __future__ import annotations

import torch
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PPOLossConfig", "ppo_clip_loss"]


class PPOLossConfig(BaseModel):
    """Coefficients of the clipped surrogate (defaults: the authors' runs)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    clip_low: float = Field(0.2, ge=0.0, lt=1.0, description="Ratio clipped below at 1 - this")
    clip_high: float = Field(0.28, ge=0.0, description="Ratio clipped above at 1 + this")
    dual_clip: float = Field(
        10.0, gt=1.0, description="Dual-clip bound c on the loss for negative advantages"
    )
    kl_coef: float = Field(0.0, ge=0.0, description="KL penalty weight (0.05 when enabled)")
    entropy_coef: float = Field(0.0, ge=0.0, description="Entropy bonus weight")


def ppo_clip_loss(
    logp_new: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    cfg: PPOLossConfig,
    logp_ref: torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Scalar loss and stats (clip fraction, approx KL) over the entries where ``mask`` is 1.

    ``logp_new`` (...) log-probabilities under the current policy (with gradient);
    ``logp_old`` (...) under the rollout policy; ``advantages`` (...) per entry; ``mask``
    (...) 1 for entries in the loss; ``logp_ref`` (...) optional reference-policy log-probs
    for the KL penalty (k3 estimator); ``entropy`` (...) optional per-entry entropy.
    """
    m = mask.to(logp_new.dtype)
    denom = m.sum().clamp_min(1.0)
    adv = advantages.to(logp_new.dtype)
    ratio = torch.exp(logp_new - logp_old.detach())
    loss1 = -adv * ratio
    loss2 = -adv * torch.clamp(ratio, 1.0 - cfg.clip_low, 1.0 + cfg.clip_high)
    clipped = torch.maximum(loss1, loss2)
    dual = torch.minimum(clipped, -adv * cfg.dual_clip)
    per = torch.where(adv < 0, dual, clipped)
    if logp_ref is not None and cfg.kl_coef > 0:
        log_r = logp_ref.detach() - logp_new
        per = per + cfg.kl_coef * (torch.exp(log_r) - log_r - 1.0)
    if entropy is not None and cfg.entropy_coef > 0:
        per = per - cfg.entropy_coef * entropy
    loss = (per * m).sum() / denom
    with torch.no_grad():
        frac = ((loss2 > loss1).to(m.dtype) * m).sum() / denom
        kl = ((logp_old - logp_new) * m).sum() / denom
    return loss, {"clip_frac": float(frac), "approx_kl": float(kl)}
