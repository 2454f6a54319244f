"""``MAPOTrainer``: TRL's ``GRPOTrainer`` with per-token advantages from :mod:`empathos.rl`.

TRL gives one advantage per completion; its ``_compute_loss`` also takes advantages of shape
(B, T) (one per completion token). :class:`MAPOTrainer` lets the parent build the batch (the
rollout, the rewards, the old and reference log-probs), then replaces ``advantages`` by the
per-token advantages of the estimator it was given (:mod:`.placement`: MAPO by default, any
name of the registry), and multiplies TRL's ``tool_mask`` (our ``env_mask``) by the turns in
the loss, so unscored turns leave the loss, the KL term and the token count
(``num_items_in_batch``) as :mod:`empathos.rl` keeps them out. Everything after the advantages
is TRL's: ``beta`` (KL), clipping, ``loss_type``, importance sampling.

It needs the rollout of :func:`~empathos.integrations.trl.empa_rollout_func` (the per-turn
rewards and spans travel as its extra keys). The reward functions still run (TRL logs them);
their advantage is replaced. ``last_advantages`` holds the latest advantage step (for
inspection and tests), ``trl_advantages`` TRL's own per-completion ones for the same rows.
"""

from __future__ import annotations

from typing import Any

import torch
from trl.trainer.grpo_trainer import GRPOTrainer

from empathos.errors import ConfigError
from empathos.integrations.trl.placement import TokenAdvantages, place_advantages
from empathos.integrations.trl.reward import empa_reward
from empathos.rl import AdvantageConfig, get_estimator

__all__ = ["MAPOTrainer"]


def _gathered(trainer: Any, values: list[Any]) -> list[Any]:
    if trainer.accelerator.num_processes <= 1:
        return values
    from accelerate.utils import gather_object  # type: ignore[import-untyped]

    return list(gather_object(values))


class MAPOTrainer(GRPOTrainer):
    """GRPOTrainer with per-turn advantages (see the module docstring).

    ``estimator``: a name of :func:`empathos.rl.estimator_names` (``mapo`` by default);
    ``advantage_config``: its options (alpha, gamma, scopes, invalid turns); ``reward_funcs``
    defaults to :func:`~empathos.integrations.trl.empa_reward`; the rest is GRPOTrainer's,
    ``rollout_func`` required."""

    def __init__(
        self,
        model: Any,
        reward_funcs: Any = None,
        *args: Any,
        estimator: str = "mapo",
        advantage_config: AdvantageConfig | None = None,
        **kwargs: Any,
    ) -> None:
        get_estimator(estimator)  # an unknown name fails here, listing the valid ones
        if kwargs.get("rollout_func") is None:
            raise ConfigError(
                "MAPOTrainer needs rollout_func=empa_rollout_func(...): the per-turn rewards "
                "come from it",
                field="rollout_func",
            )
        self.estimator = estimator
        self.advantage_config = advantage_config or AdvantageConfig()
        self.last_advantages: TokenAdvantages | None = None
        self.trl_advantages: torch.Tensor | None = None
        super().__init__(model, reward_funcs or [empa_reward], *args, **kwargs)

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = super()._generate_and_score_completions(inputs)
        mode = "train" if getattr(self.model, "training", False) else "eval"
        missing = [k for k in ("turn_rewards", "turn_spans") if k not in inputs[0]]
        if missing:
            raise ConfigError(
                f"the rows carry no {missing[0]!r}: use empathos.integrations.trl."
                "empa_rollout_func as the rollout_func",
                field="rollout_func",
            )
        rewards = _gathered(self, [x["turn_rewards"] for x in inputs])
        spans = _gathered(self, [x["turn_spans"] for x in inputs])
        rank = self.accelerator.process_index
        rows = slice(rank * len(inputs), (rank + 1) * len(inputs))
        generations = self.num_generations if mode == "train" else self.num_generations_eval
        if generations is None:
            raise ConfigError("TRL gave no number of generations", field="num_generations")
        completion_mask = out["completion_mask"]
        placed = place_advantages(
            rewards,
            spans,
            num_generations=generations,
            estimator=self.estimator,
            config=self.advantage_config,
            rows=rows,
            seq_len=int(completion_mask.shape[1]),
        )
        device = completion_mask.device
        self.trl_advantages = out["advantages"].detach().clone()
        self.last_advantages = placed
        env = out.get("tool_mask", torch.ones_like(completion_mask))
        mask = env * placed.mask.to(device=device, dtype=env.dtype)
        out["advantages"] = placed.advantages.to(device)
        out["tool_mask"] = mask
        out["num_items_in_batch"] = self.accelerator.gather((mask * completion_mask).sum()).sum()
        for key, value in placed.result.stats.items():
            self._metrics[mode][f"mapo/{key}"].append(float(value))
        return out
