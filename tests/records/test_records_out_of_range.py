"""Out-of-range and non-finite values in record files are refused with the file and the field.

Each case here used to load silently: a level 7 raised S_net, a NaN position made EPM-Q NaN
(printed as invalid JSON), and malformed published parameters surfaced as a Python
exception message without the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from empathos.cli.main import app
from empathos.errors import RecordError
from empathos.records import read_record, record_from_data
from published_factory import GOOD, make_published


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")  # json writes NaN as NaN, like Python
    return path


def _own() -> dict[str, Any]:
    rec = record_from_data(make_published([GOOD, GOOD]), file=Path("x.json"))
    data: dict[str, Any] = rec.model_copy(update={"source": "empathos"}).model_dump(mode="json")
    return data


def _refusal(tmp_path: Path, data: dict[str, Any], mutate: Callable[[dict[str, Any]], None]) -> str:
    """The error line for ``data`` after ``mutate`` (the unmodified document must load)."""
    read_record(_write(tmp_path / "ok.json", data))
    mutate(data)
    with pytest.raises(RecordError) as info:
        read_record(_write(tmp_path / "bad.json", data))
    line = info.value.line()
    assert line.startswith(str(tmp_path / "bad.json"))
    return line


def _set_level(d: dict[str, Any], level: int) -> None:
    d["evaluations"][0]["ratings"]["C.Prog"]["level"] = level


OWN_CASES: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (lambda d: _set_level(d, 7), "evaluations[0].ratings.C.Prog.level: 7 is out of range"),
    (lambda d: _set_level(d, -1), "evaluations[0].ratings.C.Prog.level: -1 is out of range"),
    (
        lambda d: d["evaluations"][1]["ratings"].update(X={"level": 1}),
        "evaluations[1].ratings.X: unknown indicator",
    ),
    (
        lambda d: d["iedr"]["ratings"].update({"C.1": {"level": 9}}),
        "iedr.ratings.C.1.level: 9 is out of range",
    ),
    (
        lambda d: d["evaluations"][0]["state"].update(P=[float("nan"), -1.0, -1.0]),
        "evaluations.0.state.P.0: Input should be a finite number",
    ),
    (
        lambda d: d["evaluations"][1]["state"].update(E_total=float("inf")),
        "evaluations.1.state.E_total: Input should be a finite number",
    ),
]


@pytest.mark.parametrize(("mutate", "expected"), OWN_CASES)
def test_own_record_out_of_range_names_the_field(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], expected: str
) -> None:
    line = _refusal(tmp_path, _own(), mutate)
    assert expected in line and "Value error" not in line


def _epj(d: dict[str, Any]) -> dict[str, Any]:
    epj: dict[str, Any] = d["epj"]
    return epj


PUBLISHED_CASES: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (lambda d: _epj(d)["trajectory"][1].update(P_t=[float("nan"), 1, 1]), "trajectory[1].P_t"),
    (lambda d: _epj(d)["trajectory"][1]["epm"].update(E_total=float("inf")), "epm.E_total"),
    (
        lambda d: _epj(d)["trajectory"][1]["epm"].update(alignment=float("nan")),
        "epj.trajectory[1].epm.alignment",
    ),
    (lambda d: _epj(d).update(epm_params=[1]), "epj.epm_params: expected an object"),
    (lambda d: _epj(d).update(epm_params={"alpha": "abc"}), "epj.epm_params.alpha"),
    (lambda d: _epj(d).update(epm_params={"alpha": 0}), "epj.epm_params.alpha"),
    (lambda d: _epj(d).update(K="x"), "epj.K: expected a whole number"),
    (lambda d: _epj(d).update(iedr_details=[1]), "epj.iedr_details: expected an object"),
    (lambda d: d.update(epj=[]), "epj: expected an object"),
    (lambda d: d.update(total_turns=True), "total_turns"),
]


@pytest.mark.parametrize(("mutate", "expected"), PUBLISHED_CASES)
def test_published_bad_values_name_the_field(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], expected: str
) -> None:
    line = _refusal(tmp_path, make_published([GOOD, GOOD]), mutate)
    assert expected in line and "malformed content" not in line


def test_score_never_prints_nan(tmp_path: Path) -> None:
    data = _own()
    data["evaluations"][1]["state"]["P"] = [float("nan"), -1.0, -1.0]
    good = _own()
    _write(tmp_path / "a.json", data)
    _write(tmp_path / "b.json", good)
    res = CliRunner().invoke(app, ["score", "--format", "json", str(tmp_path)])
    assert res.exit_code == 1
    assert "NaN" not in res.stdout
    rows = json.loads(res.stdout)
    assert rows[0]["n"] == 1
