"""EmoBench on a loopback server: a scripted model that answers a known subset correctly (en
and zh) gives exact accuracies per task and language; an unparseable reply counts as wrong
and is reported; an endpoint failure is an error, not a wrong answer; compare pairs items."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from bench_helpers import ScriptedServer, cli
from emobench_fixture import answer, write_emobench

from empathos.bench.emobench import parse_answers
from empathos.bench.emobench_files import read_emobench
from empathos.bench.emobench_official import official_messages
from empathos.bench.summary import compare_dirs, load_bench_dir


def _run(url: str, data: Path, out: Path, model: str) -> None:
    result = cli("bench", "emobench", "--data", data, "--model", model, "--base-url", url,
                 "--out", out)  # fmt: skip
    assert result.exit_code in (0, 1), result.error


def _table(out: Path) -> dict[tuple[str, str], dict]:
    (summary,) = json.loads(cli("bench", "score", out, "--format", "json").stdout)
    return {(a["task"], a["language"]): a for a in summary["emobench"]}


def test_known_subset_gives_exact_accuracy_per_task_and_language(tmp_path: Path) -> None:
    data = write_emobench(tmp_path / "EmoBench")
    with ScriptedServer(answer) as server:
        _run(server.url, data, tmp_path / "base", "base")
        # The system prompt holds the benchmark's own instructions and answer fields.
        first = server.bodies[0]["messages"]
        assert first[0]["role"] == "system" and "Answer in JSON" in first[0]["content"]
        assert "A) Joy\nB) Anger" in first[1]["content"] or "A) Wait quietly" in first[1]["content"]
    t = _table(tmp_path / "base")
    expect = {  # (task, language): (correct, n, unparseable, errors), counted by hand
        ("EU emotion", "en"): (2, 3, 1, 0),
        ("EU cause", "en"): (1, 3, 1, 0),
        ("EU both", "en"): (1, 3, 1, 0),
        ("EU emotion", "zh"): (1, 2, 0, 0),
        ("EU both", "zh"): (1, 2, 0, 0),
        ("EU emotion", "all"): (3, 5, 1, 0),
        ("EA", "en"): (1, 2, 0, 0),
        ("EA", "zh"): (1, 1, 0, 1),
        ("EA", "all"): (2, 3, 0, 1),
    }
    for key, (correct, n, unparseable, errors) in expect.items():
        row = t[key]
        assert (row["correct"], row["n"], row["unparseable"], row["errors"]) == (
            correct, n, unparseable, errors,
        ), key  # fmt: skip
        assert row["accuracy"] == pytest.approx(correct / n)
        if n >= 2:  # an interval needs two items
            assert row["low"] <= row["accuracy"] <= row["high"]
        else:
            assert row["low"] is None

    with ScriptedServer(partial(answer, all_right=True)) as server:
        _run(server.url, data, tmp_path / "trained", "trained")
    base, trained = load_bench_dir(tmp_path / "base"), load_bench_dir(tmp_path / "trained")
    assert base is not None and trained is not None
    diffs = {p.measure: p.summary for p in compare_dirs(base, trained)}
    assert diffs["EU emotion"].mean_diff == pytest.approx(100 * 2 / 5)  # e3, z2 fixed
    assert diffs["EU both"].pairs == 5
    assert diffs["EA"].pairs == 3  # b2 failed for the base: not a pair
    assert diffs["EA"].mean_diff == pytest.approx(100 / 3)
    assert 0 <= diffs["EU emotion"].p_value <= 1
    shown = cli("bench", "compare", tmp_path / "base", tmp_path / "trained")
    assert shown.exit_code == 0 and "+40.00" in shown.stdout
    # The EMPA commands read bench directories too.
    assert cli("compare", tmp_path / "base", tmp_path / "trained").stdout == shown.stdout
    (scored,) = json.loads(cli("score", tmp_path / "base", "--format", "json").stdout)
    assert scored["measures"]["EU emotion"]["value"] == pytest.approx(60.0)
    report = cli("report", tmp_path / "base", "--out", tmp_path / "report", "--no-figures")
    assert report.exit_code == 0, report.error
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert 'id="sec-bench"' in page and "<td>EU emotion</td><td>60.00</td>" in page


def test_the_sample_copy_reads_and_prompts_fill(emobench_sample: Path) -> None:
    data = read_emobench(emobench_sample)
    kinds = {(i.kind, i.language) for i in data.items}
    assert kinds == {("EU", "en"), ("EU", "zh"), ("EA", "en"), ("EA", "zh")}
    assert len(data.items) == 32
    for item in data.items:
        _, user = official_messages(item, data.prompts[item.language], "m")
        assert "{" + "scenario}" not in user["content"] and item.scenario in user["content"]
        assert "A) " in user["content"]
        right = {"answer_q1": "a", "answer_q2": "b", "answer": "c"}
        assert None not in parse_answers(item, json.dumps(right))


def test_a_malformed_item_is_named_by_file_and_line(tmp_path: Path) -> None:
    data = write_emobench(tmp_path / "EmoBench")
    path = data / "data" / "EA.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["label"] = "Something else"
    lines[1] = json.dumps(row)
    path.write_text("\n".join(lines))
    result = cli("bench", "emobench", "--data", data, "--model", "m", "--base-url",
                 "http://127.0.0.1:9/v1", "--out", tmp_path / "run")  # fmt: skip
    assert result.exit_code == 2 and result.error is not None
    assert f"{path}: line 2: label: not one of choices" == result.error
