"""Bad input to `empathos train` fails with one clear line, and `--resume` continues with the
run's own config (no model is loaded)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from empathos.errors import ConfigError
from empathos.train import load_train_config
from empathos.train.checkpoint import resumed_config


def test_unknown_estimator_names_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as info:
        load_train_config(None, {"estimator": "ppo_magic"})
    line = info.value.line()
    assert "ppo_magic" in line and "mapo_dialogue" in line and "grpo" in line


def test_yaml_field_errors_name_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_text("rollout:\n  rollouts_per_scenario: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_train_config(path)
    assert str(path) in info.value.line() and "rollouts_per_scenario" in info.value.line()


def test_min_turns_above_max_turns(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="min_turns"):
        load_train_config(None, {"rollout.max_turns": 2, "rollout.min_turns": 5})


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathos", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "EMPATHOS_TORCH_THREADS": "1"},
        timeout=300,
    )


def test_policy_that_is_not_a_causal_lm_is_one_line(tmp_path: Path) -> None:
    not_lm = tmp_path / "encoder"
    not_lm.mkdir()
    (not_lm / "config.json").write_text('{"model_type": "t5"}', encoding="utf-8")
    cfg = tmp_path / "train.yaml"
    cfg.write_text(
        "roles:\n"
        "  user: {kind: scripted, handler: 'empathos.train.toy:user_states_feeling'}\n"
        "  judge: {kind: scripted, handler: 'empathos.train.toy:judge_addresses_user'}\n",
        encoding="utf-8",
    )
    res = _cli(["train", "--config", str(cfg), "--policy", str(not_lm), "--out",
                str(tmp_path / "run")], tmp_path)  # fmt: skip
    assert res.returncode == 2, res.stderr
    errors = [x for x in res.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "not a causal language model" in errors[0], res.stderr
    assert "policy.path" in errors[0]
    assert "Traceback" not in res.stderr


def test_unknown_estimator_flag_exits_2(tmp_path: Path) -> None:
    res = _cli(["train", "--estimator", "nope", "--out", str(tmp_path / "run")], tmp_path)
    assert res.returncode == 2
    assert "unknown estimator 'nope'" in res.stderr and "Traceback" not in res.stderr


def _a_run(out: Path, **fields: object) -> None:
    """A run directory as a started run leaves it: its config.yaml and a checkpoint name."""
    config = load_train_config(None, {"out": out, **fields})
    out.mkdir(parents=True)
    dumped = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
    (out / "config.yaml").write_text(dumped, encoding="utf-8")
    (out / "checkpoints").mkdir()
    (out / "checkpoints" / "latest").write_text("step-000001\n", encoding="utf-8")


def test_resume_continues_with_the_runs_own_config(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _a_run(out, steps=7, lr=3e-3, **{"rollout.max_turns": 2, "rollout.min_turns": 2})
    config = resumed_config(None, {"out": out, "steps": None, "lr": None})
    assert (config.steps, config.lr, config.rollout.max_turns) == (7, 3e-3, 2)  # not defaults
    assert config.out == out
    same = resumed_config(None, {"out": out, "steps": 7})  # a flag that agrees is fine
    assert same == config


def test_resume_refuses_flags_and_a_config_that_contradict_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _a_run(out, steps=7, lr=3e-3)
    res = _cli(["train", "--resume", "--out", str(out), "--steps", "9", "--lr", "0.1"], tmp_path)
    assert res.returncode == 2, res.stderr
    errors = [x for x in res.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in res.stderr, res.stderr
    assert "steps: 9 given, 7 in the run" in errors[0] and "lr: 0.1 given" in errors[0]
    assert "--resume" in errors[0]
    other = tmp_path / "other.yaml"
    other.write_text(f"out: {out}\nsteps: 7\nlr: 0.003\nepochs: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"epochs: 3 given, 2 in the run") as info:
        resumed_config(other, {})
    assert "steps" not in info.value.line()  # what agrees is not named
    with pytest.raises(ConfigError, match="no training run to resume"):
        resumed_config(None, {"out": tmp_path / "nothing-here"})
