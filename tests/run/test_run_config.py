"""The run config: layers (defaults < YAML < EMPATHOS_* env < flags), resolution, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from run_helpers import scripted_roles, write_config

from empathos.errors import ConfigError
from empathos.run.config import (
    DEMO_MAX_TURNS,
    DEMO_OUT,
    REQUIRED_ROLES,
    RunConfig,
    load_run_config,
)
from empathos.run.manifest import fingerprint_parts
from empathos.run.roles import check_api_keys


def test_no_config_is_the_offline_default() -> None:
    cfg = load_run_config(None, {}, environ={})
    assert cfg.offline_default
    assert all(cfg.role(r).kind == "offline" for r in REQUIRED_ROLES)
    assert cfg.max_turns == DEMO_MAX_TURNS
    assert cfg.min_turns == DEMO_MAX_TURNS  # the preset's 12, capped at the turn cap
    assert cfg.out == DEMO_OUT
    assert cfg.scenarios == "builtin" and cfg.cases is None


def test_layers_flags_over_env_over_yaml(tmp_path: Path) -> None:
    path = write_config(
        tmp_path / "run.yaml", roles=scripted_roles(), trials=2, concurrency=3, max_turns=9
    )
    env = {"EMPATHOS_CONCURRENCY": "5", "EMPATHOS_MAX_TURNS": "7", "EMPATHOS_CACHE_DIR": "/x"}
    cfg = load_run_config(path, {"max_turns": 4, "limit": None}, environ=env)
    assert cfg.trials == 2  # YAML only
    assert cfg.concurrency == 5  # env over YAML
    assert cfg.max_turns == 4  # flag over env
    assert cfg.limit is None  # a flag left out changes nothing
    assert not cfg.offline_default
    assert cfg.out == Path("runs/scripted-model_under_test")


def test_nested_env_sets_one_role_field(tmp_path: Path) -> None:
    path = write_config(tmp_path / "run.yaml", roles=scripted_roles())
    cfg = load_run_config(path, {}, environ={"EMPATHOS_ROLES__JUDGE__TEMPERATURE": "0.3"})
    assert cfg.role("judge").temperature == 0.3
    assert cfg.role("user").temperature is None


def test_cases_accept_comma_list_official_and_all() -> None:
    assert load_run_config(None, {"cases": "a, b"}, environ={}).cases == ["a", "b"]
    assert load_run_config(None, {"cases": "official"}, environ={}).cases == "official"
    assert load_run_config(None, {"cases": "all"}, environ={}).cases == "all"


def test_model_flags_build_the_model_under_test_endpoint() -> None:
    cli = {"model": "m-1", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "K_VAR"}
    cfg = load_run_config(None, cli, environ={})
    mut = cfg.role("model_under_test")
    assert (mut.kind, mut.model, mut.base_url, mut.api_key_env) == (
        "openai",
        "m-1",
        "http://127.0.0.1:9/v1",
        "K_VAR",
    )
    assert cfg.role("judge").kind == "offline"  # no roles section: the others stay offline
    assert cfg.max_turns == 45 and cfg.min_turns == 12  # not the offline default any more


def test_model_flag_without_an_address_fails_clearly() -> None:
    with pytest.raises(ConfigError) as info:
        load_run_config(None, {"model": "gpt-x"}, environ={})
    assert info.value.field == "--model"
    assert "--base-url" in info.value.problem


def test_base_url_flag_without_a_model_id_fails_clearly() -> None:
    with pytest.raises(ConfigError) as info:
        load_run_config(None, {"base_url": "http://127.0.0.1:9/v1"}, environ={})
    assert info.value.field == "--base-url" and "--model" in info.value.problem


def test_missing_role_in_a_roles_section_is_named(tmp_path: Path) -> None:
    roles = scripted_roles()
    del roles["director"]
    path = write_config(tmp_path / "run.yaml", roles=roles)
    with pytest.raises(ConfigError) as info:
        load_run_config(path, {}, environ={})
    assert info.value.field == "roles.director"
    assert info.value.file == str(path)


def test_bad_yaml_value_names_file_and_field(tmp_path: Path) -> None:
    roles = scripted_roles()
    roles["judge"]["temprature"] = 0.2
    path = write_config(tmp_path / "run.yaml", roles=roles)
    with pytest.raises(ConfigError) as info:
        load_run_config(path, {}, environ={})
    assert info.value.file == str(path)
    assert info.value.field == "roles.judge.temprature"
    assert "unknown key" in info.value.problem and "temperature" in info.value.problem


def test_bad_env_value_names_the_variable() -> None:
    with pytest.raises(ConfigError) as info:
        load_run_config(None, {}, environ={"EMPATHOS_TRIALS": "many"})
    assert info.value.field is not None and "EMPATHOS_TRIALS" in info.value.field


def test_unparsable_yaml_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("roles: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_run_config(path, {}, environ={})
    assert info.value.file == str(path) and "YAML" in info.value.problem


def test_a_config_that_is_not_utf8_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_bytes(b"trials: 1\n\xff\xfe\n")  # e.g. saved as UTF-16 / Latin-1
    with pytest.raises(ConfigError) as info:
        load_run_config(path, {}, environ={})
    assert info.value.file == str(path) and "not UTF-8" in info.value.problem


def test_min_turns_above_max_turns_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        load_run_config(None, {"max_turns": 3, "min_turns": 5}, environ={})
    assert "min_turns" in info.value.problem


def test_missing_api_key_names_role_and_variable(tmp_path: Path) -> None:
    roles = scripted_roles()
    roles["judge"] = {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "j"}
    roles["judge"]["api_key_env"] = "EMPATHOS_TEST_JUDGE_KEY"
    cfg = load_run_config(write_config(tmp_path / "run.yaml", roles=roles), {}, environ={})
    with pytest.raises(ConfigError) as info:
        check_api_keys(cfg, environ={})
    assert "EMPATHOS_TEST_JUDGE_KEY" in info.value.problem and "judge" in info.value.problem
    check_api_keys(cfg, environ={"EMPATHOS_TEST_JUDGE_KEY": "sk-anything"})  # set: passes


def test_fingerprint_ignores_addresses_and_limits_but_not_models(tmp_path: Path) -> None:
    roles = scripted_roles()
    base = load_run_config(write_config(tmp_path / "a.yaml", roles=roles), {}, environ={})
    moved = {**roles, "judge": {**roles["judge"], "max_concurrency": 2, "timeout_s": 5.0}}
    same = load_run_config(write_config(tmp_path / "b.yaml", roles=moved), {}, environ={})
    other = {**roles, "judge": {**roles["judge"], "model": "another-judge"}}
    changed = load_run_config(write_config(tmp_path / "c.yaml", roles=other), {}, environ={})
    fp = fingerprint_parts(base, "v1")
    assert fingerprint_parts(same, "v1") == fp
    diff = {k for k, v in fingerprint_parts(changed, "v1").items() if fp[k] != v}
    assert diff == {"roles.judge"}
    assert {k for k, v in fingerprint_parts(base, "v2").items() if fp[k] != v} == {"system_prompt"}


def test_config_schema_has_a_description_on_every_field() -> None:
    missing = [n for n, f in RunConfig.model_fields.items() if not f.description]
    assert missing == []


def test_a_policy_run_with_no_roles_gets_the_offline_default_caps(tmp_path: Path) -> None:
    cfg = load_run_config(None, {"policy": tmp_path / "ckpt"}, environ={})
    assert cfg.offline_sandbox and not cfg.offline_default
    assert all(cfg.role(r).kind == "offline" for r in ("user", "director", "judge"))
    mut = cfg.role("model_under_test")
    assert mut.kind == "local" and mut.max_tokens == 48  # the offline default's reply cap
    assert cfg.max_turns == DEMO_MAX_TURNS and cfg.min_turns == DEMO_MAX_TURNS
    assert cfg.out == Path("runs/ckpt")
    # roles on endpoints make it a real run: the full turn cap, the reply cap unset
    roles = {k: v for k, v in scripted_roles().items() if k != "model_under_test"}
    path = write_config(tmp_path / "run.yaml", roles=roles)
    real = load_run_config(path, {"policy": tmp_path / "ckpt"}, environ={})
    assert not real.offline_sandbox and real.max_turns == 45
    assert real.role("model_under_test").max_tokens is None
