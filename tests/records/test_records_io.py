"""Record model, importer quirks, atomic writes and bad-file handling with real files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from empathos.epm import TerminationKind
from empathos.errors import RecordError
from empathos.records import (
    SCHEMA_VERSION,
    DialogueRecord,
    ModelCallRecord,
    detect_format,
    load_records,
    read_record,
    record_from_data,
    termination_kind_from_text,
    write_record,
)
from published_factory import BAD, GOOD, make_published


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_import_handles_missing_partial_and_string_levels(tmp_path: Path) -> None:
    rows = [
        GOOD,
        None,  # judge failed: no mdep_analysis, zero increment
        {"C.Prog": "1", "C.Neg": "0", "A.Prog": "1"},  # partial, strings
        {**GOOD, "A.Neg": "-1"},  # a numeric string
        {**GOOD, "P.Prog": 2},
    ]
    doc = make_published(rows)
    doc["epj"]["trajectory"][5]["mdep_analysis"]["summary"] = "an extra key"
    rec = read_record(_write(tmp_path / "m" / "script_900_result.json", doc))
    flags = [e.flags for e in rec.evaluations]
    assert flags[0] == []
    assert flags[1] == ["ratings_missing"]
    assert flags[2] == ["ratings_partial"]
    assert flags[3] == []
    assert rec.evaluations[3].ratings["A.Neg"].level == -1
    assert rec.evaluations[2].ratings["C.Prog"].level == 1
    assert rec.evaluations[1].state.v == (0.0, 0.0, 0.0)  # stored v_t kept
    assert rec.source == "empa-published" and rec.model == "Custom-test/tiny"
    assert rec.total_turns == 5 and len(rec.turns) == 5 and rec.turns[0].assistant == "reply 1"
    assert rec.termination.kind is TerminationKind.TIMEOUT


def test_an_invalid_level_is_an_error_naming_the_field(tmp_path: Path) -> None:
    doc = make_published([GOOD, {**GOOD, "A.Neg": "L1"}])
    path = _write(tmp_path / "m" / "script_900_result.json", doc)
    with pytest.raises(RecordError) as info:
        read_record(path)
    assert info.value.line().startswith(f"{path}: epj.trajectory[2].mdep_analysis.A_Neg_level:")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("EPM v2.0 Failure: 5 consecutive negative-energy turns (Direction Collapse), "
         "Persistent Regression (70% negative in 8 turns)", "failure_collapse"),
        ("EPM v2.0 Failure: Stagnation + Persistent Regression", "failure_stagnation_regression"),
        ("EPM v2.0 Failure: Vector Oscillation (total change 40, net change 2)",
         "failure_oscillation"),
        ("EPM v2.0 Success: Positional Victory (crossed/approached target zone)",
         "success_positional"),
        ("EPM v2.0 Success: Geometric Victory (reached near origin)", "success_geometric"),
        ("Reached max turns (45), timeout", "timeout"),
        ("EPM 失败：方向崩溃", "failure_collapse"),
        ("EPM 失败：向量振荡", "failure_oscillation"),
        ("达到最大轮数，超时", "timeout"),
        ("导演结束了对话", "director_stop"),
    ],
)  # fmt: skip
def test_termination_reason_text_maps_to_kinds(text: str, kind: str) -> None:
    assert termination_kind_from_text(text) == TerminationKind(kind)


@pytest.mark.parametrize(
    ("primary", "kind"),
    [
        ("geometric", "success_geometric"),
        ("positional", "success_positional"),
        (None, "success_positional"),
    ],
)
def test_unrecognised_reason_of_a_success_takes_the_victory_type(
    tmp_path: Path, primary: str | None, kind: str
) -> None:
    doc = make_published([GOOD], reason="the session wrapped up nicely")
    achieved = {"achieved": True, "value": 1.0, "threshold": 1.0}
    doc["epj"]["epm_victory_analysis"] = {
        "primary_victory_type": primary,
        "conditions": {"geometric": achieved, "positional": achieved, "energetic": achieved},
    }
    rec = record_from_data(doc, file=_write(tmp_path / "x.json", doc))
    assert rec.termination.kind.value == kind


def test_own_record_round_trips_atomically(tmp_path: Path) -> None:
    doc = make_published([GOOD, BAD, GOOD])
    rec = record_from_data(doc, file=tmp_path / "x.json")
    own = rec.model_copy(update={"source": "empathos"})
    path = write_record(own, tmp_path / "run" / "a.json")
    assert [p.name for p in path.parent.iterdir()] == ["a.json"]  # no temp file left
    data = json.loads(path.read_text(encoding="utf-8"))
    assert detect_format(data) == "empathos" and data["schema_version"] == SCHEMA_VERSION
    assert read_record(path) == own


def test_bad_files_name_file_and_field_and_others_still_load(tmp_path: Path) -> None:
    d = tmp_path / "model-a"
    good = _write(d / "good.json", make_published([GOOD]))
    (d / "notjson.json").write_text("{ this is not json", encoding="utf-8")
    missing = make_published([GOOD])
    del missing["epj"]["P_0_initial_deficit"]
    _write(d / "missing.json", missing)
    bad_vec = make_published([GOOD])
    bad_vec["epj"]["trajectory"][1]["v_t"] = ["a", 1, 2]
    _write(d / "badvec.json", bad_vec)
    own = record_from_data(make_published([GOOD]), file=good).model_dump(mode="json")
    own["source"] = "empathos"
    own["n_unscored"] = -3
    _write(d / "ownbad.json", own)
    _write(d / "other.json", {"hello": 1})
    records, errors = load_records([tmp_path])
    assert [r.path.name for r in records] == ["good.json"]
    lines = sorted(e.line() for e in errors)
    assert len(lines) == 5
    joined = "\n".join(lines)
    assert "notjson.json: (file): not valid JSON" in joined
    assert "missing.json: epj.P_0_initial_deficit: required field is missing" in joined
    assert "badvec.json: epj.trajectory[1].v_t" in joined
    assert "ownbad.json: n_unscored:" in joined
    assert "other.json: (top level): not a dialogue record" in joined


def test_run_directory_stands_for_its_records(tmp_path: Path) -> None:
    run = tmp_path / "my-run"
    rec = record_from_data(make_published([GOOD]), file=tmp_path / "x.json")
    write_record(rec.model_copy(update={"source": "empathos"}), run / "records" / "a__t0.json")
    _write(run / "manifest.json", {"schema_version": 1, "config": {}})
    (run / "index.sqlite").write_bytes(b"SQLite format 3\x00")
    records, errors = load_records([run])
    assert errors == []
    assert [(r.path.name, r.group) for r in records] == [("a__t0.json", "my-run")]


def test_unsupported_schema_version_is_a_clear_error(tmp_path: Path) -> None:
    rec = record_from_data(make_published([GOOD]), file=tmp_path / "x.json")
    data = rec.model_dump(mode="json") | {"schema_version": 99}
    with pytest.raises(RecordError, match="schema_version"):
        read_record(_write(tmp_path / "v99.json", data))


def test_model_name_falls_back_to_directory(tmp_path: Path) -> None:
    doc = make_published([GOOD])
    del doc["test_model_name"]
    _write(tmp_path / "my-model" / "a.json", doc)
    records, errors = load_records([tmp_path / "my-model" / "a.json"])
    assert not errors and records[0].model_name == "my-model"


def test_sample_imports_every_file(empa_sample: Path) -> None:
    records, errors = load_records([empa_sample / "results"])
    assert not errors and len(records) == 90
    assert all(isinstance(r.record, DialogueRecord) for r in records)
    flagged = sum(1 for r in records for e in r.record.evaluations if e.flags)
    assert flagged > 0  # the sample holds points without ratings


def _paths(obj: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            out += _paths(v, (*prefix, i))
    return out


JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 99), st.text(max_size=5),
    st.lists(st.integers(), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_corrupted_published_files_fail_with_a_record_error_only(data: st.DataObject) -> None:
    doc = make_published([GOOD, BAD])
    where = data.draw(st.sampled_from(_paths(doc)))
    target: Any = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = data.draw(JUNK)
    try:
        record_from_data(doc, file=Path("corrupt.json"))
    except RecordError as exc:
        assert exc.line().startswith("corrupt.json")


def test_version_1_record_still_reads_and_new_fields_default(tmp_path: Path) -> None:
    """A record written before version 2 (no empty-reply, error or warning fields) loads."""
    rec = record_from_data(make_published([GOOD, GOOD]), file=tmp_path / "x.json")
    data = rec.model_copy(update={"source": "empathos"}).model_dump(mode="json")
    data["schema_version"] = 1
    for key in ("error", "score_warning", "rejudged"):
        del data[key]
    for turn in data["turns"]:
        del turn["finish_reason"], turn["empty_reply"]
    back = read_record(_write(tmp_path / "v1.json", data))
    assert back.schema_version == 1 and back.error is None and back.score_warning is None
    assert all(not t.empty_reply and t.finish_reason is None for t in back.turns)


def test_version_2_record_still_reads_and_version_3_fields_default(tmp_path: Path) -> None:
    """A record written before version 3 (no cached prompt tokens, no rejudged mark) loads."""
    rec = record_from_data(make_published([GOOD, GOOD]), file=tmp_path / "x.json")
    call = ModelCallRecord(role="judge", prompt_tokens=120, cached_prompt_tokens=100)
    data = rec.model_copy(update={"source": "empathos", "model_calls": [call]}).model_dump(
        mode="json"
    )
    assert data["schema_version"] == 3 and data["model_calls"][0]["cached_prompt_tokens"] == 100
    data["schema_version"] = 2
    del data["rejudged"], data["model_calls"][0]["cached_prompt_tokens"]
    back = read_record(_write(tmp_path / "v2.json", data))
    assert back.schema_version == 2 and back.rejudged is None
    assert back.model_calls[0].cached_prompt_tokens is None


def test_a_cut_inside_a_utf8_sequence_reads_like_any_cut(tmp_path: Path) -> None:
    """Cut short anywhere, a record gets one message: 'not valid JSON/UTF-8 at byte N'."""
    text = json.dumps({"schema_version": 2, "note": "共情"}, ensure_ascii=False).encode("utf-8")
    inside = text.index("共".encode()) + 1  # after the first byte of a three-byte character
    cut_utf8 = tmp_path / "utf8.json"
    cut_utf8.write_bytes(text[:inside])
    after = text.index(b",") + 1  # '{"schema_version": 2,' and then nothing
    cut_json = tmp_path / "half.json"
    cut_json.write_bytes(text[:after])
    for path, byte in ((cut_utf8, inside - 1), (cut_json, after)):
        with pytest.raises(RecordError) as info:
            read_record(path)
        assert info.value.field == "(file)"
        assert info.value.problem.startswith(f"not valid JSON/UTF-8 at byte {byte}")
