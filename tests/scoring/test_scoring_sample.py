"""The published sample: every NOTICE number to 0.01, success counts, replay of every dialogue.

Expected values are read from the sample's own NOTICE.md at test time (never copied here).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

COLUMNS = ["RDI", "E_tot", "S_net", "Rho", "S_proj", "Tau", "R_pos", "Align", "Pen"]
GROUPS = ["outcome", "efficiency", "stability", "epmq"]


def _notice(sample: Path) -> tuple[dict[str, list[float]], dict[str, int]]:
    text = (sample / "NOTICE.md").read_text(encoding="utf-8")
    table: dict[str, list[float]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 14 and (sample / "results" / cells[0]).is_dir():
            table[cells[0]] = [float(c) for c in cells[1:]]
    m = re.search(r"Success counts[^:]*:(.*)", text)
    assert m, "NOTICE.md has no success counts line"
    counts = {k: int(v) for k, v in re.findall(r"([\w.\-]+) (\d+)", m.group(1))}
    return table, counts


def _empathos(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathos", *args], capture_output=True, text=True, timeout=300
    )


def test_score_reference_reproduces_the_published_table(empa_sample: Path) -> None:
    table, counts = _notice(empa_sample)
    assert len(table) == 3 and set(counts) == set(table)
    for model_dir, expected in table.items():
        out = _empathos("score", str(empa_sample / "results" / model_dir), "--format", "json")
        assert out.returncode == 0, out.stderr
        rows = json.loads(out.stdout)
        assert len(rows) == 1
        row = rows[0]
        got = [row["indices"][c] for c in COLUMNS] + [row[g] for g in GROUPS]
        for name, g, e in zip(COLUMNS + GROUPS, got, expected, strict=True):
            assert abs(g - e) <= 0.01, f"{model_dir} {name}: {g:.4f} vs published {e}"
        assert row["successes"] == counts[model_dir]
        assert row["n"] == 30


def test_replay_reproduces_every_sample_dialogue(empa_sample: Path) -> None:
    out = _empathos("replay", str(empa_sample / "results"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "mismatch" not in out.stdout.replace("0 mismatch", "")
    n = len(list((empa_sample / "results").glob("*/*.json")))
    assert f"replayed {n} dialogues: {n} reproduce" in out.stdout


def test_json_keys_are_exactly_the_documented_ones(empa_sample: Path) -> None:
    out = _empathos("score", str(empa_sample / "results"), "--format", "json")
    rows = json.loads(out.stdout)
    assert len(rows) == 3
    for row in rows:
        assert list(row) == [
            "model", "n", "successes", "success_rate", "epmq", "outcome", "efficiency",
            "stability", "indices", "extra", "warnings",
        ]  # fmt: skip
        assert list(row["indices"]) == COLUMNS
        assert "tau_signed" in row["extra"] and "terminations" in row["extra"]


@pytest.mark.parametrize("preset", ["paper"])
def test_paper_preset_scores_the_sample(empa_sample: Path, preset: str) -> None:
    out = _empathos("score", str(empa_sample / "results"), "--preset", preset, "--format", "csv")
    assert out.returncode == 0
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("model,n,successes") and len(lines) == 4
