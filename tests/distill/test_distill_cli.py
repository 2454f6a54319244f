"""The `empathos distill` command: run, review export/import/report, expand (subprocesses)."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

from scipy.stats import binomtest

from conftest import CORPUS, HANDLERS
from empathos.distill.review import wilson_interval
from empathos.scenarios import load_scenarios


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathos", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "distill.yaml"
    cfg.write_text(
        f"roles:\n  distiller: {{kind: scripted, handler: '{HANDLERS}:handler'}}\nconcurrency: 3\n",
        "utf-8",
    )
    return cfg


def test_run_review_and_expand_from_the_command_line(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    out = tmp_path / "out"
    res = _cli("distill", str(CORPUS), "--out", str(out), "--config", str(cfg), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "written 12, skipped 0, duplicate 0, failed 0" in res.stdout
    check = _cli("scenarios", "check", str(out / "scenarios"), cwd=tmp_path)
    assert check.returncode == 0, check.stdout
    assert "scenarios read: 12, errors: 0" in check.stdout

    # review: export a sample, fill it in, import, report
    res = _cli("distill", "review", "export", str(out), str(CORPUS), "-n", "10", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    review_csv = out / "review" / "review.csv"
    with review_csv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 10
    assert all(r["conversation"].startswith("seeker:") and r["situation"] for r in rows)
    page = (out / "review" / "review.html").read_text("utf-8")
    assert rows[0]["source_id"] in page and "situation" in page
    assert "Dana" not in review_csv.read_text("utf-8")  # scrubbed, as the model saw it
    for i, row in enumerate(rows):
        row["verdict"] = "incorrect" if i == 3 else "correct"
    with review_csv.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    res = _cli("distill", "review", "import", str(out), str(review_csv), cwd=tmp_path)
    assert res.returncode == 0 and "imported 10" in res.stdout, res.stderr
    res = _cli("distill", "review", "report", str(out), cwd=tmp_path)
    ci = binomtest(9, 10).proportion_ci(method="wilson")
    assert "90.0% (9/10)" in res.stdout
    assert f"[{ci.low:.1%}, {ci.high:.1%}]" in res.stdout

    # expand: three variants, one a near-copy of another
    base = out / "scenarios" / "distilled-en-bakery.yaml"
    res = _cli(
        "distill",
        "expand",
        str(base),
        "--instruction",
        "same person, higher threshold",
        "-n",
        "3",
        "--out",
        str(tmp_path / "var"),
        "--config",
        str(cfg),
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "written 2, skipped 0, duplicate 1, failed 0" in res.stdout
    variants = load_scenarios(tmp_path / "var" / "scenarios")
    assert variants.errors == []
    assert sorted(s.id for s in variants.scenarios) == [
        "distilled-en-bakery-v1",
        "distilled-en-bakery-v2",
    ]
    for s in variants.scenarios:
        assert s.persona.threshold.value == "high"
        assert s.metadata["distill"]["expanded_from"] == "distilled-en-bakery"
        assert s.iedr is not None


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "body": "hello"}\n', "utf-8")
    res = _cli(
        "distill",
        str(bad),
        "--out",
        str(tmp_path / "o"),
        "--config",
        str(_config(tmp_path)),
        cwd=tmp_path,
    )
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0
    assert "unknown conversation layout" in res.stderr and "Traceback" not in res.stderr


def test_wilson_interval_matches_scipy() -> None:
    for k, n in ((182, 200), (0, 5), (5, 5), (37, 61)):
        ci = binomtest(k, n).proportion_ci(method="wilson")
        low, high = wilson_interval(k, n)
        assert abs(low - ci.low) < 1e-6 and abs(high - ci.high) < 1e-6
