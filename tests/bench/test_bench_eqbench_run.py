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
        assert "1 errors" in " ".join(score.stdout.split())

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


def test_unparseable_answers_are_asked_again_then_counted_not_scored(tmp_path: Path) -> None:
    write_eq_questions(tmp_path)
    out = tmp_path / "run"

    def model(body: dict[str, Any]) -> str:
        qid = _question(body)
        return "I would rather not say." if qid == "2" else ratings_text(qid, 0)

    with ScriptedServer(model) as server:
        done = _run(server.url, tmp_path, out)
    assert done.exit_code == 0, done.error
    # The benchmark's retries: 3 attempts at 0.01, 0.16, 0.31, replies capped at 60 tokens.
    asked = [(b["temperature"], b["max_tokens"]) for b in server.bodies if _question(b) == "2"]
    assert asked == [(0.01, 60), (0.16, 60), (0.31, 60)]
    assert sum(_question(b) == "1" for b in server.bodies) == 1  # parsed at once
    (summary,) = json.loads(cli("bench", "score", out, "--format", "json").stdout)
    assert summary["protocol"] == "v2.1"
    assert summary["eqbench"] == {
        "score": 100.0, "first_pass": 100.0, "revised_score": None, "final_from": "first pass",
        "parseable": 2, "total": 3, "first_parseable": 2, "revised_parseable": 0,
        "benchmark_failed": True,  # 2 of 3 parsed: under the benchmark's 83%
    }  # fmt: skip
    assert (summary["unparseable"], summary["errors"]) == (1, 0)
    record = _records(out)["2"]
    assert record["unparseable"] is True and record["detail"]["attempts"] == 3
    shown = " ".join(cli("bench", "score", out).stdout.split())
    assert "FAILED: under the benchmark's 83% minimum" in shown
    assert "eqbench (v2.1 protocol): rater" in shown


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


def _revise_prompt(qid: str) -> str:
    """A prompt of our own wording in the benchmark's revise layout (its format markers)."""
    names = [name for name, _ in EQ_REFERENCES[qid]]
    slots = "\n".join(f"{n}: <score>" for n in names)
    again = "\n".join(f"{n}: <revised score>" for n in names)
    return (
        f"Question {qid}: how does Sam feel?\n" + "\n".join(names) + "\n\nRate each 0-10."
        " Then critique your ratings and give your revised scores.\n\nReply like this:\n\n"
        f"First pass scores:\n{slots}\n\nCritique: <your critique here>\n\n"
        f"Revised scores:\n{again}\n\n[End of answer]\n\nZero is allowed.\n"
    )


def _write_revise_questions(folder: Path) -> None:
    path = write_eq_questions(folder)
    data = json.loads(path.read_text())
    for qid in data:
        data[qid]["prompt"] = _revise_prompt(qid)
    path.write_text(json.dumps(data))


def test_the_default_prompt_drops_the_revision_block_and_all_zero_is_asked_again(
    tmp_path: Path,
) -> None:
    _write_revise_questions(tmp_path)
    out = tmp_path / "run"
    zeros = "\n".join(f"{n}: 0" for n, _ in EQ_REFERENCES["3"])

    def model(body: dict[str, Any]) -> str:
        qid = _question(body)
        if qid == "3" and body["temperature"] == 0.01:
            return zeros  # all zeros: rejected, asked again
        return ratings_text(qid, 0)

    with ScriptedServer(model) as server:
        done = _run(server.url, tmp_path, out)
    assert done.exit_code == 0, done.error
    sent = last_user(server.bodies[0])
    assert "Critique:" not in sent and "Revised scores:" not in sent
    assert "First pass scores:" not in sent and "critique your ratings" not in sent
    assert sent.endswith("[End of answer]\n\nZero is allowed.\n\nYour answer:\n")
    third = [b["temperature"] for b in server.bodies if _question(b) == "3"]
    assert third == [0.01, 0.16]
    (summary,) = json.loads(cli("bench", "score", out, "--format", "json").stdout)
    assert summary["eqbench"]["score"] == 100.0 and summary["eqbench"]["parseable"] == 3


def test_the_revision_variant_takes_the_revised_score_when_it_is_higher(tmp_path: Path) -> None:
    _write_revise_questions(tmp_path)
    out = tmp_path / "run"

    def model(body: dict[str, Any]) -> str:
        qid = _question(body)
        return ratings_text(qid, 1, revise=True, revised_offset=0)  # the revision is exact

    with ScriptedServer(model) as server:
        done = cli("bench", "eqbench", "--data", tmp_path, "--model", "rater", "--base-url",
                   server.url, "--out", out, "--revision")  # fmt: skip
    assert done.exit_code == 0, done.error
    assert "Critique: <your critique here>" in last_user(server.bodies[0])
    assert {b["max_tokens"] for b in server.bodies} == {600}
    (summary,) = json.loads(cli("bench", "score", out, "--format", "json").stdout)
    eq = summary["eqbench"]
    assert summary["protocol"] == "revise"
    assert eq["first_pass"] == pytest.approx(10 * ONE_OFF)
    assert eq["revised_score"] == 100.0 and eq["score"] == 100.0
    assert eq["final_from"] == "revised"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["bench"]["protocol"] == "revise"
    # A run under the other protocol is not compared with it.
    other = tmp_path / "plain"
    with ScriptedServer(lambda body: ratings_text(_question(body), 0)) as server:
        assert _run(server.url, tmp_path, other).exit_code == 0
    refused = cli("bench", "compare", other, out)
    assert refused.exit_code == 2 and refused.error is not None
    assert "revise protocol" in refused.error and "v2.1" in refused.error
