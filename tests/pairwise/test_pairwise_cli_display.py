"""What `compare --pairwise` shows (issues 44 and 45): published models named by --label,
a missing path named, ratings the data do not bound shown as not identified, the win
matrix's column headers, the first-position rate beside the flip rate, every interval
labelled with what it is (TrueSkill's too), style control's coefficients."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pairwise_helpers import JudgeServer, empathos, eqbench_copy, judge_flags, write_run
from test_pairwise_leaderboard import SCENARIOS, prefers_quality, write_board

from empathos.cli.pairwise_output import format_results
from empathos.pairwise import (
    Item,
    Judgement,
    Pick,
    board_outcomes,
    board_scale,
    read_leaderboard,
    summarize,
)
from empathos.pairwise.style import STYLE
from empathos.report.pairwise import pairwise_html

OPAQUE = "Custom-ep-20260224114647-4d99q"
MARK = "<<listens>>"


def test_label_dir_names_published_models_by_directory(empa_sample: Path, tmp_path: Path) -> None:
    """A published result folder whose records carry an opaque endpoint id: `auto` (the
    default) and `dir` name it by its directory, `record` by the id, as `score` does."""
    seed = tmp_path / "runs" / "seed-2.0"
    seed.mkdir(parents=True)
    for f in sorted((empa_sample / "results" / "gpt-4o").glob("*.json"))[:3]:
        doc = json.loads(f.read_text(encoding="utf-8"))
        doc["test_model_name"] = OPAQUE
        (seed / f.name).write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    other = tmp_path / "runs" / "qwen3-8b"
    other.mkdir()
    for f in sorted((empa_sample / "results" / "qwen3-8b").glob("*.json"))[:3]:
        shutil.copy(f, other / f.name)
    names = {}
    with JudgeServer(lambda first, second: "first") as server:
        for label in ("auto", "dir", "record"):
            res = empathos(
                "compare", "--pairwise", str(seed), str(other), "--label", label,
                "--out", str(tmp_path / label), *judge_flags(server.url), "--format", "json",
                "--bootstrap", "10", "--scenarios", str(empa_sample),
            )  # fmt: skip
            assert res.exit_code == 0, res.stderr
            names[label] = {r["model"] for r in json.loads(res.stdout)["ratings"]}
    assert names["auto"] == {"seed-2.0", "Custom-qwen/qwen3-8b"}
    assert names["dir"] == {"seed-2.0", "qwen3-8b"}
    assert names["record"] == {OPAQUE, "Custom-qwen/qwen3-8b"}


def test_a_missing_run_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path / "a", "a", ["s1"], lambda s, t: "hi")
    res = empathos("compare", "--pairwise", str(run), str(tmp_path / "missing"),
                   *judge_flags("http://127.0.0.1:9/v1"))  # fmt: skip
    assert res.exit_code != 0
    assert f"no such file or directory: {tmp_path / 'missing'}" in str(res.exception)


def _runs(tmp: Path) -> list[str]:
    return [
        str(write_run(tmp / "a", "model-a", ["s1", "s2", "s3"], lambda s, t: f"{MARK} a {s}")),
        str(write_run(tmp / "b", "model-b", ["s1", "s2", "s3"], lambda s, t: f"{MARK} b {s}")),
    ]


def test_never_compared_and_separated_models_are_not_identified(tmp_path: Path) -> None:
    """The degraded check compares each model with its own copy only, and the copy loses
    every pair: no rating but the anchor's is bounded by the data (before: `1000
    1000..1000` and a number the regulariser chose)."""
    with JudgeServer(lambda first, second: "first" if MARK in first else "second") as server:
        res = empathos(
            "compare", "--pairwise", "--degraded-check", *_runs(tmp_path),
            "--out", str(tmp_path / "pw"), *judge_flags(server.url), "--bootstrap", "20",
        )  # fmt: skip
        assert res.exit_code == 0, res.stderr
        as_json = empathos(
            "compare", "--pairwise", "--degraded-check", *_runs(tmp_path),
            "--out", str(tmp_path / "pw"), *judge_flags(server.url), "--bootstrap", "20",
            "--format", "json",
        )  # fmt: skip
    table = res.stdout
    assert "1000..1000" not in table and "not identified: lost every comparison" in table
    assert "not identified: won every comparison" in table  # model-b, against its copy
    assert "model-a                             1000 (anchor)" in table
    head = next(line for line in table.splitlines() if line.startswith("win matrix"))
    columns = table.splitlines()[table.splitlines().index(head) + 1]
    assert columns.split() == ["model-a", "model-a", "(deg", "model-b", "model-b", "(deg"]
    rows = {r["model"]: r for r in json.loads(as_json.stdout)["ratings"]}
    assert rows["model-a (degraded)"]["identified"] is False
    assert rows["model-a (degraded)"]["elo"] is None
    assert rows["model-b"]["note"] == "won every comparison"
    assert "interval: 95% percentile bootstrap over scenarios" in table
    section = pairwise_html(json.loads(as_json.stdout))  # the report says the same
    assert "not identified: lost every comparison" in section and ">1000<" in section
    assert "first position picked in 50.0% of orders" in section


def test_the_first_position_rate_is_shown_beside_the_flip_rate(tmp_path: Path) -> None:
    with JudgeServer(lambda first, second: "first") as server:
        res = empathos(
            "compare", "--pairwise", *_runs(tmp_path), "--out", str(tmp_path / "pw"),
            *judge_flags(server.url), "--bootstrap", "20", "--format", "json",
        )  # fmt: skip
    result = json.loads(res.stdout)
    assert result["flip_rate"] == {"scripted-judge": 1.0}
    assert result["first_position_rate"] == {"scripted-judge": 1.0}
    table = format_results(result, "table")
    assert "flip rate 100% (orders disagree), first position picked 100.0% of orders" in table


def test_style_control_reports_its_four_coefficients(tmp_path: Path) -> None:
    runs = [
        str(write_run(tmp_path / "md", "md", [f"s{i}" for i in range(6)],
                      lambda s, t: f"## Plan\n- {s}\n- **{t}**\n" + "x" * (50 * t))),
        str(write_run(tmp_path / "plain", "plain", [f"s{i}" for i in range(6)],
                      lambda s, t: f"plain {s} {t}")),
    ]  # fmt: skip
    with JudgeServer(lambda first, second: "first" if "##" in first else "second") as server:
        res = empathos(
            "compare", "--pairwise", *runs, "--out", str(tmp_path / "pw"),
            *judge_flags(server.url), "--bootstrap", "10", "--format", "json", "--style-control",
        )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    result = json.loads(res.stdout)
    assert list(result["style_coefs"]) == list(STYLE)
    assert "style coefficients" in format_results(result, "table")


def test_the_trueskill_table_says_its_interval_is_mu_plus_minus_sigma() -> None:
    items = [Item(scenario_id=f"s{s}", model=m, transcript=()) for s in range(3) for m in "ab"]
    judged = []
    for s in range(3):
        for f, g in (("a", "b"), ("b", "a")):
            pick = Pick(winner="first" if f == "b" else "second", margin=2)
            judged.append(Judgement(
                scenario_id=f"s{s}", trial=0, first=f, second=g, judge="J", template_id="t",
                template_version="1", picks={"overall": pick},
            ))  # fmt: skip
    result = summarize(judged, items, "J", rating="trueskill")
    table = format_results(result, "table")
    assert "interval: TrueSkill mu +- 1.96 sigma" in table.splitlines()[0]
    assert "bootstrap" not in table


def test_a_new_model_on_the_leaderboard_scale_fitted_from_its_orders(tmp_path: Path) -> None:
    """The Elo file holds orders with upsets, so the conversion from its ratings to logits
    can be fitted: the board is held, `scale` is that fit (not the old fixed 0.0206), and the
    new model, which beat the middle and lower models and lost to the top one, lands above
    the middle one (near the top one: on so flat a scale, beating both lower models every
    time outweighs losing to the top one) with an interval that carries the board's sigma."""
    runs_file, elo_file = write_board(tmp_path / "board")
    elo = json.loads(elo_file.read_text(encoding="utf-8"))

    def order(test: str, other: str, won: bool, n: int) -> dict[str, object]:
        pair = {"test_model": test, "neighbor_model": other, "iteration_index": "1"}
        plus = (3, 1) if won else (1, 3)
        return {"pair": pair, "scenario_id": str(1 + n % 3), "plus_for_test": plus[0],
                "plus_for_other": plus[1]}  # fmt: skip

    orders = [order("board-high", "board-low", n % 5 != 0, n) for n in range(10)]
    orders += [order("board-mid", "board-low", n % 3 != 0, n) for n in range(9)]
    orders += [order("board-high", "board-mid", n % 3 != 0, n) for n in range(9)]
    elo["__metadata__"]["global_pairwise_comparisons"] = orders
    elo_file.write_text(json.dumps(elo), encoding="utf-8")
    new = write_run(tmp_path / "new", "newbie", list(SCENARIOS), lambda s, t: "mine quality:3")
    with JudgeServer(lambda a, b: None, answer=prefers_quality) as server:
        res = empathos(
            "compare", "--pairwise", "--eqbench3", str(eqbench_copy(tmp_path / "eq3")), str(new),
            "--leaderboard", str(runs_file), "--leaderboard-elo", str(elo_file),
            "--out", str(tmp_path / "pw"), *judge_flags(server.url), "--format", "json",
            "--bootstrap", "30",
        )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    result = json.loads(res.stdout)
    board = read_leaderboard(runs_file, elo_file)
    ratings = {m: b.elo for m, b in board.ratings.items()}
    assert result["scale"] == board_scale(board_outcomes(board.comparisons), ratings)
    assert 0.0 < result["scale"] < 0.015  # the old fixed conversion: 0.0206
    rows = {r["model"]: r for r in result["ratings"]}
    assert rows["board-mid"]["fixed"] and rows["board-mid"]["elo"] == 1200.0
    new_row = rows["newbie"]
    assert new_row["identified"] and 1200.0 < new_row["elo"] < 1600.0
    assert new_row["elo_lower"] < new_row["elo"] < new_row["elo_upper"]
    assert "leaderboard's uncertainty" in result["interval"]
