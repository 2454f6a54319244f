"""The numbers :class:`~empathos.integrations.trl.MAPOTrainer` logs, from one advantage step
(no TRL import): MAPO's where TRL would log its own per-completion values.

- :func:`mapo_metrics`: ``reward_std`` (the population spread of every scored turn's reward in
  the batch: the population MAPO's batch term normalises), ``frac_reward_zero_std`` (the share
  of the estimator's normalisation groups that give no signal, one member or zero spread: the
  per-turn return groups for MAPO and its ablations, the scenario groups for ``grpo``, the
  batch for ``reinforce_pp``), the advantages per turn and per token
  (``mapo/advantages/{turn,token}_{mean,std}``, over what is in the loss), the failed
  dialogues left out (``mapo/dialogues/failed``) and the estimator's own stats (``mapo/...``);
- :func:`dialogue_token_means`: each dialogue's advantage as the completions table shows one
  number per completion: the mean over its tokens in the loss;
- :func:`turn_advantage_rows`: this process's dialogues' per-turn advantages (None: a turn out
  of the loss), the table's ``turn_advantages`` column.
"""

from __future__ import annotations

import torch

from empathos.integrations.trl.placement import TokenAdvantages

__all__ = ["dialogue_token_means", "mapo_metrics", "turn_advantage_rows"]

# which normalisation's degenerate share stands for TRL's "zero-spread" groups, in order
_ZERO_SPREAD_KEYS = ("turn/degenerate_rate", "outcome/degenerate_rate", "batch/degenerate_rate")


def _turns(placed: TokenAdvantages) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(advantages, in the loss, token count) per turn, each (B, T), every row."""
    result, batch = placed.result, placed.batch
    adv = torch.as_tensor(result.advantages, dtype=torch.float64)
    on = torch.as_tensor(result.loss_mask, dtype=torch.bool) & batch.turn_mask
    lengths = (placed.spans[..., 1] - placed.spans[..., 0]).clamp_min(0).to(torch.float64)
    return adv, on, lengths * on


def _mean_std(values: torch.Tensor, weights: torch.Tensor) -> tuple[float, float]:
    total = float(weights.sum())
    if total <= 0:
        return 0.0, 0.0
    mean = float((values * weights).sum()) / total
    var = float((weights * (values - mean) ** 2).sum()) / total
    return mean, var**0.5


def mapo_metrics(placed: TokenAdvantages) -> dict[str, float]:
    """The metrics of one advantage step (see the module docstring)."""
    batch, stats = placed.batch, placed.result.stats
    rewards = batch.rewards[batch.valid].to(torch.float64)
    spread = float(rewards.std(unbiased=False)) if rewards.numel() else 0.0
    zero = next((stats[k] for k in _ZERO_SPREAD_KEYS if k in stats), 0.0)
    adv, on, tokens = _turns(placed)
    turn_mean, turn_std = _mean_std(adv, on.to(torch.float64))
    token_mean, token_std = _mean_std(adv, tokens)
    out = {f"mapo/{k}": float(v) for k, v in stats.items()}
    out.update({
        "reward_std": spread,
        "frac_reward_zero_std": float(zero),
        "mapo/advantages/turn_mean": turn_mean,
        "mapo/advantages/turn_std": turn_std,
        "mapo/advantages/token_mean": token_mean,
        "mapo/advantages/token_std": token_std,
        "mapo/dialogues/failed": float(placed.failed.sum()),
    })  # fmt: skip
    return out


def dialogue_token_means(placed: TokenAdvantages) -> list[float]:
    """Every dialogue's mean advantage over its tokens in the loss (0: none), all rows."""
    adv, _on, tokens = _turns(placed)
    count = tokens.sum(dim=1)
    total = (adv * tokens).sum(dim=1)
    means = torch.where(count > 0, total / count.clamp_min(1.0), torch.zeros_like(total))
    return [float(x) for x in means]


def turn_advantage_rows(placed: TokenAdvantages) -> list[list[float | None]]:
    """This process's dialogues' per-turn advantages (None: a turn out of the loss)."""
    adv, on, _tokens = _turns(placed)
    turns = placed.batch.turn_mask.sum(dim=1)
    rows = range(*placed.rows.indices(int(adv.shape[0])))
    return [
        [float(adv[i, k]) if bool(on[i, k]) else None for k in range(int(turns[i]))] for i in rows
    ]
