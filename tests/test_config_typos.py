"""Config errors name the misspelled key with the closest valid one, every number that must
be finite is checked finite, and every error names its true source (file and field, variable
or flag) without pydantic's prefixes (issue 33)."""

from __future__ import annotations

from pathlib import Path

import pytest

from empathos.errors import ConfigError
from empathos.run.config import load_run_config
from empathos.train.config import load_train_config
from empathos.validate.config import load_judge

_ROLES = "".join(
    f"  {r}: {{kind: offline}}\n" for r in ("user", "director", "judge", "model_under_test")
)


def _line(tmp_path: Path, text: str | None, env: dict[str, str], load: str = "run") -> str:
    path = None
    if text is not None:
        path = tmp_path / "run.yaml"
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        if load == "run":
            load_run_config(path, {}, env)
        elif load == "train":
            load_train_config(path, {}, env)
        else:
            load_judge(path, {}, env)
    line = info.value.line()
    assert "Value error" not in line and "Extra inputs" not in line and "\n" not in line
    return line


def test_a_misspelled_price_key_is_named_with_the_valid_one(tmp_path: Path) -> None:
    line = _line(tmp_path, "prices: {m: {inptu: 1.0, output: 2.0}}\n", {})
    assert line == (
        f"{tmp_path / 'run.yaml'}: prices.m.inptu: unknown key 'inptu' (did you mean 'input'?)"
    )


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan"])
def test_a_price_must_be_finite(tmp_path: Path, value: str) -> None:
    line = _line(tmp_path, f"prices: {{m: {{input: {value}, output: 2.0}}}}\n", {})
    assert line.startswith(f"{tmp_path / 'run.yaml'}: prices.m.input: must be a finite number")


def test_an_endpoint_number_must_be_finite(tmp_path: Path) -> None:
    line = _line(tmp_path, f"roles:\n{_ROLES}  distiller: {{kind: offline, timeout_s: .inf}}\n", {})
    assert "roles.distiller.timeout_s: must be a finite number" in line


def test_a_training_number_must_be_finite(tmp_path: Path) -> None:
    line = _line(tmp_path, None, {"EMPATHOS_TRAIN_LR": ".nan"}, load="train")
    assert line.startswith("EMPATHOS_TRAIN_LR (environment): must be a finite number")


def test_a_misspelled_judge_key_is_named_not_the_key_it_left_out(tmp_path: Path) -> None:
    line = _line(tmp_path, "judge: {modle: x, base_url: 'http://127.0.0.1:9/v1'}\n", {}, "judge")
    assert (
        line == f"{tmp_path / 'run.yaml'}: judge.modle: unknown key 'modle' (did you mean 'model'?)"
    )


def test_a_misspelled_role_key_in_the_file(tmp_path: Path) -> None:
    text = f"roles:\n{_ROLES}".replace(
        "judge: {kind: offline}", "judge: {kind: offline, temprature: 0.5}"
    )
    line = _line(tmp_path, text, {})
    assert line.endswith(
        "roles.judge.temprature: unknown key 'temprature' (did you mean 'temperature'?)"
    )


def test_a_misspelled_variable_is_blamed_on_the_variable(tmp_path: Path) -> None:
    line = _line(tmp_path, None, {"EMPATHOS_REJUDGE_JUDGE__MODLE": "x"}, "judge")
    assert line == (
        "EMPATHOS_REJUDGE_JUDGE__MODLE (environment): unknown key 'modle' (did you mean 'model'?)"
    )
    line = _line(tmp_path, None, {"EMPATHOS_ROLES__JUDGE__MODLE": "x"})
    assert line.startswith("EMPATHOS_ROLES__JUDGE__MODLE (environment): unknown key 'modle'")


def test_a_misspelled_role_in_a_variable_is_not_blamed_on_the_file(tmp_path: Path) -> None:
    line = _line(tmp_path, "trials: 1\n", {"EMPATHOS_ROLES__JUGE__MODEL": "x"})
    assert line == (
        "EMPATHOS_ROLES__JUGE__MODEL (environment): unknown role 'juge' (did you mean 'judge'?)"
    )


def test_our_own_validator_messages_have_no_library_prefix(tmp_path: Path) -> None:
    line = _line(tmp_path, "judge: {base_url: 'http://127.0.0.1:9/v1'}\n", {}, "judge")
    assert line.startswith(
        f"{tmp_path / 'run.yaml'}: judge: model is required when kind is 'openai'"
    )


def test_a_misspelled_top_level_variable_is_named(tmp_path: Path) -> None:
    line = _line(tmp_path, None, {"EMPATHOS_TRIALZ": "3"})
    assert line == (
        "EMPATHOS_TRIALZ (environment): unknown setting 'trialz' (did you mean EMPATHOS_TRIALS?)"
    )
    line = _line(tmp_path, None, {"EMPATHOS_REJUDGE_JUGE__MODEL": "x"}, "judge")
    assert line.startswith("EMPATHOS_REJUDGE_JUGE__MODEL (environment): unknown setting 'juge'")


def test_other_parts_variables_are_left_alone(tmp_path: Path) -> None:
    env = {
        "EMPATHOS_CACHE_DIR": str(tmp_path),
        "EMPATHOS_TORCH_THREADS": "1",
        "EMPATHOS_EMPA_SAMPLE": "x",
        "EMPATHOS_TEST_WORKERS": "2",
        "EMPATHOS_TRIALS": "2",
    }
    assert load_run_config(None, {}, env).trials == 2
