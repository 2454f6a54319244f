"""The acceptance test: two dialogues through `empathos serve` (real HTTP, the real offline
model) with every role pointed at it, then scored by `empathos score`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_helpers import empathos, index_rows, openai_roles, served, write_config

from empathos.records import read_record

CASES = ("en-01-sourdough", "en-02-night-shift")


@pytest.mark.slow
def test_two_dialogues_through_serve_then_score(tmp_path: Path) -> None:
    with served("offline", tmp_path) as url:
        roles = openai_roles(url, max_tokens=24, timeout_s=300.0)
        config = write_config(
            tmp_path / "run.yaml",
            roles=roles,
            cases=",".join(CASES),
            max_turns=2,
            eval_every=2,  # K=2: one judge call per dialogue keeps the test near a minute
            concurrency=2,
        )
        out = tmp_path / "out"
        done = empathos("run", "--config", config, "--out", out, cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr
    rows = index_rows(out)
    assert set(rows) == {f"{c}__t0" for c in CASES}
    for row in rows.values():
        record = read_record(out / row["file"])
        assert record.termination.kind.value == "timeout" and record.total_turns == 2
        assert all(t.user and t.assistant for t in record.turns)
        assert [e.turn for e in record.evaluations] == [2] and record.evaluations[0].scored
        calls = {c.role for c in record.model_calls}
        assert {"user", "tested", "judge", "director"} <= calls
        assert all(c.error is None for c in record.model_calls)
    score = empathos("score", out / "records", "--format", "json", cwd=tmp_path)
    assert score.returncode == 0, score.stderr
    (row,) = json.loads(score.stdout)
    assert row["model"] == "smollm2-135m-instruct"
    assert row["n"] == 2 and row["extra"]["errors"] == 0
    assert row["epmq"] is not None
