"""MAPO's estimators in verl's advantage-estimator registry (``register_adv_est``).

:func:`register_estimators` (run by the verl plugin, :mod:`.plugin`) adds ``mapo_dialogue``,
``mapo_turn_only``, ``mapo_batch_only`` and ``mapo_turnwise`` (no length bias) to
``verl.trainer.ppo.core_algos``'s registry, so
``algorithm.adv_estimator=mapo_dialogue`` selects them. Each takes what verl's
``compute_advantage`` passes (``token_level_rewards``, ``response_mask``, ``index`` = the
rollout group uid, ``config`` = the algorithm config), reads the turns the empathos agent loop
laid out (:mod:`.layout`: each scored turn's reward is the sum of its tokens' rewards, the
judge's score plus every token's in-reward KL penalty), computes the advantages with
:func:`empathos.rl.compute_advantages` (the code the simulation and ``empathos train`` use)
and returns ``(advantages, returns)`` of shape (B, L): every token of a scored turn gets its
turn's value; masked tokens (user lines, templates, unscored turns) get 0.

``gamma`` is verl's ``algorithm.gamma`` as given (1.0 included; verl's default is 1.0, so set
0.85 for the MAPO paper's setting, as ``examples/verl`` does); only a config without a gamma
(a direct call) means MAPO's 0.85. ``alpha`` is fixed per registered name (verl's algorithm
config has no field for it): register another with ``register_estimators(alpha=...,
names={"mapo_dialogue": "my_name"})`` in a module your verl processes import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from verl.trainer.ppo import core_algos

from empathos.integrations.verl.layout import decode_turns
from empathos.rl import AdvantageConfig, broadcast_from_spans, compute_advantages

__all__ = ["DEFAULT_NAMES", "make_estimator", "register_estimators"]

DEFAULT_NAMES: Mapping[str, str] = {
    "mapo_dialogue": "mapo_dialogue",
    "turn_only": "mapo_turn_only",
    "batch_only": "mapo_batch_only",
    "mapo_turnwise": "mapo_turnwise",
}
_MAPO_GAMMA = AdvantageConfig().gamma

VerlEstimator = Callable[..., tuple[torch.Tensor, torch.Tensor]]


def _gamma(config: Any) -> float:
    """verl's ``algorithm.gamma`` as given; MAPO's 0.85 only when there is none."""
    value = None if config is None else getattr(config, "gamma", None)
    if value is None and isinstance(config, Mapping):
        value = config.get("gamma")
    return _MAPO_GAMMA if value is None else float(value)


def make_estimator(estimator: str, alpha: float = 0.5) -> VerlEstimator:
    """A verl-shaped estimator computing empathos's ``estimator`` (see the module docstring)."""

    def compute(
        token_level_rewards: torch.Tensor,
        response_mask: torch.Tensor,
        config: Any = None,
        index: Any = None,
        **_: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        turns = decode_turns(token_level_rewards, response_mask, index)
        cfg = AdvantageConfig(alpha=alpha, gamma=_gamma(config))
        result = compute_advantages(estimator, turns.batch, cfg)
        length = int(response_mask.shape[1])
        on = response_mask.to(token_level_rewards.dtype)
        out = []
        for values in (result.advantages, result.returns):
            tokens, _mask = broadcast_from_spans(
                values, result.loss_mask, turns.spans, turns.batch.turn_mask, length
            )
            out.append(tokens.to(token_level_rewards.dtype) * on)
        return out[0], out[1]

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
