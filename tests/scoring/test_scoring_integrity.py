"""Numbers that cannot be wrong by accident: duplicates, contradictions, bad levels, the
table's error column and row labels (issue 11, parts 1-4).

The published sample is only ever read or copied into tmp_path; expected numbers come from
its NOTICE.md at test time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from empathos.epm import EPMConfig, TerminationKind
from empathos.records import IndicatorRating, Turn, record_from_ratings, write_record
from empathos.rubric import EMPATHY_RUBRIC
from published_factory import GOOD, make_published

MDEP = [i.key for i in EMPATHY_RUBRIC.mdep]
IEDR = {i.key: IndicatorRating(level=1) for i in EMPATHY_RUBRIC.iedr}
OPAQUE = "Custom-ep-20260224114647-4d99q"


def _run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathos", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _rows(out: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {row["model"]: row for row in json.loads(out.stdout)}


def _notice_epmq(sample: Path, model_dir: str) -> float:
    for line in (sample / "NOTICE.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == model_dir:
            return float(cells[-1])
    raise AssertionError(f"{model_dir} not in NOTICE.md")


def _own(case: str, ratings: tuple[int, ...], n: int, model: str = "m") -> Any:
    row = {k: IndicatorRating(level=lv) for k, lv in zip(MDEP, ratings, strict=True)}
    return record_from_ratings(
        scenario_id=case,
        model=model,
        iedr=IEDR,
        turns=[Turn(index=i + 1, user="u", assistant="a") for i in range(n)],
        mdep=[row] * n,
        config=EPMConfig(),
    )


# -- 1. duplicates -------------------------------------------------------------------------


def test_a_directory_with_one_of_its_files_counts_that_file_once(
    empa_sample: Path, tmp_path: Path
) -> None:
    src = empa_sample / "results" / "gpt-4o"
    model = shutil.copytree(src, tmp_path / "gpt-4o")
    one = sorted(model.glob("*.json"))[0]
    out = _run("score", model, one, "--format", "json")
    assert out.returncode == 0, out.stderr
    (row,) = _rows(out).values()
    assert row["n"] == 30
    assert abs(row["epmq"] - _notice_epmq(empa_sample, "gpt-4o")) <= 0.01
    warnings = [ln for ln in out.stderr.splitlines() if ln.startswith("warning: duplicate")]
    assert len(warnings) == 1 and warnings[0].count(str(one)) == 2  # kept and also-in


def test_a_copied_results_folder_does_not_double_the_models(
    empa_sample: Path, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    for name in ("gpt-4o", "qwen3-8b"):
        shutil.copytree(empa_sample / "results" / name, results / name)
        shutil.copytree(empa_sample / "results" / name, results / f"{name} (copy)")
    out = _run("score", results, "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = _rows(out)
    assert len(rows) == 2 and {r["n"] for r in rows.values()} == {30}
    dup_lines = [ln for ln in out.stderr.splitlines() if ln.startswith("warning: duplicate")]
    assert len(dup_lines) == 60 and all("(copy)" in ln for ln in dup_lines)
    assert "60 duplicates counted once" in out.stderr
    counted = _run("score", results, "--format", "json", "--allow-duplicates")
    assert {r["n"] for r in _rows(counted).values()} == {60}
    assert "warning: duplicate" not in counted.stderr


def test_same_model_scenario_and_trial_is_one_dialogue(tmp_path: Path) -> None:
    a = _own("c1", (1, 0, 1, 0, 1, 0), 45)
    b = _own("c1", (2, 0, 1, 0, 1, 0), 45)  # other content, same dialogue identity
    c = _own("c2", (1, 0, 1, 0, 1, 0), 45)
    for name, rec in (("a", a), ("b", b), ("c", c)):
        write_record(rec, tmp_path / "m" / f"{name}.json")
    out = _run("score", tmp_path / "m", "--format", "json")
    assert _rows(out)["m"]["n"] == 2
    assert "same model, scenario and trial" in out.stderr and "b.json" in out.stderr


# -- 2. contradictions ---------------------------------------------------------------------


def test_success_that_contradicts_the_termination_is_named_and_a_replay_mismatch(
    tmp_path: Path,
) -> None:
    rec = _own("c1", (0, 0, 0, 0, 0, 0), 45)
    assert rec.termination.kind is TerminationKind.TIMEOUT and not rec.success
    liar = rec.model_copy(update={"success": True})
    path = write_record(liar, tmp_path / "m" / "c1.json")
    out = _run("score", path, "--format", "json")
    assert f"warning: {path}: success: success is true but termination.kind is timeout" in (
        out.stderr
    )
    assert _rows(out)["m"]["successes"] == 0  # the termination wins
    replay = _run("replay", path)
    assert replay.returncode == 1
    assert "mismatch" in replay.stdout and "contradicts the stored termination" in replay.stdout


def test_a_trajectory_that_disagrees_with_its_ratings_is_named(tmp_path: Path) -> None:
    rec = _own("c1", (1, 0, 1, 0, 1, 0), 45)
    ev = rec.evaluations[2]
    changed = {**ev.ratings, "C.Prog": IndicatorRating(level=2)}
    evals = list(rec.evaluations)
    evals[2] = ev.model_copy(update={"ratings": changed})
    path = write_record(rec.model_copy(update={"evaluations": evals}), tmp_path / "m" / "x.json")
    out = _run("score", path, "--format", "json")
    assert out.returncode == 0
    line = next(ln for ln in out.stderr.splitlines() if "evaluations[2].state.v" in ln)
    assert str(path) in line and "the ratings give" in line


def test_published_success_against_its_termination_names_the_published_fields(
    tmp_path: Path,
) -> None:
    doc = make_published([GOOD] * 3)  # a timeout by its reason
    doc["epj"]["epm_victory_analysis"] = {
        "conditions": {"geometric": {"achieved": True}, "energetic": {"achieved": True}},
        "primary_victory_type": "geometric",
    }
    path = tmp_path / "m" / "script_900_result.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = _run("score", path, "--format", "json")
    assert f"{path}: epj.epm_victory_analysis: success is true but termination_reason" in (
        out.stderr
    )
    assert "contradicts the stored termination" in _run("replay", path).stdout


# -- 3. bad levels -------------------------------------------------------------------------


def _published_with(mutate: Any) -> dict[str, Any]:
    doc = make_published([GOOD, GOOD])
    mutate(doc)
    return doc


def _mdep(doc: dict[str, Any], value: object) -> None:
    doc["epj"]["trajectory"][1]["mdep_analysis"]["C_Prog_level"] = value


BAD_LEVELS = [
    (lambda d: _mdep(d, 7), "epj.trajectory[1].mdep_analysis.C_Prog_level", "7"),
    (lambda d: _mdep(d, float("nan")), "epj.trajectory[1].mdep_analysis.C_Prog_level", "nan"),
    (lambda d: _mdep(d, float("inf")), "epj.trajectory[1].mdep_analysis.C_Prog_level", "inf"),
    (lambda d: _mdep(d, True), "epj.trajectory[1].mdep_analysis.C_Prog_level", "True"),
    (lambda d: _mdep(d, "L1"), "epj.trajectory[1].mdep_analysis.C_Prog_level", "'L1'"),
    (lambda d: _mdep(d, [1]), "epj.trajectory[1].mdep_analysis.C_Prog_level", "[1]"),
    (
        lambda d: d["epj"]["iedr_details"]["filled_iedr"]["_detailed"].update({"C.1_level": -5}),
        "epj.iedr_details.filled_iedr._detailed.C.1_level",
        "-5",
    ),
    (
        lambda d: d["epj"]["iedr_details"]["filled_iedr"].update({"A.2": 4}),
        "epj.iedr_details.filled_iedr.A.2",
        "4",
    ),
]


@pytest.mark.parametrize(("mutate", "field", "shown"), BAD_LEVELS)
def test_a_bad_published_level_is_named_and_the_file_not_scored(
    tmp_path: Path, mutate: Any, field: str, shown: str
) -> None:
    path = tmp_path / "m" / "script_900_result.json"
    path.parent.mkdir()
    path.write_text(json.dumps(_published_with(mutate)), encoding="utf-8")
    out = _run("score", path, "--format", "json")
    assert out.returncode == 1
    assert json.loads(out.stdout) == []
    assert f"error: {path}: {field}: level {shown} is not on the scale" in out.stderr


@pytest.mark.parametrize("value", [2.0, "1", True, float("nan"), None])
def test_a_bad_own_level_is_named_and_the_file_not_scored(tmp_path: Path, value: object) -> None:
    rec = _own("c1", (1, 0, 1, 0, 1, 0), 45)
    data = rec.model_dump(mode="json")
    if value is None:
        data["iedr"]["ratings"]["A.1"]["level"] = -5
        field, text = "iedr.ratings.A.1.level", "-5 is out of range"
    else:
        data["evaluations"][3]["ratings"]["P.Neg"]["level"] = value
        field, text = "evaluations.3.ratings.P.Neg.level", "a level must be a whole number"
    bad = tmp_path / "m" / "bad.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(data), encoding="utf-8")
    out = _run("score", bad, "--format", "json")
    assert out.returncode == 1 and json.loads(out.stdout) == []
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("error:"))
    assert str(bad) in line and field.replace(".", "") in re.sub(r"[.\[\]]", "", line)
    assert text in line


# -- 4. the table shows what JSON shows ----------------------------------------------------


def test_the_table_shows_errors_next_to_n(tmp_path: Path) -> None:
    ok = _own("c0", (1, 0, 1, 0, 1, 0), 45)
    assert ok.success
    write_record(ok, tmp_path / "m" / "c0.json")
    for i in range(1, 8):
        short = _own(f"c{i}", (1, 0, 1, 0, 1, 0), 3)  # ends early: an error
        assert short.termination.kind is TerminationKind.ERROR
        write_record(short, tmp_path / "m" / f"c{i}.json")
    out = _run("score", tmp_path / "m")
    header = next(ln for ln in out.stdout.splitlines() if " n " in ln and "err" in ln)
    cells = [c.strip() for c in re.split(r"[┃│]", header) if c.strip()]
    assert cells[:5] == ["model", "n", "err", "succ", "rate"]
    row = next(ln for ln in out.stdout.splitlines() if ln.lstrip("│ ").startswith("m "))
    values = [c.strip() for c in row.split("│") if c.strip()]
    assert values[1:4] == ["1", "7", "1"]
    assert "1 dialogue scored, 7 ended as errors (not scored)" in out.stderr


def test_help_explains_every_column() -> None:
    from empathos.report import COLUMN_LEGEND

    out = _run("score", "--help")
    text = " ".join(out.stdout.split())
    for name, meaning in COLUMN_LEGEND:
        assert f"{name} = {' '.join(meaning.split())}" in text
    assert "Tau±" in text and "0 when the dialogue ended farther from the goal" in text


def test_opaque_endpoint_ids_are_labelled_by_directory(empa_sample: Path, tmp_path: Path) -> None:
    seed = tmp_path / "seed-2.0"
    seed.mkdir()
    for f in sorted((empa_sample / "results" / "gpt-4o").glob("*.json")):
        doc = json.loads(f.read_text(encoding="utf-8"))
        doc["test_model_name"] = OPAQUE
        (seed / f.name).write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    shutil.copytree(empa_sample / "results" / "qwen3-8b", tmp_path / "qwen3-8b")
    out = _run("score", tmp_path, "--format", "json")
    assert set(_rows(out)) == {"seed-2.0", "Custom-qwen/qwen3-8b"}
    assert _rows(out)["seed-2.0"]["n"] == 30
    by_record = _run("score", tmp_path, "--format", "json", "--label", "record")
    assert set(_rows(by_record)) == {OPAQUE, "Custom-qwen/qwen3-8b"}
    by_dir = _run("score", tmp_path, "--format", "json", "--label", "dir")
    assert set(_rows(by_dir)) == {"seed-2.0", "qwen3-8b"}
    table = _run("score", tmp_path)
    assert "seed-2.0" in table.stdout and OPAQUE not in table.stdout
