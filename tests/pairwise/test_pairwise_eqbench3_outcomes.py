"""EQ-Bench 3's two halves meeting: its plus-count fraction as the Bradley-Terry outcome of
`compare --pairwise --eqbench3` and of the leaderboard's scale, and style control on what
its judge saw after its section-wise truncation."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from pairwise_helpers import JudgeServer, empathos, eqbench_copy, judge_flags, write_run

from empathos.pairwise import EqbenchJudge, EqbenchPrompts, Item, board_outcomes
from empathos.pairwise.leaderboard import BoardComparison
from empathos.pairwise.model import TranscriptMessage
from empathos.pairwise.results import style_table
from empathos.pairwise.style import style_of
from empathos.report.pairwise import pairwise_html

ELO = 400.0 / math.log(10.0)


def position_then_quality(text: str) -> str:
    """``overall_eq`` always for the dialogue shown first (one plus sign), ``warmth`` for
    the one whose replies carry the higher 'quality:N' (four plus signs)."""
    head, tail = text.split("[Q2222]", 1)
    qa = max(int(q) for q in re.findall(r"quality:(\d)", head))
    qb = max(int(q) for q in re.findall(r"quality:(\d)", tail))
    better = "Q1111" if qa > qb else "Q2222"
    return json.dumps({"chain_of_thought_reasoning": "a+b", "overall_eq": "Q1111+",
                       "warmth": f"{better}++++"})  # fmt: skip


def test_eqbench3_pairs_are_scored_by_the_benchmarks_plus_count_fraction(tmp_path: Path) -> None:
    """The overall verdicts flip with the position (a tie under our judge's rule: equal
    ratings), but the benchmark's plus counts favour `good` 9 to 1 over a pair's two orders:
    the pair's score is its fraction 0.5 + 8 / 60, and the ratings its log-odds apart."""
    scenarios = ["1", "2", "3"]
    runs = [
        write_run(tmp_path / m, m, scenarios, lambda s, t, q=q: f"reply quality:{q}")
        for m, q in (("good", 3), ("weak", 1))
    ]
    with JudgeServer(lambda a, b: None, answer=position_then_quality) as server:
        res = empathos(
            "compare", "--pairwise", "--eqbench3", str(eqbench_copy(tmp_path / "eq3")),
            *map(str, runs), "--out", str(tmp_path / "pw"), *judge_flags(server.url),
            "--format", "json", "--bootstrap", "20",
        )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    result = json.loads(res.stdout)
    assert result["flip_rate"] == {"scripted-judge": 1.0}  # the overall verdicts disagree
    assert "plus-count fraction" in result["scoring"]  # the table and the report say so
    assert "plus-count fraction" in pairwise_html(result)
    elo = {r["model"]: r["elo"] for r in result["ratings"]}
    share = 0.5 + 8.0 / 60.0
    assert elo["good"] - elo["weak"] == pytest.approx(ELO * math.log(share / (1 - share)), abs=0.5)


def test_the_boards_pairs_are_read_by_the_same_fraction() -> None:
    """Two orders of one pair (x ahead 5-3 and 4-2: 9 to 5) are one outcome of weight 1,
    scoring 0.5 + 4 / 60 for x; an analysis order counts 1-0 at most."""
    orders = [
        BoardComparison("1", "1", "x", "y", 5, 3),
        BoardComparison("1", "1", "y", "x", 2, 4),
        BoardComparison("401", "1", "y", "x", 1, 0),  # as read: downscaled already
    ]
    out = board_outcomes(orders)
    assert [(o.scenario_id, o.a, o.b, o.weight) for o in out] == [
        ("1", "x", "y", 1.0), ("401", "x", "y", 1.0),
    ]  # fmt: skip
    assert out[0].score == pytest.approx(0.5 + 4.0 / 60.0)
    assert out[1].score == pytest.approx(0.5 - 1.0 / 60.0)


def test_style_control_measures_what_the_eqbench3_judge_saw(tmp_path: Path) -> None:
    """A role-play reply with 3,000 characters of thinking in markdown: the judge sees the
    thinking cut at 2,200, the response, the debrief, and no `*` or `#`; style control
    counts that, not our own 2,000-character cut of the raw reply."""
    thinking = "- a point\n" + "**bold** " + "x" * 2990
    reply = (
        f"# I'm thinking & feeling\n{thinking}\n\n# They're thinking & feeling\ntheirs\n\n"
        "# My response\nthe words I say\n--\nafter"
    )
    item = Item(scenario_id="1", model="m", sectioned=True, debrief="my debrief", transcript=(
        TranscriptMessage(role="user", content="hi"),
        TranscriptMessage(role="assistant", content=reply),
    ))  # fmt: skip
    judge = EqbenchJudge(None, "j", EqbenchPrompts.load(eqbench_copy(tmp_path / "eq3")))  # type: ignore[arg-type]
    seen = judge.seen(item)
    assert "the words I say" in seen and "my debrief" in seen and "after" not in seen
    assert "x" * 2000 in seen and "x" * 2200 not in seen  # 2,200 with the list and the bold
    assert "#" not in seen and "*" not in seen
    _, headers, lists, bold = style_of(seen)
    assert (headers, lists, bold) == (0.0, 1.0, 0.0)
    assert style_table([item], judge.seen)[("1", 0, "m")] == style_of(seen)
    assert style_table([item])[("1", 0, "m")][1:] == (1.0, 1.0, 1.0)  # our rule's view
