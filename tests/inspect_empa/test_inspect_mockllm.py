"""The ``empa`` task end to end on Inspect's ``mockllm`` provider (no server at all), as the
Inspect Evals register asks of an eval: every role a mock model of Inspect's own, the
dialogue run, judged and scored; and the solver on its own in a task of ours."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'empathos[inspect]'")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import Model
from mock_roles import director_model, judge_model, text_model

from empathos.integrations.inspect.dataset import EmpaSettings
from empathos.integrations.inspect.solver import empa_dialogue
from empathos.integrations.inspect.transcript import RECORD_KEY

CASE = "en-01-sourdough"  # a stored P_0: the judge rates with the MDEP form only
REPLY = "That sounds heavy; what part of it weighs most today?"


def _tested() -> Model:
    return text_model("mockllm/model", lambda _: REPLY)


def _user() -> Model:
    return text_model("mockllm/user", lambda m: f"it still hurts, {len(m)} times over")


def _eval(task: str | Task, tmp_path: Path, **args: object) -> EvalLog:
    [log] = inspect_eval(
        task,
        model=_tested(),
        model_roles={
            "user": _user(),
            "director": director_model(),
            "judge": judge_model(lambda _: (2, 0)),
        },
        log_dir=str(tmp_path),
        display="none",
        **args,  # type: ignore[arg-type]
    )
    return log


def test_the_task_end_to_end_on_mockllm(tmp_path: Path) -> None:
    log = _eval(
        "empathos/empa", tmp_path, task_args={"cases": CASE, "max_turns": 6, "min_turns": 2}
    )
    assert log.status == "success", log.error
    [sample] = log.samples or []
    record = sample.store[RECORD_KEY]
    # full progress every turn: the person's deficit closes, a success before the cap
    assert record["termination"]["kind"].startswith("success")
    assert record["turns"][0]["assistant"] == REPLY
    roles = {e.role for e in sample.events if e.event == "model"}
    assert roles == {"tested", "user", "director", "judge"}
    assert sample.scores is not None and sample.scores["epmq"].metadata["success"] is True
    assert log.results is not None and log.results.scores[0].metrics["scored"].value == 1


def test_the_solver_in_a_task_of_ones_own(tmp_path: Path) -> None:
    """``empa_dialogue`` with the rule-based director in a plain Task: only the user and the
    judge are called; a judge that sees no progress never lets the dialogue succeed."""
    settings = EmpaSettings(cases=CASE, max_turns=3, min_turns=2, director="rules")
    task = Task(dataset=[Sample(id=CASE, input="-")], solver=empa_dialogue(settings))
    [log] = inspect_eval(
        task,
        model=_tested(),
        model_roles={"user": _user(), "judge": judge_model(lambda _: (0, -2))},
        log_dir=str(tmp_path),
        display="none",
    )
    [sample] = log.samples or []
    assert sample.error is None
    record = sample.store[RECORD_KEY]
    assert not record["termination"]["kind"].startswith("success")
    assert record["total_turns"] == 3
    assert {a["source"] for a in record["director"]} == {"rules"}
