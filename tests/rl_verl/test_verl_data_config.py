"""`empathos verl prepare` output loads with verl's RL dataset; the example config composes
with verl 0.9's default trainer config and passes its checks (verl env)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")

from omegaconf import OmegaConf


def _prepare(out: Path) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "empathos",
            "verl",
            "prepare",
            "builtin",
            "--out",
            str(out),
            "--val-fraction",
            "0.25",
            "--seed",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_prepared_dataset_loads_with_verls_dataset_and_the_bundled_tokenizer(
    tmp_path: Path, policy: Any
) -> None:
    from verl.utils.dataset.rl_dataset import RLHFDataset

    stdout = _prepare(tmp_path / "data")
    assert "train:" in stdout and "val:" in stdout
    tokenizer = policy.tokenizer
    config = OmegaConf.create(
        {
            "prompt_key": "prompt",
            "max_prompt_length": 1024,
            "return_raw_chat": True,
            "cache_dir": str(tmp_path / "cache"),
            "filter_overlong_prompts": True,
        }
    )
    ids: dict[str, set[str]] = {}
    for split in ("train", "val"):
        ds = RLHFDataset(str(tmp_path / "data" / f"{split}.parquet"), tokenizer, config)
        assert len(ds) > 0
        ids[split] = set()
        for i in range(len(ds)):
            row = ds[i]
            # verl's agent loop tokenizes raw_prompt with the chat template, as here
            messages = [{"role": m["role"], "content": m["content"]} for m in row["raw_prompt"]]
            tokens = tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, return_dict=True
            )["input_ids"]
            assert len(tokens) > 10
            assert row["agent_name"] == "empathos_dialogue", "verl runs our agent loop on it"
            assert messages[-1]["content"], "turn 1's user line"
            ids[split].add(row["extra_info"]["scenario_id"])
            assert [m["role"] for m in messages] == ["system", "user"]
    assert not ids["train"] & ids["val"], "the split is by scenario"


def test_example_config_composes_with_verls_default_trainer_config() -> None:
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config
    from verl_setup import compose_example

    from empathos.integrations.verl.settings import parse_settings

    cfg = compose_example()
    assert cfg.algorithm.adv_estimator == "mapo_dialogue"
    algo = omega_conf_to_dataclass(cfg.algorithm)
    assert isinstance(algo, AlgoConfig) and algo.gamma == 0.85
    actor = omega_conf_to_dataclass(cfg.actor_rollout_ref.actor)
    assert (actor.clip_ratio_low, actor.clip_ratio_high, actor.clip_ratio_c) == (0.2, 0.28, 10.0)
    assert (actor.optim.lr, actor.optim.weight_decay, actor.optim.lr_warmup_steps_ratio) == (
        1e-6,
        0.1,
        0.05,
    )
    assert cfg.actor_rollout_ref.rollout.n == 4 and cfg.data.train_batch_size == 16
    assert cfg.actor_rollout_ref.rollout.multi_turn.max_assistant_turns == 15
    assert cfg.actor_rollout_ref.rollout.agent.default_agent_loop == "empathos_dialogue"
    assert cfg.trainer.use_v1 and cfg.actor_rollout_ref.rollout.name == "vllm"
    settings = parse_settings(cfg.empathos)
    assert (settings.sandbox.max_turns, settings.sandbox.min_turns) == (15, 8)
    assert set(settings.roles) == {"user", "judge", "director"}
    # keys verl's default config does not have would have failed the compose; its checks pass
    validate_config(config=cfg, use_reference_policy=need_reference_policy(cfg),
                    use_critic=need_critic(cfg))  # fmt: skip
    OmegaConf.resolve(cfg)  # every interpolation resolves
    sglang = compose_example(["actor_rollout_ref.rollout.name=sglang"])
    assert sglang.actor_rollout_ref.rollout.name == "sglang"


def test_the_settings_section_fails_with_one_line_naming_the_field() -> None:
    from empathos.errors import ConfigError
    from empathos.integrations.verl.settings import parse_settings

    with pytest.raises(ConfigError, match="empathos: missing"):
        parse_settings(None)
    with pytest.raises(ConfigError, match=r"empathos\.roles\.judge: missing"):
        parse_settings({"roles": {"user": {"kind": "scripted"}}, "sandbox": {"director": "rules"}})
    with pytest.raises(ConfigError, match=r"empathos\.sandbox\.max_turns"):
        parse_settings({"roles": {}, "sandbox": {"max_turns": 0}})
    with pytest.raises(ConfigError, match="open_with_topic"):
        parse_settings({"roles": {}, "sandbox": {"open_with_topic": False}})
