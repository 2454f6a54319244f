"""One setting makes SAGE's emotion the training reward: ``rollout.reward: sage_emotion`` (or
``sage_outcome``) with ``rollout.sage_data`` reaches the sandbox, and the per-turn rewards of
the advantage batch are the sandbox's (NaN on invalid turns); the EPM distance stays the
default."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
from train_helpers import english, tiny_config, toy_roles

from empathos.errors import ConfigError
from empathos.scenarios import load_builtin
from empathos.train import TrainConfig, build_trainer, sandbox_config
from empathos.train.rollout import Dialogue, Job, TurnSample, turn_arrays
from sage_copy import write_sage_copy


def test_the_setting_reaches_the_sandbox() -> None:
    assert sandbox_config(TrainConfig()).reward == "distance"
    cfg = TrainConfig.model_validate(
        {"rollout": {"reward": "sage_outcome", "sage_data": "/copies/SAGE"}}
    )
    box = sandbox_config(cfg)
    assert (box.reward, box.sage_data) == ("sage_outcome", "/copies/SAGE")
    with pytest.raises(ConfigError, match="sage_data"):
        sandbox_config(TrainConfig.model_validate({"rollout": {"reward": "sage_emotion"}}))


def _dialogue(uid: int, rewards: list[float], valid: list[bool]) -> Dialogue:
    job = Job(load_builtin().scenarios[0], uid, 0)
    turns = [TurnSample([1], [2], [-0.1], "r") for _ in rewards]
    return Dialogue(job, turns=turns, distance=[5.0] * (len(rewards) + 1),
                    norm=[1.0] * (len(rewards) + 1), delta_e=[0.0] * len(rewards),
                    valid=valid, env_reward=rewards)  # fmt: skip


def test_the_batch_carries_the_sandboxs_emotion_rewards() -> None:
    dialogues = [_dialogue(0, [0.1, -0.04, math.nan], [True, True, False]),
                 _dialogue(1, [0.05], [True])]  # fmt: skip
    rewards, _, mask, _ = turn_arrays(dialogues, "sage_emotion")
    assert rewards[0, :2].tolist() == [0.1, -0.04] and np.isnan(rewards[0, 2])
    assert rewards[1, 0] == 0.05 and np.isnan(rewards[1, 1]) and not mask[1, 1]
    epm, _, _, _ = turn_arrays(dialogues, "distance")  # the EPM default ignores them
    assert epm[0, 0] == 0.0


def test_the_manifest_names_the_sage_files_trained_against(tmp_path: Path) -> None:
    copy = write_sage_copy(tmp_path / "SAGE")
    over = {"rollout.reward": "sage_emotion", "rollout.sage_data": str(copy)}
    scenarios = english()
    build_trainer(tiny_config(tmp_path / "run", **over), toy_roles(), scenarios[:2], [])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    names = ["profile/simulator_profile_withfirsttalk.jsonl", "simulator_response.py",
             "npc_response.py"]  # fmt: skip
    assert manifest["data_files"] == {
        n: hashlib.sha256((copy / n).read_bytes()).hexdigest() for n in names
    }
    build_trainer(tiny_config(tmp_path / "epm"), toy_roles(), scenarios[:2], [])
    assert "data_files" not in json.loads((tmp_path / "epm" / "manifest.json").read_text())
