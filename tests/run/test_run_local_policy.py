"""`empathos run --policy`: a local checkpoint as the model under test, no server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from run_helpers import empathos, openai_roles, scripted_roles, served, write_config

pytestmark = pytest.mark.slow


def _shape(value: Any) -> Any:
    """The key structure of a JSON value (types of leaves ignored, lists by first item)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return None


def _record(run: Path) -> dict[str, Any]:
    files = sorted((run / "records").glob("*.json"))
    assert len(files) == 1, files
    data: dict[str, Any] = json.loads(files[0].read_text(encoding="utf-8"))
    return data


@pytest.mark.timeout(2700)  # ~45 s of CPU; three CLI runs, slow on a loaded machine
def test_local_policy_run_writes_the_same_record_format_as_an_endpoint_run(
    tmp_path: Path,
) -> None:
    common = {"cases": ["en-01-sourdough"], "max_turns": 2, "min_turns": 2}
    roles = scripted_roles()
    with served("scripted", tmp_path) as url:
        endpoint_roles = {**roles, "model_under_test": openai_roles(url, max_tokens=6)[
            "model_under_test"]}  # fmt: skip
        cfg = write_config(tmp_path / "endpoint.yaml", roles=endpoint_roles, **common)
        res = empathos(
            "run", "--config", cfg, "--out", tmp_path / "endpoint", cwd=tmp_path, timeout=900
        )
        assert res.returncode == 0, res.stderr
    local_roles = {**roles, "model_under_test": {"kind": "local", "model": "smollm2-local",
                                                 "max_tokens": 6}}  # fmt: skip
    cfg = write_config(tmp_path / "local.yaml", roles=local_roles, **common)
    res = empathos("run", "--config", cfg, "--out", tmp_path / "local", cwd=tmp_path, timeout=900)
    assert res.returncode == 0, res.stderr
    a, b = _record(tmp_path / "endpoint"), _record(tmp_path / "local")
    assert _shape(a) == _shape(b)
    tested = [c for c in b["model_calls"] if c["role"] == "tested"]
    assert tested and all(c["model"] == "smollm2-local" for c in tested)
    assert all(c["completion_tokens"] for c in tested)  # counted by the local backend
    assert all(t["assistant"] for t in b["turns"])
    # the flag form runs too
    plain = write_config(tmp_path / "roles.yaml", roles=roles, **common)
    res = empathos("run", "--config", plain, "--policy", "smollm2-135m-instruct",
                   "--out", tmp_path / "flag", cwd=tmp_path, timeout=900)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert _record(tmp_path / "flag")["model"] == "smollm2-135m-instruct"
