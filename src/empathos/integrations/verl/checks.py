"""Start-up checks of verl settings that MAPO's per-turn layout cannot work with (no verl
import, nothing heavy: the estimator runs them in verl's trainer process)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from empathos.errors import ConfigError

__all__ = ["refuse_colocated_reward_model", "refuse_mask_rewrites"]


def _get(node: Any, key: str) -> Any:
    """``node[key]`` of a mapping, an OmegaConf node or a verl config dataclass; None if absent."""
    if node is None:
        return None
    if isinstance(node, Mapping):
        return node.get(key)
    getter = getattr(node, "get", None)
    if callable(getter):
        return getter(key, None)
    return getattr(node, key, None)


def refuse_mask_rewrites(algorithm: Any) -> None:
    """Refuse the verl settings that rewrite ``response_mask`` between the in-reward KL and
    the estimator (``algorithm``: verl's algorithm config, any form).

    Rejection sampling (``algorithm.rollout_correction.rollout_rs``) in verl's decoupled mode
    zeroes rejected policy tokens in ``response_mask`` before the advantage step: a scored
    turn's reply then no longer matches its header, and its score can sit on a masked token.
    In bypass mode (``rollout_correction.bypass_mode: true``) the rejection is applied in the
    actor's loss, after the advantages, and MAPO's layout is untouched: allowed."""
    correction = _get(algorithm, "rollout_correction")
    if _get(correction, "rollout_rs") and not _get(correction, "bypass_mode"):
        raise ConfigError(
            "rejection sampling in verl's decoupled mode rewrites response_mask before the "
            "estimator, which breaks MAPO's per-turn layout: unset it, or set "
            "algorithm.rollout_correction.bypass_mode=true (the rejection then applies in the "
            "actor's loss)",
            field="algorithm.rollout_correction.rollout_rs",
        )


def refuse_colocated_reward_model(config: Any) -> None:
    """Refuse verl's colocated reward model (``reward.reward_model.enable`` without
    ``enable_resource_pool``; ``config``: verl's whole trainer config, any form).

    verl's V1 trainer then scores the batch after sampling and writes the reward model's
    ``rm_scores`` over the agent loop's, erasing the per-turn layout MAPO reads; the estimator
    would fail with the layout's generic message. The empathos judge is the reward: leave
    the reward model off (or give it its own resource pool and do not rely on its scores)."""
    model = _get(_get(config, "reward"), "reward_model")
    if _get(model, "enable") and not _get(model, "enable_resource_pool"):
        raise ConfigError(
            "a colocated reward model overwrites rm_scores after sampling, erasing MAPO's "
            "per-turn layout: set reward.reward_model.enable=false (the empathos judge gives "
            "the rewards)",
            field="reward.reward_model.enable",
        )
