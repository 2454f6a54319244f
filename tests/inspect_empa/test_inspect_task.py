"""The ``empa`` task run by the real inspect-ai, every role on a loopback OpenAI-compatible
server (Inspect's ``openai-api`` provider): the log, the failure of one role, the metrics
against ``empathos score``, re-scoring, the dialogues against ``empathos run``, and the
``inspect eval`` / ``inspect score`` command lines with the registered task and scorer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'empathos[inspect]'")

from empa_server import RoleServer, model_name
from inspect_ai import eval as inspect_eval
from inspect_ai import score as inspect_score
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import get_model
from typer.testing import CliRunner

from empathos.cli.main import app
from empathos.integrations.inspect import epmq
from empathos.integrations.inspect.transcript import RECORD_KEY, TURNS_KEY
from empathos.records import load_records

FAILING = "en-03-lease"  # its judge answers HTTP 503 (empa_server.FAILING)
FAILING_TOPIC = "Got a letter today. The landlord"
CASES = ("en-01-sourdough", "en-10-dinner-table", FAILING)
TURN_ARGS = {"max_turns": 5, "min_turns": 2}
SANDBOX = ("user", "director", "judge")
ROLES = ("tested", *SANDBOX)
METRICS = ("epmq", "outcome", "efficiency", "stability", "success_rate")
runner = CliRunner()


@pytest.fixture(scope="module")
def run(server: RoleServer, tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """Three scenarios, two epochs, through ``inspect_ai.eval``. The judge's client makes one
    HTTP attempt per Inspect attempt (the SDK's own retries off), so Inspect's
    ``max_retries=1`` alone decides how often a failing call is tried."""
    judge = get_model(model_name("judge"), memoize=False, max_retries=0)
    roles = {"user": model_name("user"), "director": model_name("director"), "judge": judge}
    [log] = inspect_eval(
        "empathos/empa",
        model=model_name("tested"),
        model_roles=roles,
        task_args={"cases": ",".join(CASES), **TURN_ARGS},
        epochs=2,
        max_retries=1,
        log_dir=str(tmp_path_factory.mktemp("logs")),
        display="none",
    )
    return log


def _leaderboard(path: Path, preset: str = "reference") -> dict[str, Any]:
    res = runner.invoke(app, ["score", str(path), "--format", "json", "--preset", preset])
    assert res.exit_code == 0, res.output
    [row] = json.loads(res.stdout)
    assert isinstance(row, dict)
    return row


def _imported(log: EvalLog, out: Path) -> Path:
    res = runner.invoke(app, ["import-inspect", log.location, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "wrote 6 record(s)" in res.stdout and "2 ended as errors" in res.stdout
    return out


def test_the_log_holds_one_sample_per_scenario_and_epoch(run: EvalLog) -> None:
    assert run.status == "success" and run.eval.task == "empathos/empa"
    samples = {(str(s.id), s.epoch): s for s in run.samples or []}
    assert set(samples) == {(case, epoch) for case in CASES for epoch in (1, 2)}
    for (case, epoch), sample in samples.items():
        record = sample.store[RECORD_KEY]
        assert record["metadata"]["dialogue_id"] == f"{case}__t{epoch - 1}"
        assert sample.metadata["language"] == "en" and sample.metadata["difficulty"]
        if case == FAILING:
            continue
        assert sample.error is None
        turns = record["turns"]
        assert len(turns) == record["total_turns"] >= 4
        # the turns read as turns in `inspect view`: text, one line per turn
        lines = sample.store[TURNS_KEY].splitlines()
        assert [line.split(" | ")[0] for line in lines] == [f"turn {t['index']}" for t in turns]
        assert all(line.count(".Prog ") == 3 and line.count(".Neg ") == 3 for line in lines)
        assert all("| director continue" in line for line in lines[:-1])
        # every role's model events carry the role, the model under test's included
        roles = {e.model: e.role for e in sample.events if e.event == "model"}
        assert roles == {model_name(r): r for r in ROLES}
        # the transcript is the model under test's view: its system prompt, then the chat
        assert [m.role for m in sample.messages] == ["system"] + ["user", "assistant"] * len(turns)
        assert [m.text for m in sample.messages[1::2]] == [t["user"] for t in turns]
        assert [m.text for m in sample.messages[2::2]] == [t["assistant"] for t in turns]
        assert sample.output.completion == turns[-1]["assistant"]
    # the scripted judge: full progress on en-01 (success on turn 4), little on en-10
    assert samples[("en-01-sourdough", 1)].scores["epmq"].metadata["success"] is True
    assert samples[("en-01-sourdough", 1)].scores["epmq"].metadata["turns"] == 4
    assert samples[("en-10-dinner-table", 2)].scores["epmq"].metadata["success"] is False


def test_a_failing_role_is_an_error_of_its_sample_only(run: EvalLog, server: RoleServer) -> None:
    errored = sorted((str(s.id), s.epoch) for s in run.samples or [] if s.error)
    assert errored == [(FAILING, 1), (FAILING, 2)]
    evaluations = 0
    for sample in run.samples or []:
        if sample.error is not None:
            # as in `empathos run`: each failed judge call is an unscored turn and the dialogue
            # goes on, until the failures end it as error, the reason in one line (the 503)
            message, record = sample.error.message, sample.store[RECORD_KEY]
            assert "\n" not in message and "RetryError" not in message
            assert (
                "judge call failed" in message and "InternalServerError: Error code: 503" in message
            )
            assert record["termination"]["kind"] == "error"
            assert len(record["turns"]) == len(record["evaluations"]) >= 2
            assert not any(e["scored"] for e in record["evaluations"])
            evaluations += len(record["evaluations"])
    # Inspect's retries, as configured: max_retries=1 is two attempts of each judge call
    # (its P_0 is stored: the first call is turn 1's rating)
    failed = [
        r for r in server.requests("judge") if any(FAILING_TOPIC in m.content for m in r.messages)
    ]
    assert len(failed) == 2 * evaluations
    results = run.results
    assert results is not None
    assert results.total_samples == 6 and results.completed_samples == 4
    [scores] = results.scores
    assert scores.scored_samples == 4 and scores.metrics["scored"].value == 4


def test_metrics_equal_empathos_score_on_the_same_dialogues(run: EvalLog, tmp_path: Path) -> None:
    row = _leaderboard(_imported(run, tmp_path))
    assert row["n"] == 4 and row["extra"]["errors"] == 2
    assert run.results is not None
    metrics = {name: m.value for name, m in run.results.scores[0].metrics.items()}
    assert metrics["success_rate"] == 0.5
    for name in METRICS:
        assert metrics[name] == pytest.approx(row[name], abs=0.01), name


def test_inspect_score_rescores_the_log_under_another_preset(run: EvalLog, tmp_path: Path) -> None:
    rescored = inspect_score(run, epmq(preset="paper"), action="overwrite", display="none")
    assert rescored.results is not None
    paper = {name: m.value for name, m in rescored.results.scores[0].metrics.items()}
    row = _leaderboard(_imported(run, tmp_path), preset="paper")
    reference = {name: m.value for name, m in (run.results.scores[0].metrics.items())}  # type: ignore[union-attr]
    assert paper["epmq"] != pytest.approx(reference["epmq"], abs=0.5)  # the preset counts
    for name in METRICS:
        assert paper[name] == pytest.approx(row[name], abs=0.01), name


def test_the_dialogues_are_those_of_empathos_run(
    run: EvalLog, server: RoleServer, tmp_path: Path
) -> None:
    """Same roles, same scenarios: ``empathos run`` and the task hold the same dialogues
    (one turn loop, one set of prompts, one EPM)."""
    roles = {role: server.url(role) for role in SANDBOX}
    roles["model_under_test"] = server.url("tested")
    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "roles": {
                    name: {"base_url": url, "model": "m", "retry": {"max_attempts": 1}}
                    for name, url in roles.items()
                }
            }
        ),
        encoding="utf-8",
    )
    cases = "en-01-sourdough,en-10-dinner-table"
    args = ["run", "--config", str(config), "--out", str(tmp_path / "out"), "--cases", cases]
    res = runner.invoke(app, [*args, "--max-turns", "5", "--min-turns", "2"])
    assert res.exit_code == 0, res.output
    ours, errors = load_records([tmp_path / "out"])
    assert not errors and len(ours) == 2
    by_case = {str(s.id): s.store[RECORD_KEY] for s in run.samples or [] if s.epoch == 1}
    for item in ours:
        mine = item.record.model_dump(mode="json")
        theirs = by_case[item.record.scenario_id]
        for key in ("turns", "evaluations", "director", "termination", "total_turns", "iedr"):
            assert mine[key] == theirs[key], key


def test_inspect_eval_and_score_command_lines(server: RoleServer, tmp_path: Path) -> None:
    """``inspect eval empathos/empa`` finds the task through the entry point; ``-T roles``
    is every sandbox role's model unless ``--model-role`` binds one; ``inspect score``
    finds the scorer."""
    inspect = Path(sys.executable).with_name("inspect")
    before = len(server.requests("judge"))
    command = [
        str(inspect), "eval", "empathos/empa", "--model", model_name("tested"),
        "--model-role", f"judge={model_name('judge')}", "-T", f"roles={model_name('sandbox')}",
        "-T", "cases=en-01-sourdough", "-T", "max_turns=4", "-T", "min_turns=2",
        "--log-dir", str(tmp_path), "--display", "plain",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.task == "empathos/empa" and len(log.samples or []) == 1
    [sample] = log.samples or []
    record = sample.store[RECORD_KEY]
    assert record["termination"]["kind"] == "success_positional"
    # -T roles binds the task's model roles: each role's events still carry its own role
    roles = {e.role for e in sample.events if e.event == "model"}
    assert roles == {"tested", *SANDBOX}
    assert record["roles"] == {
        "user": model_name("sandbox"),
        "director": model_name("sandbox"),
        "judge": model_name("judge"),
    }
    sandbox = server.requests("sandbox")
    assert sandbox and not any(r.response_schema for r in sandbox)  # user and director only
    assert len(server.requests("judge")) - before == 4  # the judge rated each of 4 turns

    out = tmp_path / "paper.eval"
    rescore = [str(inspect), "score", str(path), "--scorer", "empathos/epmq", "-S", "preset=paper"]
    rescore += ["--action", "append", "--output-file", str(out), "--display", "plain"]
    # docs/inspect.md's command, without a terminal: a new --output-file asks nothing
    done = subprocess.run(
        rescore, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [sample] = read_eval_log(str(out)).samples or []
    assert sample.scores is not None
    presets = [s.metadata["preset"] for s in sample.scores.values() if s.metadata]
    assert sorted(presets) == ["paper", "reference"]  # appended beside the eval's own score
