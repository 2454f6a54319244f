"""Readable per-sample reference implementations of the estimators (loops, no vectorisation).

The shipped code in ``empathos.rl`` is vectorised; these loops state the maths plainly and the
tests check the two agree over seeds and shapes. The benchmark times them as the baseline.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from numpy.typing import NDArray

from empathos.rl.batch import AdvantageConfig, AdvantageResult, TurnBatch

F64 = NDArray[np.float64]
Key = tuple[int, ...]


def used_rewards(
    rewards: F64, valid: NDArray[np.bool_], turn_mask: NDArray[np.bool_], invalid: str
) -> tuple[list[list[float]], list[list[bool]]]:
    """Per rollout: the rewards the estimator uses and whether each existing turn is in the loss."""
    out_r: list[list[float]] = []
    out_l: list[list[bool]] = []
    for b in range(rewards.shape[0]):
        horizon = int(turn_mask[b].sum())
        good = [float(rewards[b, t]) for t in range(horizon) if valid[b, t]]
        mean = sum(good) / len(good) if good else None
        rs: list[float] = []
        ls: list[bool] = []
        for t in range(horizon):
            if valid[b, t]:
                rs.append(float(rewards[b, t]))
                ls.append(True)
            elif invalid == "fill_mean" and mean is not None:
                rs.append(mean)
                ls.append(True)
            else:
                rs.append(0.0)
                ls.append(False)
        out_r.append(rs)
        out_l.append(ls)
    return out_r, out_l


def returns_of(rs: list[float], gamma: float) -> list[float]:
    """G_t = r_t + gamma * G_{t+1}, backwards over one dialogue."""
    out = [0.0] * len(rs)
    acc = 0.0
    for t in range(len(rs) - 1, -1, -1):
        acc = rs[t] + gamma * acc
        out[t] = acc
    return out


def normalise(
    values: dict[tuple[int, int], float],
    stat: set[tuple[int, int]],
    key_of: dict[tuple[int, int], Key],
    eps: float,
) -> dict[tuple[int, int], float]:
    """Group-wise (x - mean) / (std + eps) over the stat members; degenerate groups give 0."""
    members: dict[Key, list[float]] = defaultdict(list)
    for pos in stat:
        members[key_of[pos]].append(values[pos])
    out: dict[tuple[int, int], float] = {}
    for pos, x in values.items():
        xs = members.get(key_of[pos], [])
        if len(xs) < 2 or max(xs) == min(xs):
            out[pos] = 0.0
            continue
        mean = sum(xs) / len(xs)
        std = math.sqrt(sum((v - mean) ** 2 for v in xs) / len(xs))
        out[pos] = (x - mean) / (std + eps)
    return out


def _key(scope: str, uid: int, t: int) -> Key:
    return {"batch": (0,), "group": (uid,), "turn": (t,), "group_turn": (uid, t)}[scope]


def reference_advantages(
    name: str,
    rewards: F64,
    valid: NDArray[np.bool_],
    turn_mask: NDArray[np.bool_],
    uid: NDArray[np.int64],
    cfg: AdvantageConfig,
) -> tuple[F64, NDArray[np.bool_]]:
    """(advantages (B, T), loss_mask (B, T)) of estimator ``name`` by plain loops."""
    b_n, t_n = rewards.shape
    rs, ls = used_rewards(rewards, valid, turn_mask, cfg.invalid)
    gs = [returns_of(r, cfg.gamma) for r in rs]
    adv = np.zeros((b_n, t_n))
    loss = np.zeros((b_n, t_n), dtype=bool)
    in_loss = {(b, t) for b in range(b_n) for t in range(len(ls[b])) if ls[b][t]}
    stat = {(b, t) for b in range(b_n) for t in range(len(ls[b])) if valid[b, t]}
    for b, t in in_loss:
        loss[b, t] = True
    if name == "grpo":
        totals = {(b, 0): sum(rs[b]) for b in range(b_n)}
        have = {(b, 0) for b in range(b_n) if any(valid[b])}
        keys = {(b, 0): (int(uid[b]),) for b in range(b_n)}
        norm = normalise({p: totals[p] for p in have}, have, keys, cfg.eps)
        for b, t in in_loss:
            adv[b, t] = norm.get((b, 0), 0.0)
        return adv, loss
    if name == "reinforce_pp":
        keys = {(b, t): (0,) for b, t in in_loss | stat}
        g = {(b, t): gs[b][t] for b, t in in_loss | stat}
        norm = normalise(g, stat, keys, cfg.eps)
        for pos in in_loss:
            adv[pos] = norm[pos]
        return adv, loss
    if name == "mapo_turnwise":  # both terms: the return, within one turn index
        turnwise = {"turn_signal": "return", "turn_scope": "group_turn"}
        cfg = cfg.model_copy(update={**turnwise, "batch_signal": "return", "batch_scope": "turn"})
    alpha = {"turn_only": 1.0, "batch_only": 0.0}.get(name, cfg.alpha)
    sig = {"reward": rs, "return": gs}
    for signal, scope, weight in (
        (cfg.turn_signal, cfg.turn_scope, alpha),
        (cfg.batch_signal, cfg.batch_scope, 1.0 - alpha),
    ):
        everyone = in_loss | stat
        values = {(b, t): sig[signal][b][t] for b, t in everyone}
        keys = {(b, t): _key(scope, int(uid[b]), t) for b, t in everyone}
        norm = normalise(values, stat, keys, cfg.eps)
        for pos in in_loss:
            adv[pos] += weight * norm[pos]
    return adv, loss


def reference_tokens(
    adv: F64, loss: NDArray[np.bool_], response_mask: NDArray[np.bool_]
) -> tuple[F64, NDArray[np.bool_]]:
    """Token advantages by walking each row: the k-th run of ones is assistant turn k."""
    out = np.zeros(response_mask.shape)
    out_mask = np.zeros(response_mask.shape, dtype=bool)
    for b in range(response_mask.shape[0]):
        turn = -1
        prev = False
        for pos in range(response_mask.shape[1]):
            cur = bool(response_mask[b, pos])
            if cur and not prev:
                turn += 1
            if cur and loss[b, turn]:
                out[b, pos] = adv[b, turn]
                out_mask[b, pos] = True
            prev = cur
    return out, out_mask


def rfc_summed_turn_normalised(batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
    """The comparator of the length-bias bench (verl issue 7244's construction): each valid
    reward normalised over the rollouts of its scenario that reached its turn index, then summed
    (discounted by ``cfg.gamma``) over the remaining valid turns. Plain loops; not registered."""
    r, valid, uid = np.asarray(batch.rewards), np.asarray(batch.valid), np.asarray(batch.uid)
    b_n, t_n = r.shape
    stat = {(b, t) for b in range(b_n) for t in range(t_n) if valid[b, t]}
    keys = {(b, t): (int(uid[b]), t) for b, t in stat}
    z = normalise({pos: float(r[pos]) for pos in stat}, stat, keys, cfg.eps)
    adv = np.zeros((b_n, t_n))
    for b, t in stat:
        later = [cfg.gamma ** (k - t) * z[b, k] for k in range(t, t_n) if (b, k) in stat]
        adv[b, t] = sum(later)
    return AdvantageResult(adv, valid, np.zeros_like(adv), {})
