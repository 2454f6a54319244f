"""EQ-Bench 3's pairwise pass on our engine: the benchmark's prompt read from a copy of its
data/ folder (the shared sample through a path; a layout fixture written here), both orders,
the verdicts parsed from the respondent codes and plus signs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pairwise_helpers import (
    FIXTURE,
    JudgeServer,
    empathos,
    eqbench_copy,
    judge_flags,
    judgements,
    write_run,
)

from empathos.errors import ConfigError
from empathos.llm.structured import OutputInvalid
from empathos.pairwise import EqbenchPrompts, parse_picks

SAMPLE = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "eqbench3-sample"
MARK = "<<kind>>"


def answer(text: str) -> str:
    """Prefer the kind model's transcript: A when its tag comes first in the prompt (dialogue
    A's slot precedes B's), else B; the codes are the prompt's first two."""
    codes = list(dict.fromkeys(re.findall(r"\b[A-Z]\d{4}\b", text)))[:2]
    kind_first = text.find("(by kind)") < text.find("(by cold)")
    winner = codes[0] if kind_first else codes[1]
    reply = {
        "chain_of_thought_reasoning": "x",
        "overall_eq": f"{winner}++++",
        "warmth": f"{winner}+",
    }
    return json.dumps(reply)


def _runs(tmp: Path, ids: tuple[str, ...] = ("1", "2")) -> list[str]:
    return [
        str(write_run(tmp / "kind", "kind", ids, lambda s, t: f"{MARK} warm words (by kind)")),
        str(write_run(tmp / "cold", "cold", ids, lambda s, t: "whatever (by cold)")),
    ]


