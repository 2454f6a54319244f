"""Loading our own format: good files, bad files, and errors that name file and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from empathos.errors import ScenarioError
from empathos.scenarios import load_scenarios, parse_scenario, select
from empathos.scenarios.model import Axis, PriorityLevel


def test_yaml_and_json_files_load(tmp_path: Path, make_scenario: Any, write: Any) -> None:
    y = write.yaml(tmp_path / "a.yaml", make_scenario(id="a"))
    j = write.json(tmp_path / "b.json", make_scenario(id="b"))
    for path, sid in ((y, "a"), (j, "b")):
        result = load_scenarios(path)
        assert result.errors == []
        [scenario] = result.scenarios
        assert scenario.id == sid
        assert scenario.persona.identity.name == "Iris Vale"
        assert len(scenario.story.stages) == 4
        assert scenario.source.path == str(path)


def _only_error(path: Path) -> ScenarioError:
    result = load_scenarios(path)
    assert result.scenarios == []
    assert len(result.errors) == 1, [e.line() for e in result.errors]
    return result.errors[0]


def test_missing_field_names_file_and_field(tmp_path: Path, make_scenario: Any, write: Any) -> None:
    data = make_scenario()
    del data["persona"]["identity"]["name"]
    path = write.yaml(tmp_path / "missing.yaml", data)
    err = _only_error(path)
    assert err.file == str(path)
    assert err.field == "persona.identity.name"
    assert "missing" in err.problem
    assert str(path) in err.line() and "persona.identity.name" in err.line()


def test_wrong_stage_count(tmp_path: Path, make_scenario: Any, write: Any) -> None:
    data = make_scenario()
    data["story"]["stages"] = data["story"]["stages"][:3]
    err = _only_error(write.yaml(tmp_path / "three.yaml", data))
    assert err.field == "story.stages"
    assert "4" in err.problem


def test_bad_enum_names_value(tmp_path: Path, make_scenario: Any, write: Any) -> None:
    data = make_scenario()
    data["persona"]["threshold"] = "extreme"
    err = _only_error(write.yaml(tmp_path / "enum.yaml", data))
    assert err.field == "persona.threshold"
    assert "extreme" in err.problem


def test_bad_domain_and_language(tmp_path: Path, make_scenario: Any, write: Any) -> None:
    data = make_scenario(labels={"domain": "sports", "language": "fr"})
    result = load_scenarios(write.yaml(tmp_path / "labels.yaml", data))
    fields = sorted(e.field or "" for e in result.errors)
    assert fields == ["labels.domain", "labels.language"]


def test_jsonl_reports_line_numbers(tmp_path: Path, make_scenario: Any) -> None:
    bad = make_scenario(id="two")
    bad["persona"]["priorities"]["cognitive"]["level"] = "urgent"
    lines = [
        json.dumps(make_scenario(id="one")),
        json.dumps(bad),
        "{not json",
        json.dumps(make_scenario(id="four")),
    ]
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = load_scenarios(path)
    assert [s.id for s in result.scenarios] == ["one", "four"]
    assert [s.source.line for s in result.scenarios] == [1, 4]
    by_file = {e.file: e for e in result.errors}
    assert set(by_file) == {f"{path}:2", f"{path}:3"}
    assert by_file[f"{path}:2"].field == "persona.priorities.cognitive.level"


def test_directory_never_stops_at_first_bad_file(
    tmp_path: Path, make_scenario: Any, write: Any
) -> None:
    write.yaml(tmp_path / "a_bad.yaml", make_scenario(id="x", story={"stages": []}))
    (tmp_path / "b_broken.yaml").write_text("id: [unclosed", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    write.yaml(tmp_path / "sub" / "c.yaml", make_scenario(id="good"))
    result = load_scenarios(tmp_path)
    assert [s.id for s in result.scenarios] == ["good"]
    files = {Path(e.file or "").name for e in result.errors}
    assert files == {"a_bad.yaml", "b_broken.yaml"}


def test_duplicate_ids_are_errors(tmp_path: Path, make_scenario: Any, write: Any) -> None:
    write.yaml(tmp_path / "a.yaml", make_scenario(id="same"))
    write.yaml(tmp_path / "b.yaml", make_scenario(id="same"))
    result = load_scenarios(tmp_path)
    assert len(result.scenarios) == 1
    [err] = result.errors
    assert err.field == "id" and "duplicate" in err.problem


def test_missing_path_and_unknown_suffix(tmp_path: Path) -> None:
    assert "no such" in load_scenarios(tmp_path / "nope").errors[0].problem
    other = tmp_path / "x.txt"
    other.write_text("hi", encoding="utf-8")
    assert "unknown scenario file type" in load_scenarios(other).errors[0].problem
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no scenario files" in load_scenarios(empty).errors[0].problem


def test_priority_ordering_form(make_scenario: Any) -> None:
    data = make_scenario()
    data["persona"]["priorities"] = "A > C > P"
    scenario = parse_scenario(data, "mem.yaml")
    pri = scenario.persona.priorities
    assert pri.order == [Axis.AFFECTIVE, Axis.COGNITIVE, Axis.PROACTIVE]
    assert pri.level(Axis.AFFECTIVE) is PriorityLevel.HIGH
    assert pri.level(Axis.COGNITIVE) is PriorityLevel.MEDIUM
    assert pri.level(Axis.PROACTIVE) is PriorityLevel.LOW
    data["persona"]["priorities"] = "A > A > P"
    with pytest.raises(ScenarioError) as info:
        parse_scenario(data, "mem.yaml")
    assert info.value.field == "persona.priorities"


def test_iedr_must_name_all_nine_levels(make_scenario: Any) -> None:
    data = make_scenario()
    del data["iedr"]["P.3"]
    with pytest.raises(ScenarioError, match=r"P\.3"):
        parse_scenario(data, "x.yaml")
    data = make_scenario()
    data["iedr"]["A.2"] = 4
    with pytest.raises(ScenarioError) as info:
        parse_scenario(data, "x.yaml")
    assert info.value.field == "iedr"


def test_stored_p0_must_agree_with_iedr(make_scenario: Any) -> None:
    ok = parse_scenario(make_scenario(), "x.yaml")
    p0 = ok.initial_state()
    assert p0 is not None
    # By hand from EPM_SPEC's table: C = 0-2-3, A = -4-4-9, P = -2-4-6.
    assert p0 == (-5.0, -17.0, -12.0)
    assert parse_scenario(make_scenario(p0=list(p0)), "x.yaml").initial_state() == p0
    with pytest.raises(ScenarioError, match="disagrees"):
        parse_scenario(make_scenario(p0=[-10.0, -10.0, -10.0]), "x.yaml")


def test_hash_ignores_provenance_but_not_content(
    tmp_path: Path, make_scenario: Any, write: Any
) -> None:
    a = load_scenarios(write.yaml(tmp_path / "a.yaml", make_scenario())).scenarios[0]
    b = load_scenarios(write.json(tmp_path / "b.json", make_scenario())).scenarios[0]
    assert a.source.path != b.source.path
    assert a.scenario_hash() == b.scenario_hash()
    changed = make_scenario()
    changed["story"]["outcome"] = "something else"
    assert parse_scenario(changed, "c.yaml").scenario_hash() != a.scenario_hash()
    assert len(a.scenario_hash()) == 64
    # computed once per scenario object: a changed copy gets its own, the original keeps its
    copy = a.model_copy(update={"id": "another-id"})
    assert copy.scenario_hash() != a.scenario_hash() == b.scenario_hash()


def test_select(make_scenario: Any) -> None:
    items = [
        parse_scenario(make_scenario(id=f"s{i}", labels={"language": lang}), "x.yaml")
        for i, lang in enumerate(["en", "zh", "en", "zh"])
    ]
    assert [s.id for s in select(items, ["s2", "s0"])] == ["s2", "s0"]
    assert [s.id for s in select(items, language="zh")] == ["s1", "s3"]
    assert [s.id for s in select(items, limit=3, language="en")] == ["s0", "s2"]
    assert [s.id for s in select(items, limit=1)] == ["s0"]
    with pytest.raises(ScenarioError, match="s9"):
        select(items, ["s0", "s9"])
    with pytest.raises(ScenarioError, match="official"):
        select(items, "official")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_stored_p0_is_refused(
    tmp_path: Path, make_scenario: Any, write: Any, bad: float
) -> None:
    data = make_scenario()
    data.pop("iedr", None)  # P_0 only: a NaN used to reach the EPM and crash the dialogue
    data["p0"] = [bad, -3.0, -4.0]
    err = _only_error(write.yaml(tmp_path / "p0.yaml", data))
    assert err.field == "p0.0" and "finite" in err.problem
