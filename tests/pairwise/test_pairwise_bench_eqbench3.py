"""EQ-Bench 3's Elo pass straight over `empathos bench eqbench3` run directories: two real
bench runs on a loopback server (our fixture in the benchmark's layout), then
`compare --pairwise --eqbench3` with a judge that prefers the marked model's replies."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from bench_helpers import ScriptedServer, cli, last_user
from eqbench3_fixture import scripted, sectioned, write_eqbench3
from pairwise_helpers import JudgeServer, empathos, judge_flags, judgements
from test_pairwise_eqbench3 import FIXTURE, MARK, answer


def play(body: dict[str, Any]) -> str:
    """``kind`` marks its replies; the judge rates nothing of cold's analysis (an error)."""
    if body["model"] == "judge":
        prompt = last_user(body)
        if prompt.startswith("Rate the analysis") and "(by cold)" in prompt:
            return "I refuse to rate."
        return scripted(body)
    turns = sum(m["role"] == "user" for m in body["messages"])
    mark = f"{MARK} " if body["model"] == "kind" else ""
    text = f"{mark}reply {turns} (by {body['model']})"
    if turns == 2 and body["model"] == "kind":  # long thinking, the response last
        return sectioned(text, thinking="x" * 3000)
    return text


def test_bench_runs_are_judged_pairwise_directly(tmp_path: Path) -> None:
    data = write_eqbench3(tmp_path / "eqbench3")
    (data / "data" / "pairwise_prompt_eqbench3.txt").write_text(FIXTURE, encoding="utf-8")
    runs = []
    with ScriptedServer(play) as server:
        for model in ("kind", "cold"):
            runs.append(tmp_path / model)
            cli(
                "bench", "eqbench3", "--data", data, "--model", model, "--base-url", server.url,
                "--roles-model", "judge", "--roles-base-url", server.url, "--out", runs[-1],
            )  # fmt: skip
    cold = json.loads((runs[1] / "records" / "401__t0.json").read_text())
    assert cold["status"] == "error"  # left out of the pairwise pass, and counted

    out = tmp_path / "pw"
    with JudgeServer(lambda a, b: None, answer=answer) as judge:
        res = empathos(
            "compare", "--pairwise", "--eqbench3", str(data), *map(str, runs), "--out", str(out),
            *judge_flags(judge.url), "--format", "json", "--bootstrap", "20",
        )  # fmt: skip
        sent = [r["messages"][-1]["content"] for r in judge.requests]
    assert res.exit_code == 0, res.stderr
    assert "skipped 1 bench record(s) that ended in an error" in res.stderr
    result = json.loads(res.stdout)
    assert [r["model"] for r in result["ratings"]] == ["kind", "cold"]
    judged = judgements(out)
    assert sorted((j["scenario_id"], j["first"], j["second"]) for j in judged) == [
        ("1", "cold", "kind"), ("1", "kind", "cold"),
    ]  # fmt: skip
    assert all(j["picks"]["overall"]["winner"] == ("first" if j["first"] == "kind" else "second")
               for j in judged)  # fmt: skip
    # the debrief goes to its own slot: the debrief prompt is not shown, the answer is
    assert len(sent) == 2
    assert all("Our debrief" not in t and "reply 3 (by kind)" in t for t in sent)
    # each section is cut at its own limit (2,200 for the thinking), so the judge sees the
    # in-character response that comes last; a reply ignoring the format shows no text
    for t in sent:
        assert "x" * 2200 + "... [truncated]" in t and "x" * 2201 not in t
        assert "\n\n My response\n\n<<kind>> reply 2 (by kind)\n\n--" in t
        assert "reply 1 (by kind)" not in t
    # the benchmark's plus counts of each reply (overall 4 + warmth 1) are kept
    assert all(j["plus"] == ([5, 0] if j["first"] == "kind" else [0, 5]) for j in judged)


def test_bench_runs_without_eqbench3_are_refused(tmp_path: Path) -> None:
    data = write_eqbench3(tmp_path / "eqbench3")
    with ScriptedServer(scripted) as server:
        cli(
            "bench", "eqbench3", "--data", data, "--model", "tested", "--base-url", server.url,
            "--roles-model", "judge", "--roles-base-url", server.url, "--out", tmp_path / "a",
            "--limit", "1",
        )  # fmt: skip
    res = empathos("compare", "--pairwise", str(tmp_path / "a"), str(tmp_path / "a"))
    assert res.exit_code != 0 and "judge it with --eqbench3" in str(res.exception)
