"""The sandbox roles on one endpoint (--roles-*), and no silent offline judge: sandbox roles on
the bundled 135M model make the console, manifest, records and leaderboard title say the
scores are not meaningful. Real loopback servers (`empathos serve`), the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_helpers import empathos, manifest, scripted_roles, served, write_config

from empathos.errors import ConfigError
from empathos.llm import EndpointConfig
from empathos.llm.offline import OFFLINE_MODEL_ID
from empathos.records import read_record
from empathos.run.config import load_run_config

URL = "http://127.0.0.1:9/v1"


def test_roles_flags_point_user_director_and_judge_at_one_endpoint() -> None:
    cli = {
        "model": "m",
        "base_url": URL,
        "roles_model": "big",
        "roles_base_url": "http://127.0.0.1:8/v1",
        "roles_api_key_env": "ROLES_KEY",
    }
    config = load_run_config(None, cli, environ={})
    for role in ("user", "director", "judge"):
        ep = config.role(role)
        assert (ep.kind, ep.model, ep.base_url, ep.api_key_env) == (
            "openai",
            "big",
            "http://127.0.0.1:8/v1",
            "ROLES_KEY",
        )
    assert config.role("model_under_test").model == "m"
    assert config.score_warning() is None


def test_sandbox_roles_offline_beside_a_real_endpoint_carry_a_warning() -> None:
    config = load_run_config(None, {"model": "m", "base_url": URL}, environ={})
    warning = config.score_warning()
    assert warning is not None and "user, director, judge" in warning
    rules = load_run_config(
        None, {"model": "m", "base_url": URL}, environ={"EMPATHOS_DIRECTOR_MODE": "rules"}
    )
    assert "user, judge ran" in (rules.score_warning() or "")


def test_roles_flags_need_each_other() -> None:
    with pytest.raises(ConfigError) as info:
        load_run_config(None, {"roles_base_url": URL}, environ={})
    assert info.value.field == "--roles-base-url" and "--roles-model" in info.value.problem
    with pytest.raises(ConfigError) as info:
        load_run_config(None, {"roles_model": "big"}, environ={})
    assert "--roles-base-url" in info.value.line()


def test_endpoints_without_a_model_id_get_their_backend_name() -> None:
    assert EndpointConfig(kind="offline").model == OFFLINE_MODEL_ID
    assert EndpointConfig(kind="scripted").model == "scripted"


def test_openai_kind_without_model_is_a_config_error(tmp_path: Path) -> None:
    roles = scripted_roles()
    roles["judge"] = {"kind": "openai", "base_url": URL}
    path = write_config(tmp_path / "run.yaml", roles=roles)
    with pytest.raises(ConfigError) as info:
        load_run_config(path, {}, environ={})
    assert "model is required when kind is 'openai'" in info.value.line()
    assert "roles.judge" in info.value.line()
    done = empathos("run", "--config", path, cwd=tmp_path)
    assert done.returncode == 2 and "model is required" in done.stderr
    assert "Traceback" not in done.stderr


def test_roles_flags_run_every_role_on_the_served_endpoint(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with served("scripted", tmp_path) as url:
        done = empathos(
            "run", "--model", "scripted", "--base-url", url, "--roles-model", "scripted",
            "--roles-base-url", url, "--cases", "en-01-sourdough", "--max-turns", "2",
            "--out", out, cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "NOT MEANINGFUL" not in done.stdout + done.stderr
    m = manifest(out)
    assert m["score_warning"] is None
    assert m["offline"]["weights"] == "float32"  # the offline model's setting is on record
    for role in ("user", "director", "judge", "model_under_test"):
        assert m["config"]["roles"][role]["kind"] == "openai"
    record = read_record(out / "records" / "en-01-sourdough__t0.json")
    assert record.score_warning is None
    assert {c.metadata["backend"] for c in record.model_calls} == {"openai"}
    assert {c.role for c in record.model_calls} >= {"user", "judge", "tested"}


@pytest.mark.slow
def test_offline_judge_beside_a_served_model_says_scores_are_not_meaningful(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    with served("scripted", tmp_path) as url:
        done = empathos(
            "run", "--model", "scripted", "--base-url", url, "--cases", "en-01-sourdough",
            "--max-turns", "1", "--min-turns", "0", "--out", out, cwd=tmp_path, timeout=900,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the scores of this run are NOT MEANINGFUL" in done.stderr
    assert "user, director, judge ran on the bundled 135M offline model" in done.stderr
    title = done.stdout.split("┏")[0]
    assert "NOT MEANINGFUL" in title  # the leaderboard's title
    warning = manifest(out)["score_warning"]
    assert warning and "135M" in warning
    record = read_record(out / "records" / "en-01-sourdough__t0.json")
    assert record.score_warning == warning
    score = empathos("score", out, "--format", "json", cwd=tmp_path)
    assert json.loads(score.stdout)[0]["warnings"] == [warning]
