"""Training on the simulation through the registry, and `empathos rl compare` end to end."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats as sps

from empathos.errors import ConfigError
from empathos.rl import advantages as adv_mod
from empathos.rl.advantages import register_estimator
from empathos.rl.batch import AdvantageConfig, AdvantageResult, TurnBatch
from empathos.rl.compare import (
    CompareConfig,
    aggregate,
    interval,
    rate_interval,
    run_compare,
    write_outputs,
)
from empathos.rl.sim_training import TrainConfig, TrainResult, train

TINY = TrainConfig(steps=4, scenarios_per_step=4, eval_personas=8, eval_every=2)


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/rl/conftest.py


def test_training_is_deterministic_under_seed() -> None:
    a, b = train(TINY, seed=3), train(TINY, seed=3)
    assert a.train == b.train and a.eval == b.eval
    assert train(TINY, seed=4).train != a.train


@pytest.mark.slow
def test_policy_improves_with_mapo() -> None:
    cfg = TrainConfig(steps=25, eval_personas=32, eval_every=25)
    res = train(cfg, seed=0)
    assert res.eval_steps == [0, 25]
    assert res.eval["epmq"][-1] > res.eval["epmq"][0] + 5
    assert res.eval["final_distance"][-1] < res.eval["final_distance"][0]


def test_trainer_goes_through_the_registry_only() -> None:
    name = "test_zero_advantage"

    @register_estimator(name)
    def zero(batch: TurnBatch, cfg: AdvantageConfig) -> AdvantageResult:
        mask = np.asarray(batch.turn_mask)
        z = np.zeros(mask.shape)
        return AdvantageResult(z, mask, z, {})

    try:
        torch.manual_seed(0)
        res = train(TINY.model_copy(update={"estimator": name}), seed=0)
        # zero advantages give zero gradients: the policy never changes, so every eval
        # (same personas, same sampling seed per step) sees the same initial policy
        assert res.train["clip_frac"] == [0.0] * TINY.steps
        assert res.train["approx_kl"] == [0.0] * TINY.steps
    finally:
        del adv_mod._REGISTRY[name]
    with pytest.raises(ConfigError, match="valid"):
        train(TINY.model_copy(update={"estimator": "nope"}), seed=0)


def test_interval_is_a_t_interval() -> None:
    s = interval([1.0, 2.0, 3.0])
    half = sps.t.ppf(0.975, 2) / math.sqrt(3)
    assert (s.mean, s.std) == (2.0, 1.0)
    assert s.low == pytest.approx(2.0 - half) and s.high == pytest.approx(2.0 + half)
    assert math.isnan(interval([1.0]).low)


@pytest.mark.slow
def test_cli_compare_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    cmd = [sys.executable, "-m", "empathos", "rl", "compare", "--estimators", "mapo,grpo"]
    cmd += ["--seeds", "2", "--steps", "3", "--out", str(out), "--quick"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "SIMULATION" in run.stdout and "mapo" in run.stdout and "grpo" in run.stdout
    doc = json.loads((out / "compare.json").read_text())
    assert "SIMULATION" in doc["label"]
    assert [r["estimator"] for r in doc["table"]] == ["mapo", "grpo"]
    for row in doc["table"]:
        assert row["seeds"] == 2
        for metric in ("success", "epmq", "final_distance", "auc_success"):
            m = row[metric]
            assert m["low"] <= m["mean"] <= m["high"]
    assert "success_minus_grpo" in doc["table"][0]
    curves = doc["curves"]["grpo"]
    assert len(curves) == 2 and len(curves[0]["train"]["success"]) == 3
    for png in ("curve_eval_success.png", "curve_eval_epmq.png", "curve_train_return.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_json_is_strict_even_with_one_seed(tmp_path: Path) -> None:
    cfg = CompareConfig(estimators=["mapo", "grpo"], seeds=1, train=TINY)
    runs = run_compare(cfg)
    table = aggregate(runs)
    assert math.isnan(table[0]["success"]["low"])  # one seed: no interval
    write_outputs(cfg, runs, table, tmp_path)

    def refuse(name: str) -> None:
        raise AssertionError(f"non-standard JSON constant {name}")

    doc = json.loads((tmp_path / "compare.json").read_text(), parse_constant=refuse)
    row = doc["table"][0]
    assert row["success"]["low"] is None and row["success"]["mean"] == table[0]["success"]["mean"]


def test_cli_compare_unknown_estimator_is_one_line(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "empathos", "rl", "compare", "--estimators", "mapo,ppo_gae"]
    run = subprocess.run([*cmd, "--out", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "ppo_gae" in run.stderr and "mapo_dialogue" in run.stderr


def test_cli_compare_unusable_out_fails_before_training(tmp_path: Path) -> None:
    taken = tmp_path / "a-file"
    taken.write_text("not a folder", encoding="utf-8")
    cmd = [sys.executable, "-m", "empathos", "rl", "compare", "--estimators", "grpo"]
    cmd += ["--seeds", "1", "--steps", "1", "--out", str(taken)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().startswith(f"error: {taken}: --out: cannot create")
    assert "SIMULATION" not in run.stdout  # nothing was trained
    assert taken.read_text(encoding="utf-8") == "not a folder"


def _result(success: float) -> TrainResult:
    ev = {"success": [0.0, success], "epmq": [50.0, 60.0], "final_distance": [9.0, 8.0]}
    ev["length"] = [12.0, 11.0]
    return TrainResult(train={}, eval_steps=[0, 10], eval=ev)


def test_rate_intervals_stay_inside_their_range() -> None:
    # rates near 0 over few seeds: a t-interval would reach below 0
    runs = {
        "grpo": [_result(s) for s in (0.05, 0.0, 0.0, 0.0)],
        "mapo_dialogue": [_result(s) for s in (0.0, 0.0, 0.0, 0.05)],
        "turn_only": [_result(s) for s in (1.0, 1.0, 0.95, 1.0)],
    }
    rows = {r["estimator"]: r for r in aggregate(runs)}
    for row in rows.values():
        for metric in ("success", "auc_success"):
            summary = row[metric]
            assert 0.0 <= summary["low"] <= summary["mean"] <= summary["high"] <= 1.0, row
    for name in ("mapo_dialogue", "turn_only"):
        diff = rows[name]["success_minus_grpo"]
        assert -1.0 <= diff["low"] <= diff["mean"] <= diff["high"] <= 1.0
    s = rate_interval([0.0, 0.0, 0.0, 0.05])
    assert s.low == 0.0 and s.high <= 0.05  # within the smallest and largest value
    assert rate_interval([0.3, 0.3]).low == 0.3  # no spread: a point
    assert math.isnan(rate_interval([0.3]).low)  # one seed: no interval
