"""Runs that go wrong say so: crashes are recorded, a run where nothing finished has failed,
an empty reply of the model under test is a reply, scripted roles keep their handler's name.

The CLI runs in a subprocess over real files; the roles are real model clients over the
scripted backend, or over a real loopback HTTP server (FaultServer) for the empty reply.
"""

from __future__ import annotations

import json
from pathlib import Path

from run_helpers import empathos, index_rows, manifest, scripted_roles, write_config

from empathos.llm.testing import FaultServer, Step, completion_body
from empathos.records import read_record

TWO = "en-01-sourdough,en-02-night-shift"


def _config(tmp_path: Path, on_empty: str | None = None, **handlers: str) -> Path:
    fields: dict[str, object] = {"roles": scripted_roles(**handlers), "cases": TWO}
    fields.update(max_turns=3, concurrency=2)
    if on_empty is not None:
        fields["on_empty"] = on_empty
    return write_config(tmp_path / "run.yaml", **fields)


def test_every_dialogue_crashed_is_a_failed_run_with_error_records(tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = _config(tmp_path, model_under_test="crash")
    done = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "run FAILED: every dialogue crashed (2 of 2)" in done.stderr
    assert "report it" in done.stderr and "Traceback" not in done.stderr
    session = manifest(out)["sessions"][-1]
    assert session["status"] == "failed"
    assert (session["ran"], session["errors"], session["crashed"]) == (2, 2, 2)
    assert session["failure"] == "every dialogue crashed (2 of 2)"
    rows = index_rows(out)
    assert {r["status"] for r in rows.values()} == {"error"} and len(rows) == 2
    for row in rows.values():
        record = read_record(out / row["file"])
        assert record.error is not None
        assert record.error.type == "RuntimeError"
        assert record.error.message == "scripted bug in the model under test's handler"
        assert "RuntimeError" in record.termination.reason and "crash" in row["reason"]
        assert record.model == "scripted-model_under_test"  # grouped with the run's model
    # a crash is retried on resume, like any error dialogue
    again = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert again.returncode == 3 and manifest(out)["sessions"][-1]["crashed"] == 2


def test_one_crash_among_finished_dialogues_is_recorded_and_the_run_completes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    config = _config(tmp_path, model_under_test="crash_on_sourdough")
    done = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "crashed  en-01-sourdough__t0 (recorded as an error" in done.stderr
    assert "run FAILED" not in done.stderr
    session = manifest(out)["sessions"][-1]
    assert (session["status"], session["crashed"], session["failure"]) == ("completed", 1, None)
    rows = index_rows(out)
    assert rows["en-01-sourdough__t0"]["status"] == "error"
    assert rows["en-02-night-shift__t0"]["status"] == "done"
    crashed = read_record(out / rows["en-01-sourdough__t0"]["file"])
    assert crashed.error is not None and crashed.error.type == "RuntimeError"


def test_every_dialogue_ended_as_an_error_is_a_failed_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = _config(tmp_path, model_under_test="always_fails")
    done = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "run FAILED: every dialogue ended as an error (2 of 2)" in done.stderr
    assert "check each role's base_url, model and key" in done.stderr
    session = manifest(out)["sessions"][-1]
    assert (session["status"], session["errors"], session["crashed"]) == ("failed", 2, 0)
    for row in index_rows(out).values():
        assert read_record(out / row["file"]).error is None  # a model failure, not a crash


def _empty_length_reply() -> Step:
    body = completion_body(None)
    body["choices"][0]["finish_reason"] = "length"
    return Step.status(200, json.dumps(body))


def test_empty_reply_over_http_is_recorded_rated_and_counted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    roles = scripted_roles(judge="judge_needs_no_reply_mark")
    with FaultServer() as server:
        server.script(*[_empty_length_reply() for _ in range(20)])
        roles["model_under_test"] = {
            "kind": "openai",
            "base_url": server.url,
            "model": "reasoner",
            "retry": {"max_attempts": 1},
        }
        config = write_config(
            tmp_path / "run.yaml", roles=roles, cases="en-01-sourdough", max_turns=3
        )
        done = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
        sent = [r for r in server.requests if r.get("model") == "reasoner"]
    assert done.returncode == 0, done.stderr
    assert len(sent) == 3  # one reply per turn, none retried as a failure
    record = read_record(out / "records" / "en-01-sourdough__t0.json")
    assert record.termination.kind.value != "error" and record.total_turns == 3
    assert [(t.assistant, t.empty_reply, t.finish_reason) for t in record.turns] == [
        ("", True, "length")
    ] * 3
    # the judge saw every empty reply marked as such (its handler refuses otherwise)
    assert len(record.evaluations) == 3 and all(e.scored for e in record.evaluations)
    board = empathos("score", out, "--format", "json", cwd=tmp_path)
    rows = json.loads(board.stdout)
    assert rows[0]["model"] == "reasoner" and rows[0]["n"] == 1


def test_on_empty_error_keeps_the_error_dialogue(tmp_path: Path) -> None:
    out = tmp_path / "out"
    roles = scripted_roles()
    with FaultServer() as server:
        server.script(*[_empty_length_reply() for _ in range(5)])
        roles["model_under_test"] = {
            "kind": "openai",
            "base_url": server.url,
            "model": "reasoner",
            "retry": {"max_attempts": 1},
        }
        config = write_config(
            tmp_path / "run.yaml",
            roles=roles,
            cases="en-01-sourdough",
            max_turns=3,
            on_empty="error",
        )
        done = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    row = index_rows(out)["en-01-sourdough__t0"]
    assert row["status"] == "error" and "finish_reason: length" in row["reason"]


def test_scripted_roles_are_recorded_under_their_handler_name(tmp_path: Path) -> None:
    out = tmp_path / "out"
    roles = scripted_roles(user="slow")
    for entry in roles.values():
        del entry["model"]
    config = write_config(tmp_path / "run.yaml", roles=roles, cases="en-01-sourdough", max_turns=2)
    done = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = read_record(out / "records" / "en-01-sourdough__t0.json")
    assert record.model == "scripted:auto_reply"
    assert record.roles == {
        "user": "scripted:slow",
        "director": "scripted:auto_reply",
        "judge": "scripted:auto_reply",
    }
    assert {c.model for c in record.model_calls} <= {"scripted:slow", "scripted:auto_reply"}
    assert "smollm2" not in json.dumps(record.model_dump(mode="json"))
