"""Advantage estimators for multi-turn dialogue RL: MAPO's mixed advantage and its baselines.

MAPO (arXiv 2603.06194, later retitled "MICA"): per-turn rewards normalised over a wide
population (A_batch) mixed with turn-level Monte Carlo returns normalised over the rollouts of
the same scenario that reached the same turn (A_turn):

    A[b, t] = alpha * A_turn[b, t] + (1 - alpha) * A_batch[b, t]

Every estimator has ONE call shape, ``fn(batch: TurnBatch, cfg: AdvantageConfig) ->
AdvantageResult`` (shapes in :mod:`empathos.rl.batch`), and is looked up by name with
:func:`get_estimator`; a trainer never branches on the name. The built-in estimators compute
on torch tensors (:mod:`empathos.rl._ops` converts at the edge): numpy in gives numpy out,
torch in gives torch out on the same device, with the same numbers. Pure: no I/O, no clocks,
no printing.

Normalisation: ``(x - mean) / (std + eps)`` with the population standard deviation over the
*valid* turns of each group. A group with one member or zero spread contributes 0 to its
term; the share of such groups is reported in the stats (``<term>/degenerate_rate``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch

from empathos.errors import ConfigError
from empathos.rl._ops import ArrayT, as_bool, restore, segment_max, segment_min, segment_sum
from empathos.rl.batch import AdvantageConfig, AdvantageResult, NormScope, TurnBatch
from empathos.rl.returns import PreparedTurns, discounted_returns_tensor, prepare_turns

__all__ = [
    "Estimator",
    "batch_only",
    "compute_advantages",
    "estimator_names",
    "get_estimator",
    "group_keys",
    "grpo",
    "mapo_dialogue",
    "mapo_turnwise",
    "normalise_groups",
    "register_estimator",
    "reinforce_pp",
    "turn_only",
]


class Estimator(Protocol):
    """``fn(batch, cfg) -> result``, in the array library of the batch."""

    def __call__(
        self, batch: TurnBatch[ArrayT], cfg: AdvantageConfig, /
    ) -> AdvantageResult[ArrayT]: ...


_REGISTRY: dict[str, Estimator] = {}


def register_estimator(name: str, *aliases: str) -> Callable[[Estimator], Estimator]:
    """Decorator: register an estimator under ``name`` (and aliases); a duplicate raises."""

    def deco(fn: Estimator) -> Estimator:
        for key in (name, *aliases):
            if key in _REGISTRY:
                raise ValueError(f"advantage estimator {key!r} is already registered")
            _REGISTRY[key] = fn
        return fn

    return deco


def estimator_names() -> list[str]:
    """The registered names (aliases included), sorted."""
    return sorted(_REGISTRY)


def get_estimator(name: str) -> Estimator:
    """The estimator called ``name``; an unknown name raises :class:`ConfigError` listing all."""
    try:
        return _REGISTRY[name]
    except KeyError:
        valid = ", ".join(estimator_names())
        problem = f"unknown estimator {name!r}; valid: {valid}"
        raise ConfigError(problem, field="estimator") from None


def compute_advantages(
    name: str, batch: TurnBatch[ArrayT], cfg: AdvantageConfig
) -> AdvantageResult[ArrayT]:
    """Run the estimator called ``name`` on ``batch``."""
    return get_estimator(name)(batch, cfg)


def group_keys(scope: NormScope, group: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
    """(B, T) int64 normalisation-group key of every turn for ``scope``; ``group`` (B,) int64.

    ``batch``: one group; ``group``: the scenario; ``turn``: the turn index over all
    scenarios; ``group_turn``: (scenario, turn index).
    """
    b, t = shape
    turn = torch.arange(t, dtype=torch.int64, device=group.device).expand(b, t)
    grp = group.to(torch.int64)[:, None].expand(b, t)
    if scope == "batch":
        return torch.zeros_like(turn)
    if scope == "group":
        return grp
    if scope == "turn":
        return turn
    return grp * t + turn


def normalise_groups(
    values: torch.Tensor,
    stat_mask: torch.Tensor,
    apply_mask: torch.Tensor,
    keys: torch.Tensor,
    eps: float,
    prefix: str,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Normalise ``values`` (B, T) float64 within groups given by ``keys`` (B, T) int.

    Mean and population std come from the entries with ``stat_mask``; entries with
    ``apply_mask`` receive ``(x - mean) / (std + eps)``, or 0 when their group has fewer than
    two statistic members or zero spread (max == min). Others get 0. Returns the normalised
    (B, T) float64 tensor and stats under ``prefix``: groups, singleton, zero_spread,
    degenerate_rate.
    """
    sel = stat_mask | apply_mask
    v = values[sel].to(torch.float64)
    uniq, inv = torch.unique(keys[sel], return_inverse=True)
    n = int(uniq.numel())
    is_stat = stat_mask[sel]
    w = is_stat.to(torch.float64)
    count = segment_sum(w, inv, n)
    safe = count.clamp_min(1.0)
    mean = segment_sum(v * w, inv, n) / safe
    dev = v - mean[inv]
    std = torch.sqrt(segment_sum(dev * dev * w, inv, n) / safe)
    inf = float("inf")
    spread = segment_max(torch.where(is_stat, v, -inf), inv, n) - segment_min(
        torch.where(is_stat, v, inf), inv, n
    )
    has_stat = count > 0
    singleton = count == 1
    zero_spread = (count >= 2) & ~(spread > 0)
    ok = (count >= 2) & (spread > 0)
    z = torch.where(ok[inv] & apply_mask[sel], dev / (std[inv] + eps), 0.0)
    out = torch.zeros(values.shape, dtype=torch.float64, device=values.device)
    out[sel] = z
    n_groups = float(has_stat.sum())
    n_degen = float((singleton | zero_spread).sum())
    stats = {
        f"{prefix}/groups": n_groups,
        f"{prefix}/singleton": float(singleton.sum()),
        f"{prefix}/zero_spread": float(zero_spread.sum()),
        f"{prefix}/degenerate_rate": n_degen / n_groups if n_groups else 0.0,
    }
    return out, stats


