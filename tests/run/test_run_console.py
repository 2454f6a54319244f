"""What `empathos run` shows and records about prompts: an excerpt of one dialogue above the
leaderboard, naming its record file, and the prompt style of each role in manifest and
records (scripted roles over the real CLI; the offline default's manifest without the model)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from run_helpers import cli_env, manifest, scripted_roles, write_config

from empathos.records import read_record
from empathos.run.config import load_run_config
from empathos.run.session import close_session, prepare_run


def test_the_end_of_a_run_shows_one_dialogue_above_the_leaderboard(tmp_path: Path) -> None:
    roles = scripted_roles()
    roles["user"]["prompt_style"] = "compact"
    roles["judge"]["prompt_style"] = "compact"
    config = write_config(
        tmp_path / "run.yaml", roles=roles, cases="en-02-night-shift,en-01-sourdough", max_turns=3
    )
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "empathos", "run", "--config", str(config), "--out", str(out)],
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream: the order is what a terminal shows
        text=True,
        timeout=300,
    )
    text = done.stdout
    assert done.returncode == 0, text
    record_file = out / "records" / "en-02-night-shift__t0.json"  # the first case selected
    record = read_record(record_file)
    start = text.index("one dialogue (en-02-night-shift")
    assert start < text.index("EPM-Q leaderboard")
    excerpt = text[start : text.index("EPM-Q leaderboard")]
    flat = " ".join(excerpt.split())
    for turn in record.turns:
        assert f"turn {turn.index}" in excerpt
        assert "user: " + " ".join(turn.user.split())[:40] in flat
        assert "model: " + " ".join(turn.assistant.split())[:40] in flat
    assert excerpt.count("judge: progress/harm C ") == len(record.evaluations) == 3
    assert str(record_file) in excerpt
    assert "bundled model" not in text  # no role on the offline model: nothing loaded
    # the prompt style of each role, in the manifest and in every call's record
    ids = {p["role"]: p["id"] for p in manifest(out)["prompts"]}
    assert ids == {
        "user": "user.compact.en",
        "director": "director.en",
        "judge_iedr": "judge_iedr.compact.en",
        "judge_mdep": "judge_mdep.compact.en",
        "model_under_test": "model_under_test.en",
    }
    used = {(c.role, c.template_id) for c in record.model_calls}
    assert ("user", "user.compact.en") in used and ("judge", "judge_mdep.compact.en") in used
    assert ("director", "director.en") in used


def test_the_offline_default_uses_compact_prompts_for_every_role(tmp_path: Path) -> None:
    config = load_run_config(None, {"out": tmp_path / "demo"}, environ={})
    prepared = prepare_run(config)
    try:
        ids = {(p.role, p.language): p.id for p in prepared.manifest.prompts}
    finally:
        close_session(prepared, None, "interrupted")
    assert ids and all(".compact." in i for i in ids.values()), ids
    assert ids[("user", "en")] == "user.compact.en"
