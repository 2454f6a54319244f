"""`empathos verl prepare` output loads with verl's RL dataset; the example config composes
with verl 0.9's default trainer config and passes its checks (verl env)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl", reason="verl is not installed (the empathos[verl] environment)")

from omegaconf import OmegaConf

REPO = Path(__file__).resolve().parents[2]


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
    assert "algorithm.gamma=0.85" in stdout, "MAPO's gamma, explicitly: verl's default is 1.0"
    assert f"data.train_files={tmp_path / 'data' / 'train.parquet'}" in stdout
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


ROLES_URL = "http://roles.example:8001/v1"


def _launch_args(tmp_path: Path) -> list[str]:
    """verl's arguments as the launch script builds them from its environment (relative data
    path, SGLang rollouts, two nodes, the roles' server)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "EMPATHOS_VERL_PRINT_ARGS": "1",
           "EMPATHOS_ROLES_URL": ROLES_URL, "EMPATHOS_VERL_DATA": "shared/data",
           "EMPATHOS_VERL_ROLLOUT": "sglang", "NNODES": "2"}  # fmt: skip
    done = subprocess.run(["bash", str(REPO / "examples/verl/run_mapo_qwen2_5_7b.sh"),
                           "trainer.total_epochs=3"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_launch_scripts_settings_reach_verl_without_the_launching_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The config composed as ``main_ppo`` composes it (Hydra, the script's arguments) and
    resolved as verl's TaskRunner resolves it, in a process that has none of the script's
    environment: what a Ray actor on another node sees."""
    from hydra import compose, initialize_config_dir

    from empathos.integrations.verl.settings import parse_settings

    args = _launch_args(tmp_path)
    for name in [k for k in os.environ if k.startswith("EMPATHOS_")]:
        monkeypatch.delenv(name)
    config_dir, config_name = args[0].removeprefix("--config-path="), args[1].split("=", 1)[1]
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        cfg = compose(config_name=config_name, overrides=args[2:])
    OmegaConf.resolve(cfg)
    data = tmp_path / "shared" / "data"
    assert (cfg.data.train_files, cfg.data.val_files) == (f"{data}/train.parquet",
                                                          f"{data}/val.parquet")  # fmt: skip
    assert cfg.actor_rollout_ref.rollout.name == "sglang" and cfg.trainer.nnodes == 2
    assert cfg.trainer.total_epochs == 3, "extra arguments pass through"
    settings = parse_settings(cfg.empathos)
    assert {r: (e.base_url, e.model) for r, e in settings.roles.items()} == {
        r: (ROLES_URL, "Qwen/Qwen2.5-72B-Instruct") for r in ("user", "director", "judge")
    }


def test_without_the_roles_server_the_settings_name_the_missing_field() -> None:
    from verl_setup import compose_example

    from empathos.errors import ConfigError
    from empathos.integrations.verl.settings import parse_settings

    with pytest.raises(ConfigError, match=r"^empathos\.roles\.user\.base_url: missing"):
        parse_settings(compose_example().empathos)


def test_example_config_composes_with_verls_default_trainer_config(tmp_path: Path) -> None:
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config
    from verl_setup import compose_example

    from empathos.integrations.verl.settings import parse_settings

    cfg = compose_example(_launch_args(tmp_path)[2:])
    assert cfg.algorithm.adv_estimator == "mapo_dialogue"
    algo = omega_conf_to_dataclass(cfg.algorithm)
    assert isinstance(algo, AlgoConfig) and algo.gamma == 0.85 != AlgoConfig().gamma
    actor = omega_conf_to_dataclass(cfg.actor_rollout_ref.actor)
    assert (actor.clip_ratio_low, actor.clip_ratio_high, actor.clip_ratio_c) == (0.2, 0.28, 10.0)
    assert (actor.optim.lr, actor.optim.weight_decay) == (1e-6, 0.1)
    # verl's engine: lr_warmup_steps when > 0, else int(lr_warmup_steps_ratio * total steps)
    steps = cfg.trainer.total_epochs * -(-16 // cfg.data.train_batch_size)
    optim = actor.optim
    warmup = optim.lr_warmup_steps if optim.lr_warmup_steps > 0 else int(
        optim.lr_warmup_steps_ratio * steps)  # fmt: skip
    assert warmup == 1 and int(0.05 * 15) == 0, "a 5% ratio would give no warm-up at all"
    assert cfg.actor_rollout_ref.rollout.n == 4 and cfg.data.train_batch_size == 16
    assert cfg.actor_rollout_ref.rollout.multi_turn.max_assistant_turns == 15
    assert cfg.actor_rollout_ref.rollout.agent.default_agent_loop == "empathos_dialogue"
    assert cfg.trainer.use_v1
    settings = parse_settings(cfg.empathos)
    assert (settings.sandbox.max_turns, settings.sandbox.min_turns) == (15, 8)
    # keys verl's default config does not have would have failed the compose; its checks pass
    validate_config(config=cfg, use_reference_policy=need_reference_policy(cfg),
                    use_critic=need_critic(cfg))  # fmt: skip
    OmegaConf.resolve(cfg)  # every interpolation resolves


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


def test_settings_that_rewrite_response_mask_before_the_estimator_are_refused_at_start(
    tmp_path: Path,
) -> None:
    """``rollout_rs`` in verl's decoupled mode rewrites ``response_mask`` after the KL and
    before the estimator: the agent loop refuses it when it starts (on the config verl hands
    it), naming the setting; in bypass mode the rejection applies in the loss: allowed."""
    from verl_setup import compose_example

    from empathos.errors import ConfigError
    from empathos.integrations.verl.checks import refuse_mask_rewrites

    base = _launch_args(tmp_path)[2:]
    rs = [*base, "algorithm.rollout_correction.rollout_rs=token_k1",
          "algorithm.rollout_correction.rollout_rs_threshold=2.0"]  # fmt: skip
    with pytest.raises(ConfigError, match=r"^algorithm\.rollout_correction\.rollout_rs: "):
        refuse_mask_rewrites(compose_example(rs).algorithm)
    refuse_mask_rewrites(compose_example([*rs, "algorithm.rollout_correction.bypass_mode=true"]
                                         ).algorithm)  # fmt: skip
    refuse_mask_rewrites(compose_example(base).algorithm)
