"""One config mechanism for run, train, distill and validate: file < environment < flags, and
every bad value named by the layer that set it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from empathos.distill.config import load_distill_config
from empathos.errors import ConfigError
from empathos.layered_config import read_yaml
from empathos.run.config import load_run_config
from empathos.train.config import load_train_config
from empathos.validate.config import load_validate_config

# Each command: how to load it, a field it reads from everywhere, the environment variable
# and the flag that set that field, how to read it back, and a value each layer sets.
Loader = Callable[[Path | None, dict[str, Any], Mapping[str, str]], Any]

COMMANDS: dict[str, dict[str, Any]] = {
    "run": {
        "load": lambda p, cli, env: load_run_config(p, cli, env),
        "yaml": "concurrency: {v}\n",
        "env": "EMPATHOS_CONCURRENCY",
        "flag": ("concurrency", "--concurrency"),
        "read": lambda c: c.concurrency,
        "bad": "0",
    },
    "train": {
        "load": lambda p, cli, env: load_train_config(p, cli, env),
        "yaml": "rollout:\n  min_turns: 1\n  max_turns: {v}\n",
        "env": "EMPATHOS_TRAIN_ROLLOUT__MAX_TURNS",
        "flag": ("rollout.max_turns", "--max-turns"),
        "read": lambda c: c.rollout.max_turns,
        "bad": "0",
    },
    "distill": {
        "load": lambda p, cli, env: load_distill_config(p, cli, env),
        "yaml": "concurrency: {v}\n",
        "env": "EMPATHOS_DISTILL_CONCURRENCY",
        "flag": ("concurrency", "--concurrency"),
        "read": lambda c: c.concurrency,
        "bad": "0",
    },
    "validate": {
        "load": lambda p, cli, env: load_validate_config(p, cli, env),
        "yaml": "judge:\n  kind: offline\n  max_tokens: {v}\n",
        "env": "EMPATHOS_VALIDATE_JUDGE__MAX_TOKENS",
        "flag": None,  # validate's flags set the judge's model, URL and key variable only
        "read": lambda c: c.judge.max_tokens,
        "bad": "-3",
    },
}


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", COMMANDS)
def test_the_environment_overrides_the_file_and_a_flag_overrides_both(
    tmp_path: Path, name: str
) -> None:
    cmd = COMMANDS[name]
    path = _file(tmp_path, cmd["yaml"].format(v=5))
    assert cmd["read"](cmd["load"](path, {}, {})) == 5
    env = {cmd["env"]: "6", "EMPATHOS_CACHE_DIR": "/elsewhere"}  # others are left alone
    assert cmd["read"](cmd["load"](path, {}, env)) == 6
    if cmd["flag"] is not None:
        key, _ = cmd["flag"]
        cli = {key: 7}
        assert cmd["read"](cmd["load"](path, cli, env)) == 7


@pytest.mark.parametrize("name", COMMANDS)
def test_a_bad_value_names_the_layer_that_set_it(tmp_path: Path, name: str) -> None:
    cmd = COMMANDS[name]
    path = _file(tmp_path, cmd["yaml"].format(v=cmd["bad"]))
    with pytest.raises(ConfigError) as info:
        cmd["load"](path, {}, {})
    assert str(path) in info.value.line()
    good = _file(tmp_path, cmd["yaml"].format(v=5))
    with pytest.raises(ConfigError) as info:
        cmd["load"](good, {}, {cmd["env"]: cmd["bad"]})
    assert cmd["env"] in info.value.line() and str(good) not in info.value.line()
    if cmd["flag"] is not None:
        key, flag = cmd["flag"]
        with pytest.raises(ConfigError) as info:
            cmd["load"](good, {key: int(cmd["bad"])}, {cmd["env"]: "6"})
        line = info.value.line()
        assert flag in line and cmd["env"] not in line and str(good) not in line


def test_validate_flags_set_the_judges_and_name_themselves() -> None:
    config = load_validate_config(None, {"judge_model": "m", "judge_base_url": "http://x/v1"}, {})
    assert (config.judge.kind, config.judge.model) == ("openai", "m")
    assert config.judge_b is None
    with pytest.raises(ConfigError) as info:
        load_validate_config(None, {"judge_b_base_url": "http://x/v1"}, {})
    assert "--judge-b-" in info.value.line()


def test_validate_refuses_an_unknown_section(tmp_path: Path) -> None:
    path = _file(tmp_path, "judge: {kind: offline}\njduge_b: {kind: offline}\n")
    with pytest.raises(ConfigError) as info:
        load_validate_config(path, {}, {})
    assert "jduge_b" in info.value.line() and str(path) in info.value.line()


def test_a_misspelled_role_is_named(tmp_path: Path) -> None:
    path = _file(tmp_path, "roles:\n  juge: {kind: offline}\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path, {}, {})
    line = info.value.line()
    assert "juge" in line and str(path) in line and "judge" in line


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"- a\n- b\n", "expected a mapping, got list"),
        (b"a: [1, 2\n", "not valid YAML"),
        (b"a: 'caf\xc3", "not UTF-8 text"),
    ],
)
def test_every_command_reads_its_file_the_same_way(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    for cmd in COMMANDS.values():
        with pytest.raises(ConfigError) as info:
            cmd["load"](path, {}, {})
        assert problem in info.value.line() and str(path) in info.value.line()
    with pytest.raises(ConfigError, match=problem):
        read_yaml(path)