def _turn_stats(prep: PreparedTurns, batch: TurnBatch[ArrayT]) -> dict[str, float]:
    turn_mask = as_bool(batch.turn_mask, prep.stat_mask.device)
    return {
        "turns/valid": float(prep.stat_mask.sum()),
        "turns/invalid": float((turn_mask & ~prep.stat_mask).sum()),
        "turns/in_loss": float(prep.loss_mask.sum()),
    }


def _result(
    advantages: torch.Tensor,
    prep: PreparedTurns,
    returns: torch.Tensor,
    stats: dict[str, float],
    like: ArrayT,
) -> AdvantageResult[ArrayT]:
    """The result in the caller's array library (``like``: the batch's rewards)."""
    adv, mask, ret = (restore(x, like) for x in (advantages, prep.loss_mask, returns))
    return AdvantageResult(adv, mask, ret, stats)


def _mixed(batch: TurnBatch[ArrayT], cfg: AdvantageConfig, alpha: float) -> AdvantageResult[ArrayT]:
    prep = prepare_turns(batch, cfg.invalid)
    sig = {"reward": prep.rewards, "return": discounted_returns_tensor(prep.rewards, cfg.gamma)}
    shape = batch.shape
    stats = _turn_stats(prep, batch)
    total = torch.zeros(shape, dtype=torch.float64, device=prep.rewards.device)
    terms = (
        ("turn", cfg.turn_signal, cfg.turn_scope, alpha),
        ("batch", cfg.batch_signal, cfg.batch_scope, 1.0 - alpha),
    )
    for prefix, signal, scope, weight in terms:
        keys = group_keys(scope, prep.group, shape)
        a, st = normalise_groups(sig[signal], prep.stat_mask, prep.loss_mask, keys, cfg.eps, prefix)
        stats.update(st)
        total = total + weight * a
    returns = torch.where(prep.loss_mask, sig["return"], 0.0)
    adv = torch.where(prep.loss_mask, total, 0.0)
    return _result(adv, prep, returns, stats, batch.rewards)


