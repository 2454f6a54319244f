"""EQ-Bench 3's rubric pass on a loopback server: the tested model's transcript follows each
scenario's scripted turns and the debrief; a judge that returns known criterion scores gives
the benchmark's aggregate exactly; the records hold what the pairwise pass needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import ScriptedServer, cli
from eqbench3_fixture import FILES, ROLEPLAY_SCORES, scripted, sectioned, write_eqbench3

from empathos.bench.eqbench3 import ROLEPLAY_ALLOWED, parse_judge, parse_scenarios, task_score
from empathos.bench.eqbench3_files import read_eqbench3
from empathos.errors import InputError


def test_judge_scores_aggregate_as_the_benchmark_does(tmp_path: Path) -> None:
    data = write_eqbench3(tmp_path / "eqbench3")
    out = tmp_path / "run"
    with ScriptedServer(scripted) as server:
        result = cli(
            "bench", "eqbench3", "--data", data, "--model", "tested", "--base-url", server.url,
            "--roles-model", "judge", "--roles-base-url", server.url, "--out", out,
        )  # fmt: skip
    assert result.exit_code == 0, result.error
    (summary,) = json.loads(cli("bench", "score", out, "--format", "json").stdout)
    # Role-play: mean(12, 16) = 14 (warmth is reported, not scored); analysis: mean(10, 17)
    # = 13.5; the rubric score: mean(14, 13.5) = 13.75 on 0-20, times 5.
    assert summary["measures"]["rubric"]["value"] == 68.75
    assert summary["criteria"] == {
        "demonstrated_empathy": 12, "depth_of_insight": 10, "pragmatic_ei": 16,
        "theory_of_mind": 17, "warmth": 5,
    }  # fmt: skip

    role = json.loads((out / "records" / "1__t0.json").read_text())
    assert (role["item_id"], role["model"], role["task"]) == ("1", "tested", "roleplay")
    msgs = role["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant"] * 3
    assert msgs[0]["content"] == "SCENE\nA friend tells you they lost their job. (turn one)\n" \
        "Answer in three parts."  # fmt: skip
    assert "(turn two)" in msgs[2]["content"] and msgs[2]["content"].startswith("SCENE")
    assert msgs[4]["content"] == FILES["debrief_prompt.txt"]
    assert [msgs[i]["content"] for i in (1, 5)] == ["reply 1", "reply 3"]
    assert msgs[3]["content"] == sectioned("reply 2")
    assert role["judge"]["criteria"] == ROLEPLAY_SCORES
    assert role["scores"] == {"task": 14.0}
    judged = role["judge"]["prompt"]
    # the judge sees each reply rebuilt from its three parsed sections, with every * and #
    # taken out: the reply that ignored the format shows empty sections, not its text
    empty = " I'm thinking & feeling\n\n\n They're thinking & feeling\n\n\n My response\n\n\n--"
    full = (" I'm thinking & feeling\nmy thoughts\n\n They're thinking & feeling\ntheir side"
            "\n\n My response\nreply 2\n\n--")  # fmt: skip
    assert f"Assistant:\n{empty}\n---\nUser:" in judged and "reply 1" not in judged
    assert f"Assistant:\n{full}\n" in judged and "closing note" not in judged
    assert "DEBRIEF:\nreply 3" in judged and "#" not in judged
    # the output format asks for detailed chain-of-thought reasoning, then each criterion
    assert '"chain_of_thought_reasoning": "your detailed chain-of-thought' in judged
    assert '"demonstrated_empathy": 0-20,\n  "pragmatic_ei": 0-20,\n  "warmth": 0-20\n}' in judged

    analysis = json.loads((out / "records" / "401__t0.json").read_text())
    assert [m["role"] for m in analysis["messages"]] == ["user", "assistant"]  # no debrief
    assert analysis["messages"][0]["content"].startswith("ANALYSE\n# Act 1")
    assert analysis["scores"] == {"task": 13.5}


def test_a_judge_that_rates_nothing_leaves_the_item_unscored(tmp_path: Path) -> None:
    data = write_eqbench3(tmp_path / "eqbench3")
    out = tmp_path / "run"

    def model(body: dict[str, Any]) -> str:
        return "I refuse to rate." if body["model"] == "judge" else "reply"

    with ScriptedServer(model) as server:
        result = cli(
            "bench", "eqbench3", "--data", data, "--model", "tested", "--base-url", server.url,
            "--roles-model", "judge", "--roles-base-url", server.url, "--out", out,
            "--limit", "1",
        )  # fmt: skip
    assert result.exit_code == 3  # every item ended as an error
    # the failure advice every campaign gives (empathos run's and rejudge's)
    assert "eqbench3 FAILED: every dialogue ended as an error (1 of 1)" in result.stderr
    assert "errors come from the model calls" in result.stderr and str(out) in result.stderr
    assert "then run the same command again" in result.stderr
    record = json.loads((out / "records" / "1__t0.json").read_text())
    assert record["status"] == "error" and record["scores"] == {}
    assert "rated none of the scored criteria" in record["error"]


def test_aggregation_rules() -> None:
    assert task_score({"overall_eq": 20, "pragmatic_ei": 4}, ["overall_eq", "pragmatic_ei"]) == 16
    assert task_score({"warmth": 20}, ["pragmatic_ei"]) is None


def test_the_sample_copy_reads(eqbench3_sample: Path) -> None:
    data = read_eqbench3(eqbench3_sample)
    kinds = {s.kind for s in data.scenarios}
    assert kinds == {"roleplay", "drafting", "analysis"}
    assert all(s.turns for s in data.scenarios)
    assert set(data.kinds["analysis"].allowed) == set(data.kinds["analysis"].criteria)
    # role-plays score the benchmark's ten criteria, listed in the criteria file or not
    assert data.kinds["roleplay"].allowed == ROLEPLAY_ALLOWED
    assert "warmth" in data.kinds["roleplay"].criteria
    assert len(data.scenarios) == 45


def test_scenario_409_of_the_sample_is_dropped_as_the_benchmark_drops_it(
    eqbench3_sample: Path,
) -> None:
    # only '####### Prompt<N>' opens a turn: scenario 409, whose turn opens '####### 1',
    # collects none and is dropped silently, as the benchmark drops it (45, not 46)
    text = (eqbench3_sample / "data" / "scenario_prompts.txt").read_text(encoding="utf-8")
    ids = [s.id for s in parse_scenarios(text)]
    assert len(ids) == 45 and "409" not in ids and {"408", "410"} <= set(ids)


def test_scenarios_as_the_benchmarks_parser_reads_them() -> None:
    # our fixture's 409 opens its turn with '####### 1' too: dropped
    fixture = parse_scenarios(FILES["scenario_prompts.txt"])
    assert [(s.id, s.title, len(s.turns)) for s in fixture] == [
        ("1", "Our Role-play", 2), ("401", "Our Analysis", 1),
    ]  # fmt: skip
    # inside an open turn, a '#######' line that is no Prompt header is text, as there
    (odd,) = parse_scenarios("######## 7 | A | B\n####### Prompt1\nfirst\n####### x\nmore\n")
    assert odd.turns == ("first\n####### x\nmore",)
    with pytest.raises(InputError, match="no scenario"):
        parse_scenarios("######## 1 | A | B\nno turn header here\n")


def test_judge_answers_read_as_the_benchmark_reads_them() -> None:
    reply = json.dumps({
        "chain_of_thought_reasoning": "worth 3 points",
        "demonstrated_empathy": "Score: 15",  # a number inside a text
        "pragmatic_ei": 25,  # out of 0-20: kept
        "theory_of_mind": "12/20",  # not in the role-play criteria file: counted anyway
        "warmth": "n/a",
    })  # fmt: skip
    scores = parse_judge(reply)
    assert scores == {"demonstrated_empathy": 15, "pragmatic_ei": 25, "theory_of_mind": 12}
    assert task_score(scores, ROLEPLAY_ALLOWED) == pytest.approx((15 + 25 + 12) / 3)
