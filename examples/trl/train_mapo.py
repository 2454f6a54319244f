"""MAPO on TRL: train a policy on EMPA dialogues with MAPOTrainer (docs/trl.md).

    python examples/trl/train_mapo.py examples/trl/cpu_smollm2.yaml          # CPU, minutes
    accelerate launch examples/trl/train_mapo.py examples/trl/gpu_qwen.yaml  # GPUs, vLLM

The YAML file has five sections: ``policy`` (model path, null = the bundled SmolLM2-135M;
``lora``: peft LoraConfig arguments, null = full fine-tuning), ``roles`` (user, judge and
optional director: empathos role endpoints, as in ``empathos run`` / ``empathos train``
configs), ``scenarios`` (``source``, ``language``, ``limit``), ``sandbox`` (SandboxConfig
fields), ``rollout`` (``max_reply_tokens``, ``seed``), ``mapo`` (``estimator``: any name of
``empathos.rl.estimator_names()``; ``advantage``: AdvantageConfig fields) and ``trl``
(GRPOConfig arguments, as TRL documents them).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import yaml

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def roles_from(section: dict[str, Any]) -> Any:
    from empathos.llm.roles import RoleEndpoint, build_role_model
    from empathos.sandbox import Roles

    built = {
        name: build_role_model(RoleEndpoint.model_validate(cfg), name)
        for name, cfg in section.items()
    }
    return Roles(user=built["user"], judge=built["judge"], director=built.get("director"))


def scenarios_from(section: dict[str, Any]) -> list[Any]:
    from empathos.scenarios import load_builtin, load_scenarios

    source = section.get("source", "builtin")
    loaded = load_builtin() if source == "builtin" else load_scenarios(source)
    language = section.get("language")
    found = [s for s in loaded.scenarios if language is None or s.labels.language == language]
    return found[: section.get("limit") or len(found)]


def main(path: str) -> None:
    from datasets import Dataset
    from peft import LoraConfig
    from trl import GRPOConfig

    from empathos.integrations.trl import MAPOTrainer, empa_rollout_func, scenario_rows
    from empathos.llm.local import load_causal_lm, resolve_model_dir
    from empathos.rl import AdvantageConfig
    from empathos.sandbox import SandboxConfig

    cfg = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    policy = cfg.get("policy") or {}
    base, _, _ = resolve_model_dir(policy.get("path"), None, "policy.path")
    bf16 = bool(cfg["trl"].get("bf16", False))
    model, tokenizer, _, _ = load_causal_lm(base, device=None, bf16=bf16, where="policy.path")
    scenarios = scenarios_from(cfg.get("scenarios") or {})
    rollout = empa_rollout_func(
        scenarios,
        roles_from(cfg["roles"]),
        SandboxConfig.model_validate(cfg.get("sandbox") or {}),
        **(cfg.get("rollout") or {}),
    )
    mapo = cfg.get("mapo") or {}
    lora = policy.get("lora")
    trainer = MAPOTrainer(
        model,
        args=GRPOConfig(**cfg["trl"]),
        train_dataset=Dataset.from_list(scenario_rows(scenarios)),
        processing_class=tokenizer,
        peft_config=LoraConfig(task_type="CAUSAL_LM", **lora) if lora else None,
        rollout_func=rollout,
        estimator=mapo.get("estimator", "mapo"),
        advantage_config=AdvantageConfig.model_validate(mapo.get("advantage") or {}),
    )
    trainer.train()
    trainer.save_model(cfg["trl"]["output_dir"])
    for row in trainer.state.log_history:
        if "loss" in row:  # the reward is logged on the steps that rolled out dialogues
            reward = f"mean dialogue reward {row['reward']:.3f}, " if "reward" in row else ""
            print(f"step {row['step']}: {reward}loss {row['loss']:.4g}, {row['step_time']:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).with_name("cpu_smollm2.yaml")))
