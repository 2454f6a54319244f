"""`empathos bench eqbench` against a loopback OpenAI-compatible server whose model rates
every emotion at the reference plus a known offset: exact scores, an endpoint failure as an
item error (not a wrong answer), and a rerun that asks only for what is missing."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import (
    EQ_REFERENCES,
    ScriptedServer,
    cli,
    last_user,
    ratings_text,
    write_eq_questions,
)

S1 = 6.5 / (1 + math.exp(3.6))  # the penalty of a distance of 1, by hand
ONE_OFF = 10 - 0.7477 * 4 * S1  # a question with every rating 1 too high


def _question(body: dict[str, Any]) -> str:
    return last_user(body).split(":")[0].removeprefix("Question ")


def _run(url: str, data: Path, out: Path) -> Any:
    return cli(
        "bench", "eqbench", "--data", data, "--model", "rater", "--base-url", url,
        "--out", out, "--concurrency", "2",
    )  # fmt: skip


def _records(out: Path) -> dict[str, dict[str, Any]]:
    return {
        f.stem.split("__")[0]: json.loads(f.read_text()) for f in (out / "records").glob("*.json")
    }


def test_offset_ratings_give_exact_scores_and_a_failure_is_an_error(tmp_path: Path) -> None:
    write_eq_questions(tmp_path)
    out = tmp_path / "run"
    broken = {"3"}

    def model(body: dict[str, Any]) -> str | int:
        qid = _question(body)
        if qid in broken:
            return 400  # fatal at once: no retries
        return ratings_text(qid, 1 if qid == "1" else 0)

    with ScriptedServer(model) as server:
        first = _run(server.url, tmp_path, out)
        assert first.exit_code == 1, first.error  # an item ended as an error
        recs = _records(out)
        assert recs["3"]["status"] == "error" and recs["3"]["scores"] == {}
        assert recs["1"]["scores"]["first_pass"] == pytest.approx(ONE_OFF)
        assert recs["2"]["scores"]["first_pass"] == 10.0
        assert recs["1"]["ratings"]["first_pass"] == {name: v + 1 for name, v in EQ_REFERENCES["1"]}
        # The error is no answer: the score is over the two answered questions.
        score = cli("bench", "score", out)
        assert score.exit_code == 0, score.error
        assert f"{10 * (ONE_OFF + 10) / 2:.2f}" in score.stdout
        assert "1 errors" in score.stdout

        broken.clear()
        before = len(server.bodies)
        second = _run(server.url, tmp_path, out)
        assert second.exit_code == 0, second.error
        assert [_question(b) for b in server.bodies[before:]] == ["3"]  # only what is missing

        (out / "records" / "2__t0.json").unlink()  # lost, as if in flight at Ctrl-C
        before = len(server.bodies)
        third = _run(server.url, tmp_path, out)
        assert third.exit_code == 0, third.error
        assert [_question(b) for b in server.bodies[before:]] == ["2"]
    final = _records(out)
    assert {k: r["status"] for k, r in final.items()} == {"1": "done", "2": "done", "3": "done"}
    assert f"{10 * (ONE_OFF + 20) / 3:.2f}" in third.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["bench"]["name"] == "eqbench"
    assert [s["status"] for s in manifest["sessions"]] == ["completed"] * 3


def test_unparseable_answers_are_counted_not_scored(tmp_path: Path) -> None:
    write_eq_questions(tmp_path)
    out = tmp_path / "run"

    def model(body: dict[str, Any]) -> str:
        qid = _question(body)
        return "I would rather not say." if qid == "2" else ratings_text(qid, 0)

    with ScriptedServer(model) as server:
        done = _run(server.url, tmp_path, out)
    assert done.exit_code == 0, done.error
    (summary,) = json.loads(cli("bench", "score", out, "--format", "json").stdout)
    assert summary["eqbench"] == {
        "score": 100.0, "revised_score": None, "parseable": 2, "total": 3
    }  # fmt: skip
    assert (summary["unparseable"], summary["errors"]) == (1, 0)
    assert _records(out)["2"]["unparseable"] is True


def test_a_second_run_on_a_locked_directory_is_refused(tmp_path: Path) -> None:
    from empathos.run.lock import RunLock

    write_eq_questions(tmp_path)
    out = tmp_path / "run"
    out.mkdir()
    lock = RunLock.acquire(out, "2026-01-01T00:00:00+00:00")
    try:
        result = _run("http://127.0.0.1:9/v1", tmp_path, out)
    finally:
        lock.release()
    assert result.exit_code == 2 and result.error is not None
    assert "in use by another empathos run" in result.error


def test_missing_data_is_named_in_one_line(tmp_path: Path) -> None:
    result = _run("http://127.0.0.1:9/v1", tmp_path / "nowhere", tmp_path / "run")
    assert result.exit_code == 2 and result.error is not None
    assert "--data" in result.error and "eq_bench_v2_questions_171.json" in result.error