def _judge(
    copy: Path, tmp: Path, ids: tuple[str, ...] = ("1", "2")
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    out = tmp / "pw"
    with JudgeServer(lambda a, b: None, answer=answer) as server:
        res = empathos(
            "compare", "--pairwise", "--eqbench3", str(copy), *_runs(tmp, ids), "--out", str(out),
            *judge_flags(server.url), "--format", "json", "--bootstrap", "20",
        )  # fmt: skip
        assert res.exit_code == 0, res.stderr
        sent = [r["messages"][-1]["content"] for r in server.requests]
    assert len(sent) == 2 * len(ids)  # 1 pair x 2 orders per scenario
    return json.loads(res.stdout), [*judgements(out), *({"sent": t} for t in sent)]


def test_the_benchmark_prompt_from_a_copy_in_its_layout(tmp_path: Path) -> None:
    copy = eqbench_copy(tmp_path / "eqbench3")
    result, lines = _judge(copy, tmp_path)
    assert result["ratings"][0]["model"] == "kind"
    judged = [x for x in lines if "picks" in x]
    assert {(j["first"], j["second"]) for j in judged} == {("kind", "cold"), ("cold", "kind")}
    for j in judged:
        assert j["template_id"] == "user:pairwise_prompt_eqbench3.txt"
        winner = "first" if j["first"] == "kind" else "second"
        assert j["picks"]["overall"] == {"winner": winner, "margin": 4}
        assert j["picks"]["warmth"] == {"winner": winner, "margin": 1}
    sent = [x["sent"] for x in lines if "sent" in x]
    assert all(
        t.startswith("Compare respondents Q1111 and Q2222") and "{" + "debrief_A}" not in t
        for t in sent
    )
    assert (
        sum("Notes: note one" in t for t in sent) == 2
        and sum("Notes: note two" in t for t in sent) == 2
    )
    # a changed prompt under the same judge name does not mix with the stored verdicts
    prompt = copy / "data" / "pairwise_prompt_eqbench3.txt"
    prompt.write_text(FIXTURE.replace("role-play", "role play"), encoding="utf-8")
    res = empathos(
        "compare", "--pairwise", "--eqbench3", str(copy), *_runs(tmp_path), "--out",
        str(tmp_path / "pw"), *judge_flags("http://127.0.0.1:9/v1"),
    )  # fmt: skip
    assert res.exit_code != 0 and "choose another --out" in str(res.exception)


def test_the_shared_sample_of_the_benchmark(tmp_path: Path) -> None:
    if not (SAMPLE / "data" / "pairwise_prompt_eqbench3.txt").is_file():
        pytest.skip(f"no EQ-Bench 3 sample at {SAMPLE}")
    result, lines = _judge(SAMPLE, tmp_path, ("1", "401"))  # a role-play, an analysis task
    assert result["ratings"][0]["model"] == "kind"
    assert result["flip_rate"] == {"scripted-judge": 0.0}
    data = SAMPLE / "data"
    play = (data / "pairwise_prompt_eqbench3.txt").read_text(encoding="utf-8")
    analysis = (data / "pairwise_prompt_eqbench3_analysis.txt").read_text(encoding="utf-8")
    sent = [x["sent"] for x in lines if "sent" in x]
    tail_play, tail_analysis = play[-200:], analysis[-200:]  # after the last slot: verbatim
    assert sum(t.endswith(tail_play) for t in sent) == 2
    assert sum(t.endswith(tail_analysis) for t in sent) == 2
    assert not any("{response_A}" in t or "{conversation_history_A}" in t for t in sent)


def test_reply_parsing_and_a_prompt_without_the_slots(tmp_path: Path) -> None:
    picks = parse_picks(
        '{"overall_eq": "Q2222+++++", "empathy": "Q1111++", "x": "none"}', ("Q1111", "Q2222")
    )
    assert picks["overall"].winner == "second" and picks["overall"].margin == 5
    assert picks["empathy"].winner == "first" and picks["empathy"].margin == 2 and "x" not in picks
    with pytest.raises(OutputInvalid, match="overall_eq"):
        parse_picks('{"empathy": "Q1111+"}', ("Q1111", "Q2222"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "pairwise_prompt_eqbench3.txt").write_text(
        "Judge Q1111 and Q2222: {conversation_history_A}"
    )
    with pytest.raises(ConfigError, match="debrief_A"):
        EqbenchPrompts.load(bad)


ANALYSIS_FIXTURE = """Compare analyses Q1111 and Q2222.
Scene: {transcript_being_analysed}
[Q1111]
{response_A}
[Q2222]
{response_B}
Notes: {scenario_notes}
"""


def test_analysis_slots_as_the_benchmark_fills_them(tmp_path: Path) -> None:
    copy = eqbench_copy(tmp_path / "eqbench3")
    data = copy / "data"
    (data / "pairwise_prompt_eqbench3_analysis.txt").write_text(ANALYSIS_FIXTURE)
    (data / "scenario_prompts.txt").write_text(
        "######## 401 | Analysis | Ours\n####### Prompt1\nTHE SCENE, as written\n"
    )

    def reply(model: str) -> Any:
        first = f"<think>hidden</think> **first** # analysis{' ' + MARK if model == 'kind' else ''}"
        return lambda s, t: f"{first} (by {model})" if t == 0 else f"later {t} (by {model})"

    runs = [str(write_run(tmp_path / m, m, ["401"], reply(m))) for m in ("kind", "cold")]
    with JudgeServer(lambda a, b: None, answer=answer) as server:
        res = empathos(
            "compare", "--pairwise", "--eqbench3", str(copy), *runs, "--out", str(tmp_path / "pw"),
            *judge_flags(server.url), "--format", "json", "--bootstrap", "20",
        )  # fmt: skip
        sent = [r["messages"][-1]["content"] for r in server.requests]
    assert res.exit_code == 0, res.stderr
    # the scene is the scenario's first prompt as written (not the user messages); each side
    # shows its first reply only, without its think block, * and #; no notes: a placeholder
    for t in sent:
        assert "Scene: THE SCENE, as written\n" in t and "[401] line" not in t
        assert "first  analysis" in t and "hidden" not in t and "later" not in t
        assert "Notes: [no notes on this scenario]" in t
