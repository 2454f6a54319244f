"""The length-choice SIMULATION (empathos.rl.sim_length) and `rl compare --env length`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from empathos.rl.sim_length import CLOSE, CONTINUE, LengthSimConfig, length_step, optimal_length
from empathos.rl.sim_training import Policy, TrainConfig, length_rollout, train

TINY = TrainConfig(env="length", steps=4, scenarios_per_step=4, eval_personas=8, eval_every=2)


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/rl/conftest.py


def test_best_length_by_hand() -> None:
    # defaults: continuing pays 0.1, closing at t pays 3 (t / 6)^2 up to t = 6, then 0.5 less
    # per turn. Discounted return of closing at L: 0.1 * sum_{t < L} g^(t-1) + g^(L-1) c_L.
    for gamma in (0.85, 1.0):
        close = [3 * (t / 6) ** 2 if t <= 6 else 3 - 0.5 * (t - 6) for t in range(1, 11)]
        value = [
            sum(0.1 * gamma**j for j in range(L - 1)) + gamma ** (L - 1) * close[L - 1]
            for L in range(1, 11)
        ]
        assert int(np.argmax(value)) + 1 == 6 == optimal_length(LengthSimConfig(), gamma)
    # a high overstay-free closing reward late and a large turn reward: time out instead
    assert optimal_length(LengthSimConfig(turn_reward=2.0, close_reward=0.5), 1.0) == 10
    assert optimal_length(LengthSimConfig(ripe_turn=3), 0.85) == 3


def test_step_pays_the_closing_reward_and_ends_only_on_close_or_timeout() -> None:
    cfg = LengthSimConfig(noise=0.0, judge_fail=0.0)
    rng = np.random.default_rng(0)
    action = np.array([CONTINUE, CLOSE])
    reward, scored, done = length_step(cfg, action, 2, rng)  # turn 3
    np.testing.assert_allclose(reward, [0.1, 3 * (3 / 6) ** 2])
    assert scored.all() and done.tolist() == [False, True]
    _, _, done = length_step(cfg, np.array([CONTINUE]), cfg.max_turns - 1, rng)
    assert done.tolist() == [True]
    failing = cfg.model_copy(update={"judge_fail": 1.0})
    reward, scored, _ = length_step(failing, action, 0, rng)
    assert np.isnan(reward).all() and not scored.any()


def test_rollout_lengths_are_the_closing_turns() -> None:
    cfg = LengthSimConfig()
    torch.manual_seed(0)
    policy = Policy(cfg.max_turns + 1, 2, 16)
    roll = length_rollout(
        policy, 5, 4, cfg, np.random.default_rng(1), torch.Generator().manual_seed(1)
    )
    lengths = roll.turn_mask.sum(axis=1)
    assert roll.uid.tolist() == [u for u in range(5) for _ in range(4)]
    for b, n in enumerate(lengths):
        assert roll.turn_mask[b, :n].all() and not roll.turn_mask[b, n:].any()
        closed = roll.actions[b, n - 1] == CLOSE
        assert closed or n == cfg.max_turns
        assert roll.success[b] == (closed and n == 6)
    assert not (roll.valid & ~roll.turn_mask).any()


def test_training_on_the_length_choice_is_deterministic_and_reports_length() -> None:
    a, b = train(TINY, seed=2), train(TINY, seed=2)
    assert a.eval == b.eval
    assert set(a.eval) == {"success", "return", "length", "length_gap"}
    gaps = np.asarray(a.eval["length"]) - 6
    np.testing.assert_allclose(a.eval["length_gap"], gaps)


@pytest.mark.slow
def test_mapo_closes_early_where_turnwise_finds_the_best_length() -> None:
    cfg = TrainConfig(env="length", steps=20, eval_personas=32, eval_every=20)
    mapo = train(cfg, seed=0).eval["length"][-1]
    turnwise = train(cfg.model_copy(update={"estimator": "mapo_turnwise"}), seed=0)
    assert turnwise.eval["length"][-1] > mapo + 1.5
    assert abs(turnwise.eval["length_gap"][-1]) < 1.0


@pytest.mark.slow
def test_cli_compare_on_the_length_choice(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    cmd = [sys.executable, "-m", "empathos", "rl", "compare", "--env", "length"]
    cmd += ["--estimators", "mapo_turnwise,grpo", "--seeds", "2", "--steps", "2", "--quick"]
    run = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "best length 6" in run.stdout and "SIMULATION" in run.stdout
    doc = json.loads((out / "compare.json").read_text())
    assert doc["config"]["train"]["env"] == "length"
    for row in doc["table"]:
        for metric in ("success", "return", "length", "length_gap", "length_drift"):
            assert row[metric]["low"] <= row[metric]["mean"] <= row[metric]["high"]
    assert (out / "curve_eval_length.png").read_bytes()[:4] == b"\x89PNG"
    bad = subprocess.run([*cmd[:6], "moon"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--env" in bad.stderr
