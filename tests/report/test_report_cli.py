"""`empathos report` and `empathos compare` on real record files: the numbers equal
`empathos score`'s, labels come from the scenarios, bad files are reported like score does."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

from report_fixtures import SCENARIOS, write_models
from report_helpers import empathos, score_json

from empathos.examples import examples_dir


def _payload(report: Path) -> dict:
    text = (report / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', text, re.S)
    assert m, "no report data in the page"
    return json.loads(m.group(1).replace("<\\/", "</"))


def _csv_rows(report: Path) -> dict[str, dict[str, str]]:
    with (report / "tables" / "leaderboard.csv").open(encoding="utf-8") as fh:
        return {row["model"]: row for row in csv.DictReader(fh)}


def _check_numbers(report: Path, scored: dict[str, dict]) -> None:
    rows = _csv_rows(report)
    assert set(rows) == set(scored)
    page = (report / "index.html").read_text(encoding="utf-8")
    md = (report / "tables" / "leaderboard.md").read_text(encoding="utf-8")
    for model, s in scored.items():
        r = rows[model]
        assert abs(float(r["epmq"]) - s["epmq"]) <= 0.01
        for k, v in s["indices"].items():
            assert abs(float(r[k]) - v) <= 0.01, (model, k)
        assert int(r["n"]) == s["n"]
        assert abs(float(r["success_rate"]) - s["success_rate"]) <= 1e-9
        lo, hi = float(r["epmq_lo"]), float(r["epmq_hi"])
        assert lo <= s["epmq"] <= hi
        # the page and the Markdown table show the same EPM-Q, rounded to 2 decimals
        row = re.search(r'<tr data-model="' + re.escape(model) + r'">(.*?)</tr>', page)
        assert row and f"<td>{s['epmq']:.2f}<span" in row.group(1)
        assert f"| {s['epmq']:.2f} [" in md


def test_report_of_the_examples_matches_score(examples_report: Path) -> None:
    _check_numbers(examples_report, score_json(examples_dir()))
    for name in ("leaderboard", "radar_domain", "radar_mechanism", "radar_persona", "heatmap"):
        assert (examples_report / "figures" / f"{name}.png").stat().st_size > 1000
        assert (
            (examples_report / "figures" / f"{name}.svg").read_text().lstrip().startswith("<?xml")
        )
    assert "\\begin{tabular}" in (examples_report / "tables" / "leaderboard.tex").read_text()
    data = _payload(examples_report)
    assert len(data["dialogues"]) == len(list(examples_dir().glob("*/*.json")))
    # the examples' scenarios exist nowhere: every grouping holds them as "unlabelled"
    [breakdown] = data["figs"]["breakdown-domain"]["data"]
    assert breakdown["x"] == ["unlabelled"]


def test_report_of_the_published_sample(empa_sample: Path, tmp_path: Path) -> None:
    results = empa_sample / "results"
    res = empathos("report", str(results), "--out", str(tmp_path), "--no-figures")
    assert res.returncode == 0, res.stderr
    _check_numbers(tmp_path, score_json(results))
    data = _payload(tmp_path)
    assert len(data["dialogues"]) == 90
    # labels come from the layout above results/: six domains, no unlabelled case
    theta = set(data["figs"]["breakdown-domain"]["data"][0]["x"])
    assert len(theta) == 6 and "unlabelled" not in theta
    mech = set(data["figs"]["breakdown-mechanism"]["data"][0]["x"])
    assert mech <= {f"{a} {h}" for a in "CAP" for h in ("routine", "hard")} and len(mech) == 6


def test_bad_files_are_listed_and_the_report_is_still_written(tmp_path: Path) -> None:
    src = tmp_path / "model-x"
    shutil.copytree(examples_dir() / "example-warm", src)
    (src / "broken.json").write_text("{not json", encoding="utf-8")
    (src / "other.json").write_text('{"hello": 1}', encoding="utf-8")
    out = tmp_path / "report"
    res = empathos("report", str(src), "--out", str(out), "--no-figures")
    assert res.returncode == 1
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 2
    assert any("broken.json" in e for e in errors) and any("other.json" in e for e in errors)
    assert "Traceback" not in res.stderr
    assert (out / "index.html").is_file()
    assert len(_payload(out)["dialogues"]) == 2


def test_compare_two_models(tmp_path: Path) -> None:
    warm, curt = examples_dir() / "example-warm", examples_dir() / "example-curt"
    scored = score_json(examples_dir())
    res = empathos("compare", str(warm), str(curt), "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    text = res.stdout
    # per-dialogue EPM-Q averages to the model's EPM-Q, so the means are score's numbers
    assert f"{scored['example-warm']['epmq']:.2f}" in text
    assert f"{scored['example-curt']['epmq']:.2f}" in text
    diff = scored["example-warm"]["epmq"] - scored["example-curt"]["epmq"]
    assert f"{diff:+.2f}" in text
    assert re.search(r"won / lost / tied by A\s*│\s*2 / 0 / 0", text)
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert 'id="sec-compare"' in page and f"{diff:+.2f}" in page


def test_compare_counts_scenarios_each_side_lacks(tmp_path: Path) -> None:
    a = tmp_path / "a"
    shutil.copytree(examples_dir() / "example-warm", a)
    (a / "ex-new-city.json").unlink()
    res = empathos("compare", str(a), str(examples_dir() / "example-curt"), "--metric", "success")
    assert res.returncode == 0, res.stderr
    assert re.search(r"scenarios example-warm lacks\s*│\s*1", res.stdout)
    assert re.search(r"shared scenarios / pairs\s*│\s*1 / 1", res.stdout)


def test_compare_rejects_an_unknown_metric_and_a_mixed_side() -> None:
    res = empathos("compare", str(examples_dir()), str(examples_dir() / "example-curt"))
    assert res.returncode == 2 and "one model per side" in res.stderr
    res = empathos(
        "compare", str(examples_dir() / "example-warm"), str(examples_dir() / "example-curt"),
        "--metric", "nope",
    )  # fmt: skip
    assert res.returncode == 2 and "unknown metric" in res.stderr


def test_score_points_at_report() -> None:
    res = empathos("score", str(examples_dir()))
    assert res.returncode == 0
    assert "empathos report" in res.stderr


def test_report_counts_every_dialogue_of_models_behind_endpoint_ids(tmp_path: Path) -> None:
    """Issue 24: two of 16 models carry opaque endpoint ids (their rows are named by
    directory); every one of their dialogues reaches the page count, the leaderboard's
    scenarios and intervals, the heatmap, the trajectories and the dialogue list."""
    root = tmp_path / "results"
    dirs = write_models(root, n_models=16, opaque=2)
    n = 16 * len(SCENARIOS)
    out = tmp_path / "report"
    res = empathos("report", str(root), "--out", str(out), "--scenarios", "builtin", "--no-figures")
    assert res.returncode == 0, res.stderr
    assert f"16 models, {n} dialogues" in res.stderr
    scored = score_json(root)
    assert set(scored) == set(dirs) and sum(r["n"] for r in scored.values()) == n
    _check_numbers(out, scored)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert f"16 models, {n} dialogues" in page
    data = _payload(out)
    assert len(data["dialogues"]) == n
    assert {row[0] for row in data["dialogues"]} == set(dirs)
    for opaque in dirs[-2:]:
        # its leaderboard row: every scenario, one trial, an interval
        row = re.search(r'<tr data-model="' + re.escape(opaque) + r'">(.*?)</tr>', page)
        assert row is not None
        cells = re.findall(r"<td>([^<]*)", row.group(1))
        assert cells[1:4] == [str(len(SCENARIOS)), str(len(SCENARIOS)), "1"], cells
        assert _csv_rows(out)[opaque]["epmq_lo"] != ""
    heat = data["figs"]["heatmap"]["data"][0]
    assert heat["y"] == data["models"]
    assert all(v is not None for z_row in heat["z"] for v in z_row)
    for model in dirs:
        three_d = data["traj"][model][0]["data"]
        lines = sum(v is None for t in three_d if t.get("mode") == "lines" for v in t["x"])
        assert lines == len(SCENARIOS), model
    for grouping in ("domain", "mechanism", "persona"):
        [cells] = data["figs"][f"breakdown-{grouping}"]["data"]
        assert cells["y"] == data["models"] and set(cells["y"]) == set(dirs)
        assert all(z_row and all(v is not None for v in z_row) for z_row in cells["z"])


def test_score_report_and_compare_name_a_model_alike(tmp_path: Path) -> None:
    root = tmp_path / "results"
    dirs = write_models(root, n_models=3, opaque=1)  # model-02 hides behind an endpoint id
    assert sorted(score_json(root)) == dirs
    out = tmp_path / "report"
    res = empathos("report", str(root), "--out", str(out), "--no-figures")
    assert res.returncode == 0, res.stderr
    assert sorted(_payload(out)["models"]) == dirs
    record_names = sorted(score_json(root, "--label", "record"))
    assert record_names[0].startswith("Custom-ep-") and record_names[1:] == dirs[:2]
    res = empathos("compare", str(root / dirs[0]), str(root / dirs[2]))
    assert res.returncode == 0, res.stderr
    assert f"{dirs[0]} (A) vs {dirs[2]} (B)" in res.stdout
    res = empathos("compare", str(root / dirs[0]), str(root / dirs[2]), "--label", "record")
    assert f"{record_names[0]} (B)" in res.stdout


def test_compare_with_a_side_of_errors_only_says_so(tmp_path: Path) -> None:
    root = tmp_path / "results"
    dirs = write_models(root, n_models=2, opaque=0)
    for f in (root / dirs[1]).glob("*.json"):
        doc = json.loads(f.read_text("utf-8"))
        doc["status"] = "error"
        doc["termination_reason"] = "API error: the endpoint kept failing"
        f.write_text(json.dumps(doc), "utf-8")
    errors = score_json(root)[dirs[1]]
    assert errors["n"] == 0 and errors["extra"]["errors"] == len(SCENARIOS)
    res = empathos("compare", str(root / dirs[0]), str(root / dirs[1]))
    assert res.returncode != 0
    assert "nan" not in (res.stdout + res.stderr).lower()
    line = res.stderr.strip().splitlines()[-1]
    assert line == (
        f"error: {dirs[1]} has no scored dialogue to compare: {len(SCENARIOS)} of "
        f"{len(SCENARIOS)} ended as errors (see their termination reasons)"
    )
