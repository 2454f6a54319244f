"""A record damaged inside a run directory (here cut inside a UTF-8 sequence) is never
counted as finished (issue 24, point 3): resume names it and runs its dialogue again,
and `score` on the directory names it too. Before, resume said "3 of 3 already finished" and
the leaderboard silently showed n = 2."""

from __future__ import annotations

import json
from pathlib import Path

from run_helpers import empathos, index_rows

THREE = ("en-01-sourdough__t0", "en-02-night-shift__t0", "en-03-lease__t0")


def test_a_damaged_record_is_named_redone_and_named_by_score(
    tmp_path: Path, scripted_config: Path
) -> None:
    out = tmp_path / "out"
    assert empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path).returncode == 0
    victim = out / "records" / f"{THREE[1]}.json"
    # cut inside a multi-byte UTF-8 sequence (a cut anywhere else reads the same way:
    # tests/records/test_records_io.py)
    doc = json.loads(victim.read_bytes())
    doc["metadata"]["note"] = "cut here: 共情"
    data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    victim.write_bytes(data[: data.index("共".encode()) + 1])

    score = empathos("score", out, "--format", "json", cwd=tmp_path)
    assert score.returncode == 1
    expected = f"error: {victim}: (file): not valid JSON/UTF-8 at byte"
    assert any(line.startswith(expected) for line in score.stderr.splitlines()), score.stderr

    again = empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    named = [x for x in again.stderr.splitlines() if x.startswith("unreadable record")]
    assert len(named) == 1 and str(victim) in named[0] and "not valid JSON/UTF-8" in named[0]
    assert "2 of 3 dialogue(s) already finished; running 1" in again.stderr
    assert set(index_rows(out)) == set(THREE)
    assert json.loads(victim.read_text("utf-8"))["scenario_id"] == "en-02-night-shift"
    rescored = empathos("score", out, "--format", "json", cwd=tmp_path)
    assert rescored.returncode == 0 and json.loads(rescored.stdout)[0]["n"] == 3