@register_estimator("mapo_dialogue", "mapo")
def mapo_dialogue(batch: TurnBatch[ArrayT], cfg: AdvantageConfig) -> AdvantageResult[ArrayT]:
    """MAPO's mixed advantage (arXiv 2603.06194): alpha * A_turn + (1 - alpha) * A_batch.

    Not the unrelated "MAPO" of arXiv 2509.18849; ``mapo`` is an alias of this estimator.
    """
    return _mixed(batch, cfg, cfg.alpha)


@register_estimator("mapo_turnwise")
def mapo_turnwise(batch: TurnBatch[ArrayT], cfg: AdvantageConfig) -> AdvantageResult[ArrayT]:
    """MAPO with no length bias: both terms normalise the return G_t within one turn index.

    alpha * A_turn + (1 - alpha) * A_wide, where A_turn is MAPO's (G_t over the rollouts of
    the scenario that reached turn t) and A_wide normalises the same G_t over every rollout of
    the batch that reached turn t (all scenarios: the wide population, which still gives credit
    where a scenario has one rollout left). No statistic mixes turns of different indices and no
    term credits the immediate reward alone, so neither how long a dialogue lasts nor how its
    return is split between now and later moves the expected update when the returns agree
    (docs/rl.md, "Length bias"). ``cfg``'s signal and scope fields are overridden.
    """
    turnwise = cfg.model_copy(
        update={
            "turn_signal": "return",
            "turn_scope": "group_turn",
            "batch_signal": "return",
            "batch_scope": "turn",
        }
    )
    return _mixed(batch, turnwise, cfg.alpha)


@register_estimator("turn_only")
def turn_only(batch: TurnBatch[ArrayT], cfg: AdvantageConfig) -> AdvantageResult[ArrayT]:
    """Ablation alpha = 1: only the per-turn normalised return term A_turn."""
    return _mixed(batch, cfg, 1.0)


@register_estimator("batch_only")
def batch_only(batch: TurnBatch[ArrayT], cfg: AdvantageConfig) -> AdvantageResult[ArrayT]:
    """Ablation alpha = 0: only the wide normalised reward term A_batch."""
    return _mixed(batch, cfg, 0.0)


@register_estimator("grpo")
def grpo(batch: TurnBatch[ArrayT], cfg: AdvantageConfig) -> AdvantageResult[ArrayT]:
    """Outcome-only GRPO: R[b] = sum of the turn rewards of rollout b, normalised across the
    rollouts of the same scenario (population std), given to every turn in the loss."""
    prep = prepare_turns(batch, cfg.invalid)
    shape = batch.shape
    total = prep.rewards.sum(dim=1)[:, None]
    has = prep.stat_mask.any(dim=1)[:, None]
    col0 = torch.arange(shape[1], device=prep.rewards.device)[None, :] == 0
    first = col0 & has  # one statistic entry per rollout, in column 0
    values = total.expand(shape)
    keys = group_keys("group", prep.group, shape)
    a, st = normalise_groups(values, first, first, keys, cfg.eps, "outcome")
    adv = torch.where(prep.loss_mask, a[:, :1], 0.0)
    stats = {**_turn_stats(prep, batch), **st}
    returns = torch.where(prep.loss_mask, values, 0.0)
    return _result(adv, prep, returns, stats, batch.rewards)


@register_estimator("reinforce_pp")
def reinforce_pp(batch: TurnBatch[ArrayT], cfg: AdvantageConfig) -> AdvantageResult[ArrayT]:
    """REINFORCE++-style: turn returns G[b, t] whitened over every valid turn of the batch."""
    prep = prepare_turns(batch, cfg.invalid)
    g = discounted_returns_tensor(prep.rewards, cfg.gamma)
    keys = group_keys("batch", prep.group, batch.shape)
    a, st = normalise_groups(g, prep.stat_mask, prep.loss_mask, keys, cfg.eps, "batch")
    stats = {**_turn_stats(prep, batch), **st}
    return _result(a, prep, torch.where(prep.loss_mask, g, 0.0), stats, batch.rewards)
