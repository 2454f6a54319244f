"""Time MAPO advantages + token broadcast: vectorised code vs a per-sample Python loop.

A batch of 512 dialogues x 45 turns x 4,096 tokens (packed sequences; each assistant turn is a
run of ones in the response mask). The loop is the readable reference of the tests
(tests/rl/rl_reference.py). Prints both times and the speed-up; run:

    python benchmarks/bench_advantages.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "rl"))

from rl_reference import reference_advantages, reference_tokens

from empathos.rl import (
    AdvantageConfig,
    TurnBatch,
    broadcast_from_response_mask,
    compute_advantages,
)

B, T, L, N_PER_GROUP = 512, 45, 4096, 4


def make_inputs(seed: int) -> tuple[TurnBatch, np.ndarray]:
    rng = np.random.default_rng(seed)
    horizon = rng.integers(8, T + 1, size=B)
    turn_mask = np.arange(T)[None, :] < horizon[:, None]
    valid = turn_mask & (rng.random((B, T)) > 0.02)
    rewards = np.where(valid, rng.normal(size=(B, T)), np.nan)
    uid = np.repeat(np.arange(B // N_PER_GROUP), N_PER_GROUP)
    resp = np.zeros((B, L), dtype=bool)
    slot = L // T  # 91 tokens per turn slot: user part then the assistant reply
    for b in range(B):  # input construction, not timed
        for t in range(int(horizon[b])):
            start = t * slot + int(rng.integers(10, 40))
            resp[b, start : start + int(rng.integers(20, slot - 40))] = True
    return TurnBatch(rewards, valid, turn_mask, uid), resp


def vectorised(batch: TurnBatch, resp: np.ndarray, cfg: AdvantageConfig) -> np.ndarray:
    res = compute_advantages("mapo_dialogue", batch, cfg)
    tok, _ = broadcast_from_response_mask(res.advantages, res.loss_mask, resp)
    return np.asarray(tok)


def loop(batch: TurnBatch, resp: np.ndarray, cfg: AdvantageConfig) -> np.ndarray:
    adv, mask = reference_advantages(
        "mapo_dialogue", batch.rewards, batch.valid, batch.turn_mask, batch.uid, cfg
    )
    tok, _ = reference_tokens(adv, mask, resp)
    return tok


def best_of(fn: object, repeats: int, *args: object) -> tuple[float, np.ndarray]:
    times, out = [], np.zeros(0)
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(*args)  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    batch, resp = make_inputs(0)
    cfg = AdvantageConfig()
    t_vec, out_vec = best_of(vectorised, args.repeats, batch, resp, cfg)
    tb = TurnBatch(
        *(torch.as_tensor(x) for x in (batch.rewards, batch.valid, batch.turn_mask, batch.uid))
    )
    t_torch, out_torch = best_of(
        lambda: vectorised(tb, torch.as_tensor(resp), cfg),
        args.repeats,  # type: ignore[arg-type]
    )
    t_loop, out_loop = best_of(loop, 1, batch, resp, cfg)
    assert np.allclose(out_vec, out_loop, atol=1e-7), "vectorised and loop disagree"
    assert np.allclose(np.asarray(out_torch), out_vec, atol=1e-9), "numpy and torch disagree"
    print(f"batch: {B} dialogues x {T} turns x {L} tokens, mapo_dialogue + token broadcast")
    print(f"{'implementation':<28}{'seconds':>10}{'speed-up':>10}")
    print(f"{'per-sample Python loop':<28}{t_loop:>10.3f}{1.0:>10.1f}")
    print(f"{'vectorised numpy':<28}{t_vec:>10.4f}{t_loop / t_vec:>10.1f}")
    print(f"{'vectorised torch (CPU, 1t)':<28}{t_torch:>10.4f}{t_loop / t_torch:>10.1f}")


if __name__ == "__main__":
    main()
