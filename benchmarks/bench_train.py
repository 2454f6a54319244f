"""Rollout and update throughput of the causal-LM trainer on the bundled SmolLM2-135M (LoRA).

Prints rollout tokens/s (batched generation across dialogues, sandbox with scripted roles),
update tokens/s (forward + backward of prompt + reply tokens, PPO clip loss) and peak memory
(resident set size of this process; CUDA peak allocated when on a GPU). Throughput is given
per wall second and per CPU second of this process (on a shared machine the wall figure mostly
measures the neighbours). No reference number exists on this machine: the numbers are printed
for the record, side by side per setting.

    python benchmarks/bench_train.py [--steps 2] [--rollouts 4] [--tokens 16]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from pathlib import Path

import torch

from empathos.llm import EndpointConfig, ModelClient, ScriptedBackend
from empathos.sandbox import Roles
from empathos.scenarios import load_builtin
from empathos.train import build_trainer, load_train_config, toy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--scenarios", type=int, default=2)
    ap.add_argument("--rollouts", type=int, default=4)
    ap.add_argument("--turns", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=16)
    args = ap.parse_args()
    torch.set_num_threads(1)

    def make(handler: object, role: str) -> ModelClient:
        return ModelClient(ScriptedBackend(handler), EndpointConfig(kind="scripted"), role)  # type: ignore[arg-type]

    roles = Roles(
        user=make(toy.user_states_feeling, "user"), judge=make(toy.judge_asks_question, "judge")
    )
    scenarios = [s for s in load_builtin().scenarios if s.labels.language == "en"]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_train_config(None, {
            "out": Path(tmp), "steps": args.steps, "epochs": 1, "tensorboard": False,
            "rollout.scenarios_per_step": args.scenarios,
            "rollout.rollouts_per_scenario": args.rollouts, "rollout.max_turns": args.turns,
            "rollout.min_turns": args.turns, "rollout.max_new_tokens": args.tokens,
            "rollout.system_prompt": "none", "eval.every": 10_000, "checkpoint_every": 10_000,
            "policy.lora": {"r": 8, "alpha": 16},
        })  # fmt: skip
        trainer = build_trainer(cfg, roles, scenarios[:8], [])
        rows = [trainer.train_step() for _ in range(args.steps)]
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    device = str(trainer.policy.device)
    print(f"device {device}, torch threads {torch.get_num_threads()}, "
          f"{args.scenarios} x {args.rollouts} dialogues x {args.turns} turns x {args.tokens} "
          f"tokens per step, LoRA r 8, {args.steps} steps")  # fmt: skip
    print(
        f"{'step':>4} {'rollout tok/s':>14} {'update tok/s':>13} {'rollout s':>10} "
        f"{'update s':>9} {'rollout tok/CPU-s':>18} {'update tok/CPU-s':>17}"
    )
    for r in rows:
        upd, upd_s = r.get("update/tokens_per_s", float("nan")), r.get("time/update_s", 0.0)
        gen_tokens = r["rollout/tokens_per_s"] * r["time/rollout_s"]
        upd_tokens = upd * upd_s
        roll_cpu = gen_tokens / max(r["time/rollout_cpu_s"], 1e-9)
        upd_cpu = upd_tokens / max(r.get("time/update_cpu_s", 0.0), 1e-9)
        print(
            f"{r['step']:>4} {r['rollout/tokens_per_s']:>14.1f} {upd:>13.1f} "
            f"{r['time/rollout_s']:>10.1f} {upd_s:>9.1f} {roll_cpu:>18.1f} {upd_cpu:>17.1f}"
        )
    print(f"peak resident memory {rss_mib:.0f} MiB")
    if torch.cuda.is_available():
        print(f"peak CUDA memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
