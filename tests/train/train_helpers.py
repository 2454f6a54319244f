"""Shared set-up of the causal-LM trainer tests: scripted toy roles and a tiny config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from empathos.llm import EndpointConfig, ModelClient, ScriptedBackend
from empathos.sandbox import Roles
from empathos.scenarios import Scenario, load_builtin
from empathos.train import TrainConfig, load_train_config, toy


def toy_roles() -> Roles:
    """User states a feeling; the judge rewards replies that address the user ('you')."""

    def make(handler: Any, role: str) -> ModelClient:
        return ModelClient(
            ScriptedBackend(handler), EndpointConfig(kind="scripted", model=role), role
        )

    return Roles(
        user=make(toy.user_states_feeling, "user"), judge=make(toy.judge_addresses_user, "judge")
    )


def english() -> list[Scenario]:
    return [s for s in load_builtin().scenarios if s.labels.language == "en"]


def tiny_config(out: Path, **over: Any) -> TrainConfig:
    """A CPU-sized run: 2 scenarios x 4 rollouts, 2 turns, 6 tokens per reply, LoRA r 8."""
    base: dict[str, Any] = {
        "out": out,
        "steps": 6,
        "seed": 0,
        "rollout.scenarios_per_step": 2,
        "rollout.rollouts_per_scenario": 4,
        "rollout.max_turns": 2,
        "rollout.min_turns": 2,
        "rollout.max_new_tokens": 6,
        "rollout.system_prompt": "none",
        "policy.lora": {"r": 8, "alpha": 16},
        "lr": 3e-3,
        "warmup": 0.0,
        "epochs": 2,
        "eval.every": 100,
        "eval.rollouts_per_scenario": 4,
        "checkpoint_every": 100,
        "tensorboard": False,
    }
    base.update(over)
    return load_train_config(None, base)
