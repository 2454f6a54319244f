"""A dialogue with unscored judge turns through Inspect's own eval path (``mockllm`` roles):
scored as ``empathos run`` scores it (issue 45: the turn table formatted the energy of an
unscored evaluation, None, and the sample died of a TypeError), and a judge that always
fails ends its sample with the real reason in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'empathos[inspect]'")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput
from mock_roles import director_model, mock_model, text_model

from empathos.epm import EPMConfig
from empathos.integrations.inspect.transcript import RECORD_KEY, TURNS_KEY
from empathos.records import record_from_data
from empathos.scoring import score_records

CASE = "en-01-sourdough"
PRESET = "reference"


def _form(config: GenerateConfig) -> str:
    """The judge's form at no progress and no harm, every field of the schema it is given."""
    schema = config.response_schema
    assert schema is not None, "the judge is always asked for a schema"
    keys = schema.json_schema.properties or {}
    return json.dumps({k: {"level": 0, "evidence": "0", "reasoning": "mock"} for k in keys})


DOWN = "the judge's backend is down"


def _judge(fail: set[int] | None, *, calls: bool = False) -> Model:
    """A mock judge answering non-JSON on the evaluations in ``fail`` (counted from 1 by
    their first request; their re-asks fail too), or always when ``fail`` is None; with
    ``calls``, those evaluations' calls fail instead (the model raises)."""
    seen: list[str] = []

    def respond(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        key = "\n".join(m.text for m in messages[:2])
        if key not in seen:
            seen.append(key)
        if fail is None or seen.index(key) + 1 in fail:
            if calls:
                raise ConnectionError(DOWN)
            return ModelOutput.from_content("mockllm/judge", "I would rather not say.")
        return ModelOutput.from_content("mockllm/judge", _form(config))

    return mock_model("mockllm/judge", respond)


def _eval(
    tmp_path: Path, fail: set[int] | None, *, calls: bool = False, min_turns: int = 2
) -> EvalLog:
    [log] = inspect_eval(
        "empathos/empa",
        model=text_model("mockllm/model", lambda _: "That sounds heavy."),
        model_roles={
            "user": text_model("mockllm/user", lambda m: f"it hurts, {len(m)} times over"),
            "director": director_model(),
            "judge": _judge(fail, calls=calls),
        },
        task_args={"cases": CASE, "max_turns": 6, "min_turns": min_turns},
        log_dir=str(tmp_path),
        display="none",
    )
    return log


def test_unscored_turns_are_scored_as_run_scores_them(tmp_path: Path) -> None:
    log = _eval(tmp_path, {6})
    [sample] = log.samples or []
    assert sample.error is None, sample.error
    record = record_from_data(sample.store[RECORD_KEY], file=tmp_path / "sample")
    assert [e.scored for e in record.evaluations] == [True] * 5 + [False]
    assert "judge unscored" in sample.store[TURNS_KEY]
    row = score_records("m", [record], EPMConfig.preset(PRESET))  # what `score` computes
    assert row.epmq is not None and row.extra["unscored_evaluations"] == 1
    assert sample.scores is not None
    assert sample.scores["epmq"].value == pytest.approx(row.epmq)


def test_a_judge_that_always_fails_ends_the_sample_with_the_real_reason(tmp_path: Path) -> None:
    log = _eval(tmp_path, None)
    [sample] = log.samples or []
    assert sample.error is not None
    message = sample.error.message
    assert "TypeError" not in message and "\n" not in message
    assert "evaluations unscored" in message and "the reply is not a JSON object" in message
    assert sample.store[RECORD_KEY]["termination"]["kind"] == "error"


def test_a_failed_judge_call_is_an_unscored_turn_and_the_dialogue_goes_on(tmp_path: Path) -> None:
    """As in ``empathos run``: one failed judge call (within judge_failures_limit and the
    unscored share) leaves its turn unscored; the sample is not an error (issue 49b)."""
    log = _eval(tmp_path, {5}, calls=True)  # 1 of 5 unscored: within the share limit (20%)
    [sample] = log.samples or []
    assert sample.error is None, sample.error
    record = record_from_data(sample.store[RECORD_KEY], file=tmp_path / "sample")
    assert [e.scored for e in record.evaluations] == [True] * 4 + [False, True]
    reason = record.evaluations[4].unscored_reason or ""
    assert "judge call failed" in reason and DOWN in reason, reason
    assert record.termination.kind.value == "timeout" and record.total_turns == 6
    row = score_records("m", [record], EPMConfig.preset(PRESET))
    assert sample.scores is not None
    assert sample.scores["epmq"].value == pytest.approx(row.epmq)


def test_a_judge_whose_calls_always_fail_ends_the_sample_in_one_line(tmp_path: Path) -> None:
    """Past the limits, the dialogue ends as error as ``run`` ends it, the sample's error the
    ending's reason in one line, naming the judge's real failure."""
    log = _eval(tmp_path, None, calls=True)
    [sample] = log.samples or []
    assert sample.error is not None
    message = sample.error.message
    assert "\n" not in message and "Traceback" not in message
    assert "evaluations unscored" in message and f"ConnectionError: {DOWN}" in message, message
    stored = sample.store[RECORD_KEY]
    assert stored["termination"]["kind"] == "error" and len(stored["evaluations"]) == 2


def test_a_judge_failing_past_judge_failures_limit_ends_as_run_ends_it(tmp_path: Path) -> None:
    """No unscored-share check before min_turns: the judge's failed calls end the dialogue at
    judge_failures_limit (3) evaluations in a row, as ``run``'s sandbox does, in one line."""
    log = _eval(tmp_path, None, calls=True, min_turns=6)
    [sample] = log.samples or []
    assert sample.error is not None
    message = sample.error.message
    assert "\n" not in message and f"ConnectionError: {DOWN}" in message, message
    assert "the judge failed 3 evaluations in a row (judge_failures_limit)" in message, message
    stored = sample.store[RECORD_KEY]
    assert stored["termination"]["kind"] == "error" and stored["termination"]["turn"] == 3
    assert [e["scored"] for e in stored["evaluations"]] == [False] * 3
