"""`bench` commands on a bad file or record, as `score` handles them: named on stderr,
skipped, exit 1, the rest reported; and one rounding rule for a benchmark's numbers wherever
they are shown (issue 45: `bench score` 70.70 against `bench compare` 70.68 for one
EQ-Bench 3 run; EmoBench's summary 35.25 above a table's 35.2)."""

from __future__ import annotations

import json
from pathlib import Path

from bench_helpers import ScriptedServer, write_eq_questions
from emobench_fixture import answer, write_emobench
from eqbench3_fixture import scripted, write_eqbench3
from test_bench_eqbench_score import _write_result
from typer.testing import CliRunner, Result

from empathos.cli.main import app


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def _emobench_run(tmp: Path) -> Path:
    data = write_emobench(tmp / "EmoBench")
    with ScriptedServer(answer) as server:
        done = run("bench", "emobench", "--data", data, "--model", "m", "--base-url",
                   server.url, "--out", tmp / "emo")  # fmt: skip
    assert done.exit_code == 1, done.output  # one item fails at the endpoint (an error)
    return tmp / "emo"


def test_eqbench_score_reports_the_good_file_beside_a_bad_one(tmp_path: Path) -> None:
    write_eq_questions(tmp_path)
    good = _write_result(tmp_path / "results" / "eq-bench" / "good.json", {"1": 0}, 100.0, 3)
    bad = good.with_name("bad.json")
    bad.write_text("{not json", encoding="utf-8")
    res = run("bench", "eqbench", "score", good, bad, "--format", "json")
    assert res.exit_code == 1
    (row,) = json.loads(res.stdout)
    assert row["file"] == str(good) and row["reproduced"] is True
    assert f"{bad}" in res.stderr and "not valid JSON" in res.stderr and "skipped" in res.stderr


def test_score_and_compare_skip_a_corrupt_record_and_report_the_rest(tmp_path: Path) -> None:
    out = _emobench_run(tmp_path)
    victim = out / "records" / "EU-en-1__t0.json"
    assert victim.is_file()
    victim.write_bytes(victim.read_bytes()[:40])  # cut short
    commands: list[list[str | Path]] = [
        ["bench", "score", out, "--format", "json"],
        ["score", out, "--format", "json"],
    ]
    for args in commands:
        res = run(*args)
        assert res.exit_code == 1, res.output
        assert str(victim) in res.stderr and "skipped" in res.stderr
        (summary,) = json.loads(res.stdout)
        assert summary["items"] == 8  # nine, less the corrupt one
    shown = run("bench", "compare", out, out)
    assert shown.exit_code == 1
    assert str(victim) in shown.stderr and "EU emotion" in shown.stdout


def _cells(text: str, first: str) -> list[str]:
    """The cells of the table row whose first cell is ``first``."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in:\n{text}")


def test_one_rounding_rule_for_eqbench3_in_score_and_compare(tmp_path: Path) -> None:
    data = write_eqbench3(tmp_path / "eqbench3")
    out = tmp_path / "run"
    with ScriptedServer(scripted) as server:
        done = run("bench", "eqbench3", "--data", data, "--model", "tested", "--base-url",
                   server.url, "--roles-model", "judge", "--roles-base-url", server.url,
                   "--out", out)  # fmt: skip
    assert done.exit_code == 0, done.output
    record = out / "records" / "401__t0.json"
    doc = json.loads(record.read_text(encoding="utf-8"))
    doc["scores"]["task"] = 13.4133  # mean(14, 13.4133) = 13.70665: 13.71 x 5 = 68.55
    record.write_text(json.dumps(doc), encoding="utf-8")
    score = run("bench", "score", out)
    compare = run("bench", "compare", out, out)
    assert score.exit_code == 0 and compare.exit_code == 0
    assert _cells(score.stdout, "rubric")[1] == "68.55"
    assert _cells(compare.stdout, "rubric")[1:4] == ["68.55", "68.55", "+0.00"]


def test_one_rounding_rule_for_emobench_in_its_two_tables(tmp_path: Path) -> None:
    out = _emobench_run(tmp_path)
    text = run("bench", "score", out).stdout
    measure = _cells(text, "EU emotion")[1]  # the measures table: 3 of 5 right
    per_language = [
        [c.strip() for c in line.strip("│ ").split("│")]
        for line in text.splitlines()
        if "EU emotion" in line and "│ all" in line
    ]
    assert measure == "60.00" and per_language[0][2] == "60.00"


def test_the_bench_progress_counts_tokens_and_names_no_finished_item(tmp_path: Path) -> None:
    data = write_emobench(tmp_path / "EmoBench")
    with ScriptedServer(answer) as server:
        done = run("bench", "emobench", "--data", data, "--model", "m", "--base-url",
                   server.url, "--out", tmp_path / "emo")  # fmt: skip
        calls = len(server.bodies)
    assert "finished EU" not in done.stderr and "finished EA" not in done.stderr
    assert "error    EA-zh-" in done.stderr  # the failed item is still named
    assert "emobench: 8 item(s) finished in this session, 1 ended as errors" in done.stderr
    # the loopback reports 3 prompt and 2 completion tokens a call; the failed call none
    assert calls == 9 and "tokens 24 in / 16 out · errors 1" in done.stderr
