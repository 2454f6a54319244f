"""Learning check of MAPO on TRL next to ``empathos train``, on the same setting (not a test).

The bundled SmolLM2-135M with a LoRA adapter (r 8, q/k/v/o) on the CPU, a scripted user that
states a feeling and a scripted judge that rates progress when the reply says "you"
(:mod:`empathos.train.toy`): the only way to earn reward is that visible behaviour. Both
trainers roll out the same scenarios (2 per step x 4 dialogues x 2 turns, replies of at most
12 tokens, distance reward), take two PPO-clip updates per batch of dialogues (clip 0.2 /
0.28, no KL, the same learning rate) and use MAPO's advantage from :mod:`empathos.rl`.
Printed per rollout step: the mean per-turn reward of that step's dialogues and the wall and
CPU seconds of the step (rollout and both updates), side by side. The judge is a rule: a
rising reward checks the training machinery, nothing about empathy.

    python benchmarks/bench_trl.py [--steps 6] [--tokens 12] [--lr 3e-3]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from empathos.llm import EndpointConfig, ModelClient, ScriptedBackend
from empathos.sandbox import Roles, SandboxConfig
from empathos.scenarios import Scenario, load_builtin
from empathos.train import build_trainer, load_train_config, toy

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
SCENARIOS, ROLLOUTS, TURNS = 2, 4, 2


def roles() -> Roles:
    def make(handler: Any, role: str) -> ModelClient:
        return ModelClient(ScriptedBackend(handler), EndpointConfig(kind="scripted"), role)

    return Roles(
        user=make(toy.user_states_feeling, "user"), judge=make(toy.judge_addresses_user, "judge")
    )


def ours(scenarios: list[Scenario], args: argparse.Namespace, out: Path) -> list[tuple[float, ...]]:
    cfg = load_train_config(None, {
        "out": out, "steps": args.steps, "epochs": 2, "tensorboard": False, "seed": 0,
        "rollout.scenarios_per_step": SCENARIOS, "rollout.rollouts_per_scenario": ROLLOUTS,
        "rollout.max_turns": TURNS, "rollout.min_turns": TURNS,
        "rollout.max_new_tokens": args.tokens, "rollout.system_prompt": "none",
        "eval.every": 10_000, "checkpoint_every": 10_000, "lr": args.lr, "warmup": 0.0,
        "policy.lora": {"r": 8, "alpha": 16},
    })  # fmt: skip
    trainer = build_trainer(cfg, roles(), scenarios, [])
    rows = []
    for _ in range(args.steps):
        wall, cpu = time.perf_counter(), time.process_time()
        row = trainer.train_step()
        rows.append(
            (row["reward/mean_turn"], time.perf_counter() - wall, time.process_time() - cpu)
        )
    return rows


def on_trl(
    scenarios: list[Scenario], args: argparse.Namespace, out: Path
) -> list[tuple[float, ...]]:
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import TrainerCallback
    from trl import GRPOConfig

    from empathos.integrations.trl import MAPOTrainer, empa_rollout_func, scenario_rows
    from empathos.llm.local import load_causal_lm, resolve_model_dir

    torch.manual_seed(0)
    base, _, _ = resolve_model_dir(None, None, "policy")
    model, tokenizer, _, _ = load_causal_lm(base, device="cpu", bf16=False, where="policy")
    sandbox = SandboxConfig(max_turns=TURNS, min_turns=TURNS, eval_every=1,
                            system_prompt="none", director="rules")  # fmt: skip
    rollout = empa_rollout_func(scenarios, roles(), sandbox, max_reply_tokens=args.tokens)
    means: list[float] = []

    def observed(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        result = rollout(prompts, trainer)
        flat = [r for row in result["turn_rewards"] for r in row if r is not None]
        means.append(sum(flat) / len(flat) if flat else math.nan)
        return result

    times: list[tuple[float, float]] = []

    class Clock(TrainerCallback):  # type: ignore[misc]
        def on_step_begin(self, *a: Any, **k: Any) -> None:
            self.start = (time.perf_counter(), time.process_time())

        def on_step_end(self, *a: Any, **k: Any) -> None:
            times.append((time.perf_counter() - self.start[0], time.process_time() - self.start[1]))

    config = GRPOConfig(
        output_dir=str(out), use_cpu=True, seed=0, report_to=[], save_strategy="no",
        max_steps=2 * args.steps, num_iterations=2,
        per_device_train_batch_size=SCENARIOS * ROLLOUTS,
        num_generations=ROLLOUTS, max_completion_length=TURNS * (args.tokens + 48),
        learning_rate=args.lr, lr_scheduler_type="constant", beta=0.0, epsilon=0.2,
        epsilon_high=0.28, loss_type="dapo", logging_steps=1, shuffle_dataset=False,
    )  # fmt: skip
    lora = LoraConfig(r=8, lora_alpha=16, task_type="CAUSAL_LM",
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])  # fmt: skip
    rows = scenario_rows(scenarios)
    trainer = MAPOTrainer(model, args=config, train_dataset=Dataset.from_list(rows),
                          processing_class=tokenizer, peft_config=lora, rollout_func=observed,
                          callbacks=[Clock()])  # fmt: skip
    trainer.train()
    pairs = [(times[2 * i], times[2 * i + 1]) for i in range(len(times) // 2)]
    return [(m, a[0] + b[0], a[1] + b[1]) for m, (a, b) in zip(means, pairs, strict=False)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--tokens", type=int, default=12)
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    scenarios = [s for s in load_builtin().scenarios if s.labels.language == "en"][:8]
    with tempfile.TemporaryDirectory() as tmp:
        a = ours(scenarios, args, Path(tmp) / "ours")
        print("empathos train (reward, wall s, CPU s):", [tuple(round(x, 3) for x in r) for r in a])
        sys.stdout.flush()  # a long run shows its first half early
        b = on_trl(scenarios, args, Path(tmp) / "trl")
    print(f"bundled SmolLM2-135M + LoRA r 8 on the CPU, {SCENARIOS} scenarios x {ROLLOUTS} "
          f"dialogues x {TURNS} turns x {args.tokens} tokens per step, judge rewards 'you', "
          f"lr {args.lr:g}, 2 updates per step")  # fmt: skip
    print(f"{'step':>4} | {'empathos train':^30} | {'MAPOTrainer (TRL)':^30}")
    cols = f"{'reward':>8} {'wall s':>9} {'CPU s':>9}"
    print(f"{'':>4} | {cols}  | {cols}")
    for i in range(max(len(a), len(b))):
        left = "{:>8.3f} {:>9.1f} {:>9.1f}".format(*a[i]) if i < len(a) else " " * 28
        right = "{:>8.3f} {:>9.1f} {:>9.1f}".format(*b[i]) if i < len(b) else ""
        print(f"{i + 1:>4} | {left}  | {right}")
    for name, rows in (("empathos train", a), ("MAPOTrainer", b)):
        if len(rows) >= 2:
            half = max(1, len(rows) // 2)
            first = sum(r[0] for r in rows[:half]) / half
            last = sum(r[0] for r in rows[-half:]) / half
            mean_s = sum(r[1] for r in rows) / len(rows)
            print(f"{name}: mean per-turn reward first {half} steps {first:.3f}, last {half} "
                  f"{last:.3f}; {mean_s:.1f} wall s per step")  # fmt: skip


if __name__ == "__main__":
    main()
