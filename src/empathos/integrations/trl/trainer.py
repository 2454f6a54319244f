"""``MAPOTrainer``: TRL's ``GRPOTrainer`` with per-token advantages from :mod:`empathos.rl`.

TRL gives one advantage per completion; its ``_compute_loss`` also takes advantages of shape
(B, T) (one per completion token). :class:`MAPOTrainer` computes the advantage step as soon as
the rollout is back (its ``_generate``): the per-token advantages of the estimator it was given
(:mod:`.placement`: MAPO by default, any name of the registry) and the turns in the loss, which
it multiplies into TRL's ``tool_mask`` (our ``env_mask``) there, before TRL uses it. So turns
out of the loss (unscored turns with ``invalid="drop"``, every turn of a failed dialogue) are
out of TRL's loss, KL term, token count (``num_items_in_batch``) and vLLM importance weights
(the sequence-level modes sum over the masked-in tokens only). After the parent has built the
batch (rewards, old and reference log-probs) it replaces ``advantages`` by the per-token ones,
and the numbers TRL logs from its own advantage by MAPO's: the completions table's
``advantage`` (each dialogue's token mean, the per-turn values in ``turn_advantages``),
``reward_std`` (the population spread of the scored turns' rewards) and
``frac_reward_zero_std`` (the share of the estimator's normalisation groups that give no
signal: one member or zero spread). Everything after the advantages is TRL's: ``beta`` (KL),
clipping, ``loss_type``, importance sampling.

It needs the rollout of :func:`~empathos.integrations.trl.empa_rollout_func` (the per-turn
rewards and spans travel as its extra keys). The reward functions still run (TRL logs them as
``rewards/...``); their advantage is replaced. ``last_advantages`` holds the latest advantage
step (for inspection and tests), ``trl_advantages`` TRL's own per-completion ones for the same
rows.
"""

from __future__ import annotations

from typing import Any

import torch
from trl.trainer.grpo_trainer import GRPOTrainer

from empathos.errors import ConfigError
from empathos.integrations.trl.logs import dialogue_token_means, mapo_metrics, turn_advantage_rows
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

    def _mode(self) -> str:
        return "train" if getattr(self.model, "training", False) else "eval"

    def _generate(self, prompts: list[Any]) -> tuple[Any, ...]:
        """TRL's ``_generate`` (the rollout), then the advantage step, its loss mask folded
        into ``tool_mask`` before TRL computes anything from it."""
        out = super()._generate(prompts)
        prompt_ids, completion_ids, tool_mask, completions, logprobs, extra, *rest = out
        missing = [k for k in ("turn_rewards", "turn_spans") if k not in extra]
        if missing or tool_mask is None:
            raise ConfigError(
                f"the rows carry no {(missing or ['env_mask'])[0]!r}: use "
                "empathos.integrations.trl.empa_rollout_func as the rollout_func",
                field="rollout_func",
            )
        placed = self._place(extra, max(len(ids) for ids in completion_ids))
        self.last_advantages = placed
        tool_mask = [
            [int(m) * int(k) for m, k in zip(row, placed.mask[i, : len(row)].tolist(), strict=True)]
            for i, row in enumerate(tool_mask)
        ]
        self._pending_extra_logs["turn_advantages"] = turn_advantage_rows(placed)
        return (prompt_ids, completion_ids, tool_mask, completions, logprobs, extra, *rest)

    def _place(self, extra: dict[str, list[Any]], seq_len: int) -> TokenAdvantages:
        rewards = _gathered(self, list(extra["turn_rewards"]))
        spans = _gathered(self, list(extra["turn_spans"]))
        errors = extra.get("dialogue_error") or [None] * len(extra["turn_rewards"])
        failed = _gathered(self, [e is not None for e in errors])
        local = len(extra["turn_rewards"])
        rank = self.accelerator.process_index
        mode = self._mode()
        generations = self.num_generations if mode == "train" else self.num_generations_eval
        if generations is None:
            raise ConfigError("TRL gave no number of generations", field="num_generations")
        return place_advantages(
            rewards,
            spans,
            num_generations=generations,
            estimator=self.estimator,
            config=self.advantage_config,
            rows=slice(rank * local, (rank + 1) * local),
            seq_len=seq_len,
            failed=failed,
        )

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = super()._generate_and_score_completions(inputs)
        placed = self.last_advantages
        if placed is None:  # pragma: no cover - _generate always sets it
            raise RuntimeError("no advantage step for this batch")
        completion_mask = out["completion_mask"]
        width = int(completion_mask.shape[1])
        adv = torch.zeros(completion_mask.shape, dtype=torch.float32)
        n = min(width, int(placed.advantages.shape[1]))
        adv[:, :n] = placed.advantages[:, :n]
        self.trl_advantages = out["advantages"].detach().clone()
        out["advantages"] = adv.to(completion_mask.device)
        self._log_mapo(placed)
        return out

    def _log_mapo(self, placed: TokenAdvantages) -> None:
        """MAPO's numbers where TRL logged its own (see the module docstring), and the
        estimator's stats as ``mapo/...``."""
        mode = self._mode()
        metrics = self._metrics[mode]
        for key, value in mapo_metrics(placed).items():
            if key in ("reward_std", "frac_reward_zero_std") and metrics[key]:
                metrics[key][-1] = value  # the value TRL appended for this batch
            else:
                metrics[key].append(value)
        logged: Any = self._logs["advantages"]  # a deque sized to the generation batch
        rows = int(placed.batch.rewards.shape[0])
        if len(logged) >= rows:
            for _ in range(rows):
                logged.pop()
            logged.extend(dialogue_token_means(placed))
