"""Per-turn rewards on the last token of each turn, in verl's trainer.

verl's agent loop collects the interaction's turn scores in ``non_tensor_batch["turn_scores"]``
but its reward path writes one scalar per sample (on the last response token). Before our
estimators run, :func:`dense_turn_rewards` rewrites ``token_level_rewards``: turn k's score
on the last token of the k-th assistant run (NaN for an unscored turn), keeping any in-reward
KL penalty verl already applied (``token_level_rewards - token_level_scores``).

:func:`install` wraps ``verl.trainer.ppo.ray_trainer.compute_advantage`` (looked up by the
trainer at call time) so this happens for empathos's estimators only; other estimators see
verl's batch unchanged. It runs when :mod:`empathos.integrations.verl` is imported, which
verl does in its trainer process through ``data.custom_cls`` (see docs/verl.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from verl.trainer.ppo import ray_trainer

from empathos.rl.token_rewards import place_turn_rewards

__all__ = ["dense_turn_rewards", "install"]

_MARK = "_empathos_turn_rewards"


def dense_turn_rewards(data: Any) -> None:
    """Rewrite ``data.batch["token_level_rewards"]`` from ``non_tensor_batch["turn_scores"]``."""
    scores = data.non_tensor_batch.get("turn_scores")
    if scores is None:
        return
    batch = data.batch
    mask = batch["response_mask"]
    placed = place_turn_rewards([list(s or []) for s in scores], mask).to(
        batch["token_level_rewards"].dtype
    )
    penalty = batch["token_level_rewards"] - batch["token_level_scores"]
    batch["token_level_rewards"] = placed + torch.nan_to_num(penalty)
    batch["token_level_scores"] = torch.nan_to_num(placed)  # verl's metrics: unscored as 0


def install(estimator_names: Iterable[str]) -> None:
    """Wrap verl's ``compute_advantage`` for ``estimator_names``; idempotent."""
    names = set(estimator_names)
    current = ray_trainer.compute_advantage
    if getattr(current, _MARK, None) is not None:
        getattr(current, _MARK).update(names)
        return
    original: Callable[..., Any] = current

    def compute_advantage(data: Any, adv_estimator: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(adv_estimator, "value", adv_estimator)
        if name in getattr(compute_advantage, _MARK):
            dense_turn_rewards(data)
        return original(data, adv_estimator, *args, **kwargs)

    setattr(compute_advantage, _MARK, names)
    compute_advantage.__wrapped__ = original  # type: ignore[attr-defined]
    ray_trainer.compute_advantage = compute_advantage
