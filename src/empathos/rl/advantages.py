"""Advantage estimators for multi-turn dialogue RL: MAPO's mixed advantage and its baselines.

MAPO (arXiv 2603.06194, later retitled "MICA"): per-turn rewards normalised over a wide
population (A_batch) mixed with turn-level Monte Carlo returns normalised over the rollouts of
the same scenario that reached the same turn (A_turn):

    A[b, t] = alpha * A_turn[b, t] + (1 - alpha) * A_batch[b, t]

Every estimator has ONE call shape, ``fn(batch: TurnBatch, cfg: AdvantageConfig) ->
AdvantageResult`` (shapes in :mod:`empathos.rl.batch`), and is looked up by name with
:func:`get_estimator`; a trainer never branches on the name. numpy in gives numpy out; torch
in gives torch out (same numbers). Pure: no I/O, no clocks, no printing.

Normalisation: ``(x - mean) / (std + eps)`` with the population standard deviation over the
*valid* turns of each group. A group with one member or zero spread contributes 0 to its
term; the share of such groups is reported in the stats (``<term>/degenerate_rate``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from empathos.errors import ConfigError
from empathos.rl._ops import Array, Ops, ops_for
from empathos.rl.batch import AdvantageConfig, AdvantageResult, NormScope, TurnBatch
from empathos.rl.returns import PreparedTurns, discounted_returns, prepare_turns

__all__ = [
    "Estimator",
    "batch_only",
    "compute_advantages",
    "estimator_names",
    "get_estimator",
    "group_keys",
    "grpo",
    "mapo_dialogue",
    "normalise_groups",
    "register_estimator",
    "reinforce_pp",
    "turn_only",
]

Estimator: TypeAlias = Callable[[TurnBatch, AdvantageConfig], AdvantageResult]
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


def compute_advantages(name: str, batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
    """Run the estimator called ``name`` on ``batch``."""
    return get_estimator(name)(batch, cfg)


def group_keys(scope: NormScope, group: Array, shape: tuple[int, int], ops: Ops) -> Array:
    """(B, T) int64 normalisation-group key of every turn for ``scope``.

    ``batch``: one group; ``group``: the scenario; ``turn``: the turn index over all
    scenarios; ``group_turn``: (scenario, turn index).
    """
    t = shape[1]
    turn = ops.arange(t, like=group)[None, :] + 0 * group[:, None]
    grp = group[:, None] + 0 * turn
    if scope == "batch":
        return 0 * turn
    if scope == "group":
        return grp
    if scope == "turn":
        return turn
    return grp * t + turn


def normalise_groups(
    values: Array, stat_mask: Array, apply_mask: Array, keys: Array, eps: float, prefix: str
) -> tuple[Array, dict[str, float]]:
    """Normalise ``values`` (B, T) within groups given by ``keys`` (B, T) int.

    Mean and population std come from the entries with ``stat_mask``; entries with
    ``apply_mask`` receive ``(x - mean) / (std + eps)``, or 0 when their group has fewer than
    two statistic members or zero spread (max == min). Others get 0. Returns the normalised
    (B, T) array and stats under ``prefix``: groups, singleton, zero_spread, degenerate_rate.
    """
    ops = ops_for(values)
    sel = stat_mask | apply_mask
    v = values[sel]
    inv, n = ops.unique_inverse(keys[sel])
    is_stat = stat_mask[sel]
    w = ops.float_(is_stat, like=v)
    count = ops.segment_sum(w, inv, n)
    safe = ops.where(count > 0, count, 1.0)
    mean = ops.segment_sum(v * w, inv, n) / safe
    dev = v - mean[inv]
    std = ops.sqrt(ops.segment_sum(dev * dev * w, inv, n) / safe)
    spread = ops.segment_max(ops.where(is_stat, v, -ops.inf), inv, n) - ops.segment_min(
        ops.where(is_stat, v, ops.inf), inv, n
    )
    has_stat = count > 0
    singleton = count == 1
    zero_spread = (count >= 2) & ~(spread > 0)
    ok = (count >= 2) & (spread > 0)
    z = ops.where(ok[inv] & apply_mask[sel], dev / (std[inv] + eps), 0.0)
    out = ops.zeros(tuple(values.shape), like=values)
    out[sel] = z
    n_groups = ops.to_float(has_stat.sum())
    n_degen = ops.to_float((singleton | zero_spread).sum())
    stats = {
        f"{prefix}/groups": n_groups,
        f"{prefix}/singleton": ops.to_float(singleton.sum()),
        f"{prefix}/zero_spread": ops.to_float(zero_spread.sum()),
        f"{prefix}/degenerate_rate": n_degen / n_groups if n_groups else 0.0,
    }
    return out, stats


def _turn_stats(prep: PreparedTurns, batch: TurnBatch, ops: Ops) -> dict[str, float]:
    turn_mask = ops.bool_(batch.turn_mask)
    return {
        "turns/valid": ops.to_float(prep.stat_mask.sum()),
        "turns/invalid": ops.to_float((turn_mask & ~prep.stat_mask).sum()),
        "turns/in_loss": ops.to_float(prep.loss_mask.sum()),
    }


def _signals(prep: PreparedTurns, cfg: AdvantageConfig) -> dict[str, Array]:
    return {"reward": prep.rewards, "return": discounted_returns(prep.rewards, cfg.gamma)}


def _mixed(batch: TurnBatch, cfg: AdvantageConfig, alpha: float) -> AdvantageResult:
    ops = ops_for(batch.rewards)
    prep = prepare_turns(batch, cfg.invalid, ops)
    sig = _signals(prep, cfg)
    shape = batch.shape
    stats = _turn_stats(prep, batch, ops)
    total = ops.zeros(shape, like=prep.rewards)
    terms = (
        ("turn", cfg.turn_signal, cfg.turn_scope, alpha),
        ("batch", cfg.batch_signal, cfg.batch_scope, 1.0 - alpha),
    )
    for prefix, signal, scope, weight in terms:
        keys = group_keys(scope, prep.group, shape, ops)
        a, st = normalise_groups(sig[signal], prep.stat_mask, prep.loss_mask, keys, cfg.eps, prefix)
        stats.update(st)
        total = total + weight * a
    returns = ops.where(prep.loss_mask, sig["return"], 0.0)
    return AdvantageResult(ops.where(prep.loss_mask, total, 0.0), prep.loss_mask, returns, stats)


@register_estimator("mapo_dialogue", "mapo")
def mapo_dialogue(batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
    """MAPO's mixed advantage (arXiv 2603.06194): alpha * A_turn + (1 - alpha) * A_batch.

    Not the unrelated "MAPO" of arXiv 2509.18849; ``mapo`` is an alias of this estimator.
    """
    return _mixed(batch, cfg, cfg.alpha)


@register_estimator("turn_only")
def turn_only(batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
    """Ablation alpha = 1: only the per-turn normalised return term A_turn."""
    return _mixed(batch, cfg, 1.0)


@register_estimator("batch_only")
def batch_only(batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
    """Ablation alpha = 0: only the wide normalised reward term A_batch."""
    return _mixed(batch, cfg, 0.0)


@register_estimator("grpo")
def grpo(batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
    """Outcome-only GRPO: R[b] = sum of the turn rewards of rollout b, normalised across the
    rollouts of the same scenario (population std), given to every turn in the loss."""
    ops = ops_for(batch.rewards)
    prep = prepare_turns(batch, cfg.invalid, ops)
    shape = batch.shape
    total = ops.sum_rows(prep.rewards)[:, None]
    has = ops.any_rows(prep.stat_mask)[:, None]
    col0 = ops.arange(shape[1], like=prep.group)[None, :] == 0
    first = col0 & has  # one statistic entry per rollout, in column 0
    values = total + 0.0 * prep.rewards
    keys = group_keys("group", prep.group, shape, ops)
    a, st = normalise_groups(values, first, first, keys, cfg.eps, "outcome")
    adv = ops.where(prep.loss_mask, a[:, :1] + 0.0 * prep.rewards, 0.0)
    stats = {**_turn_stats(prep, batch, ops), **st}
    returns = ops.where(prep.loss_mask, values, 0.0)
    return AdvantageResult(adv, prep.loss_mask, returns, stats)


@register_estimator("reinforce_pp")
def reinforce_pp(batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
    """REINFORCE++-style: turn returns G[b, t] whitened over every valid turn of the batch."""
    ops = ops_for(batch.rewards)
    prep = prepare_turns(batch, cfg.invalid, ops)
    g = discounted_returns(prep.rewards, cfg.gamma)
    keys = group_keys("batch", prep.group, batch.shape, ops)
    a, st = normalise_groups(g, prep.stat_mask, prep.loss_mask, keys, cfg.eps, "batch")
    stats = {**_turn_stats(prep, batch, ops), **st}
    return AdvantageResult(a, prep.loss_mask, ops.where(prep.loss_mask, g, 0.0), stats)
