"""MAPO's estimators in verl's advantage-estimator registry (``register_adv_est``).

:func:`register_estimators` (run by the verl plugin, :mod:`.plugin`, when verl's
``core_algos`` is imported) adds every estimator of :mod:`empathos.rl`'s registry to verl's,
under :func:`default_names` (``mapo_dialogue``, ``mapo_turn_only``, ``mapo_batch_only``,
``mapo_grpo``, ...: a name registered in :mod:`empathos.rl` appears here too), so
``algorithm.adv_estimator=mapo_dialogue`` selects it. Each takes what verl's
``compute_advantage`` passes (``token_level_rewards``, ``response_mask``, ``index`` = the
rollout group uid, ``config`` = the algorithm config), reads the turns the empathos agent loop
laid out (:mod:`.layout`: each scored turn's reward is the sum of its tokens' rewards, the
judge's score plus every token's in-reward KL penalty), computes the advantages with
:func:`empathos.rl.compute_advantages` (the code the simulation and ``empathos train`` use)
and returns ``(advantages, returns)`` of shape (B, L): every token of a scored turn gets its
turn's value; masked tokens (user lines, templates, unscored turns) get 0. A failed dialogue
(:mod:`.layout`) has no turn: it gets 0 and is in no normalisation; how many were left out is
logged (a warning of this module's logger: verl gives an estimator no metrics dict).

``gamma`` is verl's ``algorithm.gamma`` as given (1.0 included: verl's ``AlgoConfig.gamma``
defaults to 1.0, so a recipe must set 0.85 for the MAPO paper's setting, as ``examples/verl``
does); only a call without any config means MAPO's 0.85. ``alpha`` is fixed per registered name
(verl's algorithm config has no field for it): register another with
``register_estimators(alpha=..., names={"mapo_dialogue": "my_name"})`` in a module your verl
processes import; another alpha under a name that already holds one is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import torch
from verl.trainer.ppo import core_algos

from empathos.errors import ConfigError
from empathos.integrations.verl.checks import refuse_mask_rewrites
from empathos.integrations.verl.layout import decode_turns
from empathos.integrations.verl.version import require_verl
from empathos.rl import (
    AdvantageConfig,
    broadcast_from_spans,
    compute_advantages,
    estimator_names,
    get_estimator,
)

require_verl()

__all__ = ["default_names", "make_estimator", "register_estimators"]

_log = logging.getLogger(__name__)
_MAPO_GAMMA = AdvantageConfig().gamma
_ALPHA = "_empathos_alpha"  # the attribute recording a registered function's alpha

VerlEstimator = Callable[..., tuple[torch.Tensor, torch.Tensor]]


def default_names() -> dict[str, str]:
    """empathos name -> verl name for every estimator in :mod:`empathos.rl`'s registry (one
    per function: of its aliases the longest), ``mapo_`` prefixed unless it already is."""
    chosen: dict[int, str] = {}
    for name in estimator_names():
        key = id(get_estimator(name))
        if key not in chosen or len(name) > len(chosen[key]):
            chosen[key] = name
    return {ours: ours if ours.startswith("mapo") else f"mapo_{ours}"
            for ours in sorted(chosen.values())}  # fmt: skip


def _gamma(config: Any) -> float:
    """verl's ``algorithm.gamma`` as given; MAPO's 0.85 only when there is no config at all."""
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
        refuse_mask_rewrites(config)
        turns = decode_turns(token_level_rewards, response_mask, index)
        failed = int(turns.failed.sum())
        if failed:  # verl hands an estimator no metrics dict: the count goes to the log
            _log.warning("%s: %d failed dialogue(s) left out of the batch", estimator, failed)
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
    setattr(compute, _ALPHA, float(alpha))
    return compute


def register_estimators(
    alpha: float = 0.5, names: Mapping[str, str] | None = None
) -> dict[str, VerlEstimator]:
    """Register the estimators under ``names`` (empathos name -> verl name; default
    :func:`default_names`). Registering the same estimator and alpha again returns the one
    registered; another alpha (or estimator) under a taken name raises :class:`ConfigError`."""
    out: dict[str, VerlEstimator] = {}
    for ours, theirs in (default_names() if names is None else names).items():
        get_estimator(ours)  # an unknown empathos name fails here, listing the valid ones
        existing = core_algos.ADV_ESTIMATOR_REGISTRY.get(theirs)
        if existing is not None:
            same = getattr(existing, "__name__", "") == f"empathos_{ours}"
            if same and getattr(existing, _ALPHA, None) == float(alpha):
                out[theirs] = existing
                continue
            held = (
                f"{ours} alpha {getattr(existing, _ALPHA)}"
                if hasattr(existing, _ALPHA)
                else getattr(existing, "__name__", "another estimator")
            )
            raise ConfigError(
                f"already holds {held}; register {ours} alpha {alpha} under another name "
                f"(names={{{ours!r}: 'my_name'}})",
                field=f"algorithm.adv_estimator {theirs}",
            )
        fn = make_estimator(ours, alpha)
        core_algos.register_adv_est(theirs)(fn)
        out[theirs] = fn
    return out
