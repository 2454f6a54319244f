"""The public surface of the run modules, and the manifest reader per schema version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from empathos.errors import ConfigError
from empathos.run.config import DEMO_MAX_TURNS, load_run_config
from empathos.run.manifest import Manifest, Session, read_manifest, utc_now, write_manifest

MODULES = [
    "empathos.run.config",
    "empathos.run.manifest",
    "empathos.run.progress",
    "empathos.run.roles",
    "empathos.run.rundir",
    "empathos.run.runner",
    "empathos.run.session",
    "empathos.cli.run",
]


def _manifest() -> Manifest:
    now = utc_now()
    return Manifest(
        created_at=now,
        updated_at=now,
        config=load_run_config(None, {}, environ={}),
        fingerprint={"max_turns": "abc"},
        versions={"python": "3"},
        prompts=[],
        scenarios=[],
        sessions=[Session(started_at=now, status="running")],
    )


def test_manifest_v1_round_trips(tmp_path: Path) -> None:
    write_manifest(_manifest(), tmp_path)
    back = read_manifest(tmp_path)
    assert back is not None and back.schema_version == 1
    assert back.config.max_turns == DEMO_MAX_TURNS and back.fingerprint == {"max_turns": "abc"}
    assert read_manifest(tmp_path / "nowhere") is None


def test_manifest_of_an_unknown_version_is_refused(tmp_path: Path) -> None:
    write_manifest(_manifest(), tmp_path)
    path = tmp_path / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["schema_version"] = 2
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_manifest(tmp_path)
    assert info.value.field == "schema_version" and info.value.file == str(path)


def test_damaged_manifest_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_manifest(tmp_path)
    assert "unreadable manifest" in info.value.problem
