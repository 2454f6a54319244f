"""Leaderboard scoring: vectorised metrics vs a readable loop, order independence, CLI, replay."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from empathos.cli.main import app
from empathos.epm import (
    INDEX_NAMES,
    EPMConfig,
    TerminationKind,
    dialogue_indices,
    half_space_distance,
)
from empathos.examples import example_paths, examples_dir
from empathos.records import (
    DialogueRecord,
    IndicatorRating,
    Turn,
    load_records,
    read_record,
    record_from_ratings,
    write_record,
)
from empathos.rubric import EMPATHY_RUBRIC, Axis, Indicator, Rubric
from empathos.scoring import leaderboard, records_to_batch, replay_record, score_records
from published_factory import BAD, GOOD, make_published

REF = EPMConfig()
MDEP = [i.key for i in EMPATHY_RUBRIC.mdep]
IEDR = {i.key: IndicatorRating(level=1) for i in EMPATHY_RUBRIC.iedr}


def loop_indices(rec: DialogueRecord) -> list[float]:
    """EPM_SPEC 6.1 written out for one record, point by point."""
    pts = [rec.initial_state] + [e.state for e in rec.evaluations if e.scored]
    rated = [e for e in rec.evaluations if e.scored]
    r0 = float(half_space_distance(np.array(pts[0].P))) or 1.0
    dT = float(half_space_distance(np.array(pts[-1].P)))
    E, T = pts[-1].E_total, rec.total_turns
    s_net = sum(r.level for e in rated for r in e.ratings.values() if r.level is not None)
    pen = sum(
        abs(r.level) for e in rated for k, r in e.ratings.items() if k.endswith("Neg") and r.level
    )
    dEs = [p.delta_E or 0.0 for p in pts]
    length = sum(math.dist(a.P, b.P) for a, b in itertools.pairwise(pts))
    disp = math.dist(pts[-1].P, pts[0].P)
    tau = (1.0 if length < 1e-9 else 0.0) if disp < 1e-9 else length / disp
    tau = max(tau, 1.0)
    return [
        min(100.0, max(0.0, ((r0 - dT) / r0 * 100 + 100) / 2)),
        max(0.0, E) / (1.2 * r0) * 100,
        max(0.0, s_net) / (1.5 * r0) * 100,
        max(0.0, E / T) / 2.5 * 100,
        max(0.0, sum(dEs) / len(dEs)) / 2.5 * 100,
        max(0.0, (3 - tau) / 2 * 100),
        sum(1 for x in dEs if x > 0) / len(dEs) * 100,
        (sum(p.alignment or 0.0 for p in pts) / len(pts) + 1) / 2 * 100,
        max(0.0, (3 - pen / len(pts)) / 3 * 100),
    ]


def loop_indices_paper(rec: DialogueRecord) -> list[float]:
    """EPM_SPEC 6.2 written out for one record."""
    pts = [rec.initial_state] + [e.state for e in rec.evaluations if e.scored]
    rated = [e for e in rec.evaluations if e.scored]
    norm = lambda p: math.sqrt(sum(x * x for x in p))  # noqa: E731
    phi = lambda x, x0, x100: min(100.0, max(0.0, (x - x0) / (x100 - x0) * 100))  # noqa: E731
    r0 = norm(pts[0].P) + 1e-6
    E, T = pts[-1].E_total, rec.total_turns
    s_net = sum(sum(e.state.v or ()) for e in rated)
    pen = sum(
        abs(r.level) for e in rated for k, r in e.ratings.items() if k.endswith("Neg") and r.level
    )
    dEs = [p.delta_E or 0.0 for p in pts]
    length = sum(math.dist(a.P, b.P) for a, b in itertools.pairwise(pts))
    disp = math.dist(pts[-1].P, pts[0].P)
    tau = max((1.0 if length < 1e-9 else 0.0) if disp < 1e-9 else length / disp, 1.0)
    rho_max = math.sqrt(12)
    return [
        phi((r0 - norm(pts[-1].P)) / r0, -1, 1),
        max(0.0, E) / r0 * 100,
        max(0.0, s_net) / (1.2 * r0) * 100,
        max(0.0, E / T) / rho_max * 100,
        max(0.0, sum(dEs) / len(dEs)) / rho_max * 100,
        phi(tau, 3, 1),
        sum(1 for x in dEs if x > 0) / len(dEs) * 100,
        phi(sum(p.alignment or 0.0 for p in pts) / len(pts), -1, 1),
        phi(pen / len(pts), 3, 0),
    ]


rows_strategy = st.lists(
    st.one_of(st.none(), st.tuples(*[st.sampled_from(i.levels) for i in EMPATHY_RUBRIC.mdep])),
    min_size=1,
    max_size=45,
)


def _record(rows: list[tuple[int, ...] | None], case: str = "c1") -> DialogueRecord:
    mdep = [
        None if r is None else {k: IndicatorRating(level=lv) for k, lv in zip(MDEP, r, strict=True)}
        for r in rows
    ]
    cfg = REF.model_copy(update={"unscored_share_limit": 1.0})
    turns = [Turn(index=i + 1, user="u", assistant="a") for i in range(len(rows))]
    return record_from_ratings(
        scenario_id=case, model="m", iedr=IEDR, turns=turns, mdep=mdep, config=cfg
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(rows_strategy, min_size=1, max_size=6))
def test_vectorised_indices_match_the_readable_loop(
    dialogues: list[list[tuple[int, ...] | None]],
) -> None:
    recs = [_record(rows) for rows in dialogues]
    got = dialogue_indices(records_to_batch(recs), REF)
    want = np.array([loop_indices(r) for r in recs])
    assert np.allclose(got, want, atol=1e-9)
    paper = EPMConfig.preset("paper")
    got = dialogue_indices(records_to_batch(recs), paper)
    assert np.allclose(got, np.array([loop_indices_paper(r) for r in recs]), atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.permutations(list(range(4))))
def test_scores_do_not_depend_on_record_order(order: list[int]) -> None:
    recs = [read_record(p) for p in example_paths()]
    base = score_records("all", recs, REF)
    shuffled = score_records("all", [recs[i] for i in order], REF)
    assert shuffled.epmq == pytest.approx(base.epmq, abs=1e-9)
    for k in INDEX_NAMES:
        assert shuffled.indices[k] == pytest.approx(base.indices[k], abs=1e-9)
    assert shuffled.extra["terminations"] == base.extra["terminations"]


def test_examples_replay_and_group_by_model_and_case() -> None:
    loaded, errors = load_records([examples_dir()])
    assert not errors and len(loaded) == 4
    assert all(replay_record(x.record, "x").status == "ok" for x in loaded)
    by_model = leaderboard(loaded, REF, by="model")
    assert [r.model for r in by_model] == ["example-warm", "example-curt"]
    assert by_model[0].epmq is not None and by_model[1].epmq is not None
    assert by_model[0].epmq > by_model[1].epmq
    assert sum(r.extra["unscored_evaluations"] for r in by_model) == 1
    by_case = leaderboard(loaded, REF, by="case")
    assert sorted(r.model for r in by_case) == ["ex-driving-test", "ex-new-city"]


def test_error_dialogues_are_counted_apart(tmp_path: Path) -> None:
    rec = _record([(1, 0, 1, 0, 1, 0)] * 45)
    assert rec.termination.kind is not TerminationKind.ERROR
    err = rec.model_copy(
        update={"termination": rec.termination.model_copy(update={"kind": TerminationKind.ERROR})}
    )
    row = score_records("m", [rec, err], REF)
    assert row.n == 1 and row.extra["errors"] == 1


TWO_AXES = Rubric(
    name="two-axis",
    axes=(Axis(key="X", name="x"), Axis(key="Y", name="y")),
    iedr=(Indicator(key="X.1", axis="X", name="x1", kind="deficit", scores={0: 0, 1: -6}),
          Indicator(key="Y.1", axis="Y", name="y1", kind="deficit", scores={0: 0, 1: -6})),
    mdep=(Indicator(key="X.Prog", axis="X", name="xp", kind="progress", scores={0: 0, 1: 2}),
          Indicator(key="Y.Prog", axis="Y", name="yp", kind="progress", scores={0: 0, 1: 2}),
          Indicator(key="Y.Neg", axis="Y", name="yn", kind="negative", scores={0: 0, -1: -3})),
)  # fmt: skip


def test_two_axis_rubric_records_score_and_replay_through_the_cli(tmp_path: Path) -> None:
    cfg = REF.model_copy(update={"min_turns": 3, "max_turns": 10})
    iedr = {"X.1": IndicatorRating(level=1), "Y.1": IndicatorRating(level=1)}
    for name, row in (("good", (1, 1, 0)), ("bad", (0, 0, -1))):
        ratings = [
            {
                k: IndicatorRating(level=v)
                for k, v in zip(["X.Prog", "Y.Prog", "Y.Neg"], row, strict=True)
            }
        ] * 10
        rec = record_from_ratings(
            scenario_id="two", model=name, iedr=iedr, rubric=TWO_AXES, config=cfg,
            turns=[Turn(index=i, user="u") for i in range(1, 11)], mdep=ratings,
        )  # fmt: skip
        write_record(rec, tmp_path / name / "two.json")
    runner = CliRunner()
    res = runner.invoke(app, ["score", str(tmp_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = {r["model"]: r for r in json.loads(res.stdout)}
    assert rows["good"]["successes"] == 1 and rows["bad"]["successes"] == 0
    assert rows["good"]["epmq"] > rows["bad"]["epmq"]
    res = runner.invoke(app, ["replay", str(tmp_path)])
    assert res.exit_code == 0 and "2 reproduce" in res.stdout


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathos", *args], capture_output=True, text=True, timeout=120
    )


def test_score_cli_reports_bad_files_and_scores_the_rest(tmp_path: Path) -> None:
    good = tmp_path / "model-x"
    good.mkdir()
    (good / "a.json").write_text(json.dumps(make_published([GOOD, BAD])), encoding="utf-8")
    (good / "b.json").write_text("[1, 2", encoding="utf-8")
    broken = make_published([GOOD])
    broken["epj"]["trajectory"][1]["P_t"] = [1, 2]
    (good / "c.json").write_text(json.dumps(broken), encoding="utf-8")
    out = _run("score", str(tmp_path), "--format", "json")
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    err = out.stderr.splitlines()
    assert any("b.json" in line and "(file)" in line and "not valid JSON" in line for line in err)
    assert any("c.json" in line and "epj.trajectory[1].P_t" in line for line in err)
    assert "2 skipped" in out.stderr
    assert [r["n"] for r in json.loads(out.stdout)] == [1]


def test_replay_reports_mismatch_and_unpublished_rule(tmp_path: Path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    osc = make_published(
        [GOOD] * 3, reason="EPM v2.0 Failure: Vector Oscillation (total 40, net 2)"
    )
    (d / "osc.json").write_text(json.dumps(osc), encoding="utf-8")
    out = _run("replay", str(d))
    assert out.returncode == 0, out.stdout
    assert "not reproducible: unpublished rule" in out.stdout and "osc.json" in out.stdout
    tampered = make_published([GOOD] * 3)
    tampered["epj"]["trajectory"][2]["mdep_analysis"]["A_Prog_level"] = 2  # ratings != stored v_t
    (d / "bad.json").write_text(json.dumps(tampered), encoding="utf-8")
    out = _run("replay", str(d))
    assert out.returncode == 1
    lines = [x for x in out.stdout.splitlines() if x.startswith("mismatch")]
    assert len(lines) == 1 and "bad.json" in lines[0] and "turn 2" in lines[0]
    assert "1 mismatch" in out.stdout


def test_replay_flags_a_wrong_termination_turn(tmp_path: Path) -> None:
    rec = read_record(example_paths()[0])
    moved = rec.model_copy(update={"termination": rec.termination.model_copy(update={"turn": 2})})
    res = replay_record(moved, "x")
    assert res.status == "mismatch" and "termination" in res.problems[-1]


def test_score_without_path_uses_examples() -> None:
    out = _run("score", "--format", "csv", "--by", "case")
    assert out.returncode == 0
    assert out.stdout.splitlines()[0].startswith("case,n,successes")
    assert "bundled example records" in out.stderr


@pytest.mark.parametrize("command", ["score", "replay"])
def test_a_folder_without_records_says_so(tmp_path: Path, command: str) -> None:
    (tmp_path / "notes.txt").write_text("no records here", encoding="utf-8")
    out = _run(command, str(tmp_path))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"error: no record files (.json) found in {tmp_path}" in out.stderr
