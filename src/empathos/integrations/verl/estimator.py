"""MAPO's estimators in verl's advantage-estimator registry.

``register_estimators()`` (run when :mod:`empathos.integrations.verl` is imported) adds
``mapo_dialogue``, ``mapo_turn_only`` and ``mapo_batch_only`` to
``verl.trainer.ppo.core_algos``'s registry, so ``algorithm.adv_estimator=mapo_dialogue``
selects them. Each takes what verl passes (``token_level_rewards``, ``response_mask``,
``index`` = the rollout group uid, ``config`` = the algorithm config) and returns
``(advantages, returns)`` of shape (B, L): every token of assistant turn k gets turn k's
advantage (and return); user tokens and unscored turns get 0. The numbers come from
:func:`empathos.rl.compute_advantages`, the same code the simulation and `empathos train` use.

``gamma`` is read from verl's ``algorithm.gamma`` when it is set below 1 (verl's default 1.0
means "not set": MAPO's 0.85 is used); ``alpha`` is fixed per registered name (verl's
algorithm config has no field for it): register another with ``register_estimators(alpha=...,
names={"mapo_dialogue": "my_name"})`` in your launch module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from verl.trainer.ppo import core_algos

from empathos.rl import AdvantageConfig, broadcast_from_response_mask, compute_advantages
from empathos.rl.token_rewards import turn_batch_from_tokens

__all__ = ["DEFAULT_NAMES", "make_estimator", "register_estimators"]

DEFAULT_NAMES: Mapping[str, str] = {
    "mapo_dialogue": "mapo_dialogue",
    "turn_only": "mapo_turn_only",
    "batch_only": "mapo_batch_only",
}
_MAPO_GAMMA = AdvantageConfig().gamma

VerlEstimator = Callable[..., tuple[torch.Tensor, torch.Tensor]]


def _gamma(config: Any) -> float:
    value = None if config is None else getattr(config, "gamma", None)
    if value is None and isinstance(config, Mapping):
        value = config.get("gamma")
    if value is None or float(value) >= 1.0:
        return _MAPO_GAMMA
    return float(value)


def make_estimator(estimator: str, alpha: float = 0.5) -> VerlEstimator:
    """A verl-shaped estimator computing empathos's ``estimator`` (see the module docstring)."""

    def compute(
        token_level_rewards: torch.Tensor,
        response_mask: torch.Tensor,
        config: Any = None,
        index: Any = None,
        **_: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        batch, _ends = turn_batch_from_tokens(token_level_rewards, response_mask, index)
        cfg = AdvantageConfig(alpha=alpha, gamma=_gamma(config))
        result = compute_advantages(estimator, batch, cfg)
        advantages, _mask = broadcast_from_response_mask(
            result.advantages, result.loss_mask, response_mask
        )
        returns, _mask = broadcast_from_response_mask(
            result.returns, result.loss_mask, response_mask
        )
        dtype = token_level_rewards.dtype
        return advantages.to(dtype), returns.to(dtype)

    compute.__name__ = f"empathos_{estimator}"
    return compute


def register_estimators(
    alpha: float = 0.5, names: Mapping[str, str] = DEFAULT_NAMES
) -> dict[str, VerlEstimator]:
    """Register the estimators under ``names`` (empathos name -> verl name); idempotent."""
    out: dict[str, VerlEstimator] = {}
    for ours, theirs in names.items():
        existing = core_algos.ADV_ESTIMATOR_REGISTRY.get(theirs)
        if existing is not None and getattr(existing, "__name__", "") == f"empathos_{ours}":
            out[theirs] = existing
            continue
        fn = make_estimator(ours, alpha)
        core_algos.register_adv_est(theirs)(fn)
        out[theirs] = fn
    return out
