"""The judge meta-check (``empathos/empa_judge_check``) run by Inspect on ``mockllm`` judges
that behave well and badly: a judge that reads the reply passes; one that credits the words
of empathy, or one whose levels wander between repeats, fails the check it should."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'empathos[inspect]'")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from mock_roles import Levels, judge_model

from empathos.integrations.inspect.judge_check import (
    ENGAGED,
    STUFFED,
    check_ratings,
    judge_checked,
    rate_twice,
)


def _check(levels: Levels, tmp_path: Path) -> EvalLog:
    [log] = inspect_eval(
        "empathos/empa_judge_check",
        model="mockllm/model",  # never called
        model_roles={"judge": judge_model(levels)},
        task_args={"repeats": 3},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def _result(log: EvalLog) -> tuple[float, dict]:
    [sample] = log.samples or []
    assert sample.scores is not None
    [score] = sample.scores.values()
    return float(score.value), score.metadata or {}  # type: ignore[arg-type]


def test_a_judge_that_reads_the_reply_passes(tmp_path: Path) -> None:
    log = _check(lambda text: (2, 0) if ENGAGED in text else (0, -1), tmp_path)
    value, meta = _result(log)
    assert value == 1 and meta["stable"] and meta["keywords_not_rewarded"]
    assert meta["net_engaged"] == 6 and meta["net_stuffed"] == -3
    assert len(meta["ratings"]["engaged"]) == len(meta["ratings"]["stuffed"]) == 3


def test_a_judge_that_credits_keywords_fails(tmp_path: Path) -> None:
    log = _check(lambda text: (2, 0) if STUFFED in text else (1, 0), tmp_path)
    value, meta = _result(log)
    assert value == 0 and meta["stable"] and not meta["keywords_not_rewarded"]


def test_a_judge_whose_levels_wander_fails(tmp_path: Path) -> None:
    wander = itertools.cycle([(2, 0), (0, -2)])
    log = _check(lambda text: next(wander) if ENGAGED in text else (0, 0), tmp_path)
    value, meta = _result(log)
    assert value == 0 and not meta["stable"]
    assert max(meta["spread"].values()) == 2


def test_the_solver_and_scorer_in_a_task_of_ones_own(tmp_path: Path) -> None:
    """``rate_twice`` and ``judge_checked`` outside the registered task: two repeats."""
    task = Task(
        dataset=[Sample(id="mine", input="-")], solver=rate_twice(2), scorer=judge_checked()
    )
    [log] = inspect_eval(
        task,
        model="mockllm/model",
        model_roles={"judge": judge_model(lambda text: (1, 0) if ENGAGED in text else (0, 0))},
        log_dir=str(tmp_path),
        display="none",
    )
    value, meta = _result(log)
    assert value == 1 and len(meta["ratings"]["engaged"]) == 2


def test_a_missing_level_counts_as_unstable() -> None:
    rated = {
        "engaged": [{"C.Prog": 2}, {"C.Prog": None}],
        "stuffed": [{"C.Prog": 0}, {"C.Prog": 0}],
    }
    assert check_ratings(rated)["stable"] is False
