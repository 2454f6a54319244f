"""EQ-Bench 3's canonical leaderboard as the opponents: an invented fixture in the layout the
benchmark's code reads (a runs file and an Elo file), a new run judged against it on a
loopback judge that prefers the higher 'quality:N' tag."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pairwise_helpers import JudgeServer, empathos, eqbench_copy, judge_flags, judgements, write_run

from empathos.errors import ConfigError
from empathos.pairwise import read_leaderboard
from empathos.report.pairwise import pairwise_html

SCENARIOS = ("1", "2", "3")
#: model -> (quality tag in its replies, its published rating)
BOARD = {"board-low": (1, 1000.0), "board-mid": (2, 1200.0), "board-high": (4, 1400.0)}


def _task(model: str, quality: int, scenario: str) -> dict[str, Any]:
    history = []
    for turn in range(2):
        history += [
            {"role": "user", "content": f"scene {scenario} turn {turn}"},
            {"role": "assistant", "content": f"reply quality:{quality} (by {model})"},
        ]
    return {
        "status": "rubric_scored",
        "conversation_history": history,
        "debrief_response": f"debrief of {model}",
        "parsed_responses": [],
    }


def write_board(folder: Path, comparisons: bool = True) -> tuple[Path, Path]:
    """The runs file (gzip JSON) and the Elo file (plain JSON) of an invented leaderboard."""
    folder.mkdir(parents=True, exist_ok=True)
    runs: dict[str, Any] = {}
    for n, (model, (quality, _)) in enumerate(BOARD.items()):
        tasks = {"1": {s: _task(model, quality, s) for s in SCENARIOS}}
        tasks["1"]["9"] = {"status": "error", "conversation_history": []}  # left out
        runs[f"run{n}_{model}"] = {"model_name": model, "scenario_tasks": tasks}
    runs_file = folder / "canonical_leaderboard_results.json.gz"
    runs_file.write_bytes(gzip.compress(json.dumps(runs).encode()))
    elo: dict[str, Any] = {
        m: {"elo": r, "elo_norm": r, "sigma": 10.0, "ci_low": r - 20.0, "ci_high": r + 20.0}
        for m, (_, r) in BOARD.items()
    }
    order = {"pair": {"test_model": "board-high", "neighbor_model": "board-low",
                      "iteration_index": "1"}, "scenario_id": "1",
             "plus_for_test": 30, "plus_for_other": 0}  # fmt: skip
    elo["__metadata__"] = {
        "global_pairwise_comparisons": [order, {"error": "Judge Error", "pair": {}}]
        if comparisons
        else []
    }
    elo_file = folder / "canonical_leaderboard_elo_results.json"
    elo_file.write_text(json.dumps(elo), encoding="utf-8")
    return runs_file, elo_file


def prefers_quality(text: str) -> str:
    """EQ-Bench 3's answer form: the code of the dialogue whose replies carry the higher
    'quality:N' (dialogue A's slot comes before the second code's heading)."""
    codes = list(dict.fromkeys(re.findall(r"\b[A-Z]\d{4}\b", text)))[:2]
    head, tail = text.split(f"[{codes[1]}]", 1)
    qa = max(int(q) for q in re.findall(r"quality:(\d)", head))
    qb = max(int(q) for q in re.findall(r"quality:(\d)", tail))
    winner = codes[0] if qa > qb else codes[1]
    return json.dumps({"overall_eq": f"{winner}+++", "warmth": f"{winner}++"})


def _compare(tmp: Path, *extra: str, comparisons: bool = True) -> tuple[Any, JudgeServer]:
    runs_file, elo_file = write_board(tmp / "board", comparisons)
    new = write_run(tmp / "new", "newbie", list(SCENARIOS), lambda s, t: "mine quality:3")
    with JudgeServer(lambda a, b: None, answer=prefers_quality) as server:
        res = empathos(
            "compare", "--pairwise", "--eqbench3", str(eqbench_copy(tmp / "eq3")), str(new),
            "--leaderboard", str(runs_file), "--leaderboard-elo", str(elo_file),
            "--out", str(tmp / "pw"), *judge_flags(server.url), "--format", "json",
            "--bootstrap", "20", *extra,
        )  # fmt: skip
    return res, server


def test_opponents_nearest_first_and_a_board_whose_orders_cannot_fit_its_scale(
    tmp_path: Path,
) -> None:
    """One judged pair, won as surely as the benchmark's fraction goes (30 plus signs ahead:
    1.0) and as the ratings say, cannot fit the conversion from ratings to logits (the
    likelihood grows without bound): the board is not held, only its opponents
    are used (tests/pairwise/test_pairwise_anchored.py places a model on a fitted scale)."""
    res, server = _compare(tmp_path, "--max-pairs", "4")
    assert res.exit_code == 0, res.stderr
    assert len(server.requests) == 8  # 4 pairs x 2 orders
    lines = judgements(tmp_path / "pw")
    pairs = Counter((j["scenario_id"], *sorted((j["first"], j["second"]))) for j in lines)
    assert len(pairs) == 4 and set(pairs.values()) == {2}
    assert all("newbie" in pair for pair in pairs)  # new against the leaderboard only
    assert {(j["first"], j["second"]) for j in lines if j["scenario_id"] == "1"} >= {
        ("newbie", "board-mid"),
        ("board-mid", "newbie"),
    }
    # the nearest opponent first: the new model starts at the median rating (board-mid's)
    opponents = Counter(next(m for m in pair[1:] if m != "newbie") for pair in pairs)
    assert opponents["board-mid"] == 3
    result = json.loads(res.stdout)
    assert result["scale"] is None and "not held" in result["leaderboard_note"]
    assert not any(r["fixed"] for r in result["ratings"])


def test_trueskill_with_the_leaderboard_orders(tmp_path: Path) -> None:
    res, server = _compare(tmp_path, "--rating", "trueskill", "--pairs-per-model", "9")
    assert res.exit_code == 0, res.stderr
    assert len(server.requests) == 18  # 9 pairs for the one new model, both orders
    pairs = {
        (j["scenario_id"], *sorted((j["first"], j["second"]))) for j in judgements(tmp_path / "pw")
    }
    assert len(pairs) == 9 and all("newbie" in p for p in pairs)  # every new-vs-board pair
    result = json.loads(res.stdout)
    assert result["rating"] == "trueskill" and result["leaderboard_comparisons"] == 1
    order = [r["model"] for r in result["ratings"]]
    assert order.index("board-high") < order.index("newbie") < order.index("board-low")
    section = pairwise_html(result)  # the report's pairwise section names the method
    assert "EQ-Bench 3&#x27;s TrueSkill" in section or "EQ-Bench 3's TrueSkill" in section


def test_leaderboard_files_of_another_layout(tmp_path: Path) -> None:
    runs_file, elo_file = write_board(tmp_path)
    board = read_leaderboard(runs_file, elo_file)
    assert len(board.items) == 9 and {i.trial for i in board.items} == {0}
    assert board.ratings["board-high"].ci == (1380.0, 1420.0)
    assert len(board.comparisons) == 1  # the error entry is left out
    with pytest.raises(ConfigError, match="--leaderboard-elo"):
        read_leaderboard(elo_file)
    with pytest.raises(ConfigError, match="give it with --leaderboard"):
        read_leaderboard(runs_file, runs_file)
    junk = tmp_path / "junk.json.gz"
    junk.write_bytes(b"\x1f\x8bnot gzip")
    with pytest.raises(ConfigError, match="not gzip JSON"):
        read_leaderboard(junk)
    new = write_run(tmp_path / "clash", "board-mid", ["1"], lambda s, t: "x")
    res = empathos(
        "compare", "--pairwise", "--eqbench3", str(eqbench_copy(tmp_path / "eq3")), str(new),
        "--leaderboard", str(runs_file), *judge_flags("http://127.0.0.1:9/v1"),
    )  # fmt: skip
    assert res.exit_code != 0 and "already on the leaderboard" in str(res.exception)
