"""A scenario whose starting deficit is zero, or closer to the goal than one judge step, is
refused everywhere (issue 24, point 1), with a message naming the scenario and the value:
`scenarios check`, `run` (stored P_0, and a judged IEDR at the dialogue's start), `train`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from empathos.cli.train import split_scenarios
from empathos.errors import ScenarioError
from empathos.scenarios import builtin_path, load_scenarios

ZERO = dict.fromkeys(("C.1", "C.2", "C.3", "A.1", "A.2", "A.3", "P.1", "P.2", "P.3"), 0)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathos", *args],
        capture_output=True, text=True, cwd=cwd, timeout=300,
    )  # fmt: skip


def _set(tmp_path: Path, **change: Any) -> Path:
    """A scenario folder: one bundled scenario as is, and a copy 'flat-start' with ``change``."""
    src = builtin_path() / "en" / "en-01-sourdough.yaml"
    good = yaml.safe_load(src.read_text("utf-8"))
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "good.yaml").write_text(yaml.safe_dump(good), "utf-8")
    bad = {**good, "id": "flat-start", **change}
    bad.pop("p0", None) if "p0" not in change else None
    (folder / "flat.yaml").write_text(yaml.safe_dump(bad), "utf-8")
    return folder


@pytest.mark.parametrize(
    ("change", "field", "shown"),
    [
        ({"iedr": ZERO}, "iedr", "P_0 = (0, 0, 0)"),
        ({"iedr": None, "p0": [-2.0, -1.0, 0.0]}, "p0", "P_0 = (-2, -1, 0)"),
    ],
    ids=["zero-iedr", "tiny-p0"],
)
def test_scenarios_check_names_the_scenario_and_its_start(
    tmp_path: Path, change: dict[str, Any], field: str, shown: str
) -> None:
    folder = _set(tmp_path, **change)
    result = load_scenarios(folder)
    assert [s.id for s in result.scenarios] == ["en-01-sourdough"]
    (err,) = result.errors
    assert err.field == field
    assert err.problem.startswith(f"scenario 'flat-start': degenerate starting point {shown}")
    assert "below the minimum 5.20" in err.problem
    res = _cli("scenarios", "check", str(folder), cwd=tmp_path)
    assert res.returncode == 1
    assert f"flat.yaml: {field}: scenario 'flat-start': degenerate starting point" in (
        res.stdout + res.stderr
    )


def test_run_refuses_a_named_degenerate_case_before_any_model_call(tmp_path: Path) -> None:
    folder = _set(tmp_path, iedr=ZERO)
    res = _cli(
        "run", "--scenarios", str(folder), "--cases", "flat-start", "--out", str(tmp_path / "r"),
        cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 2
    line = res.stderr.strip().splitlines()[-1]
    assert line.startswith("error: cases: unknown scenario ids: flat-start; 1 invalid scenario")
    assert "scenario 'flat-start': degenerate starting point P_0 = (0, 0, 0)" in line
    assert not (tmp_path / "r").exists()


def test_train_refuses_a_named_degenerate_case(tmp_path: Path) -> None:
    folder = _set(tmp_path, iedr=ZERO)
    config = SimpleNamespace(
        scenarios=str(folder), cases=["flat-start"], language=None,
        eval=SimpleNamespace(cases=None, fraction=0.0),
    )  # fmt: skip
    with pytest.raises(ScenarioError) as info:
        split_scenarios(config)
    assert "scenario 'flat-start': degenerate starting point P_0 = (0, 0, 0)" in info.value.line()
    # the whole set: the degenerate scenario is left out, never trained on
    config.cases = None
    train, held = split_scenarios(config)
    assert [s.id for s in [*train, *held]] == ["en-01-sourdough"]
