"""`empathos import-inspect` run again and on bad input (issue 33): a second import of a set
of logs that includes imported ones writes only the new samples (`--update` replaces what
changed), and every bad input gives one line naming the file and the problem.

The logs are written by Inspect's own `write_eval_log` from its public log classes, with the
record of each sample in its store as the task keeps it (the task itself runs in
test_inspect_task.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'empathos[inspect]'")

from click.testing import Result
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
from typer.testing import CliRunner

from empathos.cli.main import app
from empathos.errors import RecordError
from empathos.examples import examples_dir
from empathos.integrations.inspect.transcript import RECORD_KEY
from empathos.records import DialogueRecord, load_records, read_record


def _records() -> list[DialogueRecord]:
    loaded, _ = load_records([examples_dir()])
    out = []
    for i, item in enumerate(loaded):  # one file name each: the dialogue id
        meta = {**item.record.metadata, "dialogue_id": f"{item.record.scenario_id}__t{i}"}
        out.append(item.record.model_copy(update={"metadata": meta}))
    return out


def _log(path: Path, records: list[DialogueRecord]) -> Path:
    spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task="empathos/empa",
                    dataset=EvalDataset(), model="mockllm/model", config=EvalConfig())  # fmt: skip
    samples = []
    for i, r in enumerate(records):
        store = {RECORD_KEY: r.model_dump(mode="json")}
        samples.append(EvalSample(id=f"s{i}", epoch=1, input="-", target="", store=store))
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path))
    return path


def _import(*args: str | Path) -> Result:
    return CliRunner().invoke(app, ["import-inspect", *map(str, args)])


def test_importing_again_writes_only_the_new_samples(tmp_path: Path) -> None:
    records = _records()
    assert len(records) >= 3
    first = _log(tmp_path / "first.eval", records[:2])
    out = tmp_path / "records"
    done = _import(first, "--out", out)
    assert done.exit_code == 0, done.output
    assert "wrote 2 record(s)" in done.stdout and "0 imported before" in done.stdout
    kept = {p: p.stat().st_mtime_ns for p in (out / "first").iterdir()}
    second = _log(tmp_path / "second.eval", records[2:3])
    again = _import(first, second, "--out", out)  # the README's command after a second eval
    assert again.exit_code == 0, again.output
    assert "wrote 1 record(s)" in again.stdout and "2 imported before, kept" in again.stdout
    assert {p: p.stat().st_mtime_ns for p in (out / "first").iterdir()} == kept
    [new] = (out / "second").iterdir()
    assert read_record(new) == records[2]


def test_a_changed_log_is_refused_unless_update(tmp_path: Path) -> None:
    records = _records()[:2]
    log = _log(tmp_path / "run.eval", records)
    out = tmp_path / "records"
    assert _import(log, "--out", out).exit_code == 0
    changed = records[0].model_copy(update={"model": "another-model"})
    _log(log, [changed, records[1]])
    done = _import(log, "--out", out)
    assert isinstance(done.exception, RecordError)
    target = out / "run" / f"{records[0].metadata['dialogue_id']}.json"
    assert done.exception.line() == (
        f"{target}: exists already and holds another record (the log was imported before and "
        "has changed since); pass --update to replace it, or choose another --out"
    )
    assert read_record(target) == records[0]
    done = _import(log, "--out", out, "--update")
    assert done.exit_code == 0, done.output
    assert "wrote 1 record(s)" in done.stdout and "1 of them replaced" in done.stdout
    assert read_record(target) == changed


def _bad(tmp_path: Path, kind: str) -> tuple[Path, str]:
    if kind == "directory":
        return tmp_path, f"is a directory; name its log files ({tmp_path}/*.eval)"
    path = tmp_path / ("log.json" if "json" in kind else "log.eval")
    if kind == "empty":
        path.write_bytes(b"")
        return path, "is empty, not an Inspect log"
    if kind == "json":
        path.write_text(json.dumps({"records": []}), encoding="utf-8")
        return path, "JSON, but not an Inspect log (no 'eval' section)"
    if kind == "broken json log":
        path.write_text(json.dumps({"version": 2, "eval": {"task": 3}}), encoding="utf-8")
        return path, "not a readable Inspect log ("
    path.write_text("not a zip", encoding="utf-8")
    return path, "not an Inspect .eval log (not a zip archive)"


@pytest.mark.parametrize("kind", ["directory", "empty", "json", "broken json log", "text"])
def test_every_bad_log_is_one_line_naming_the_file(tmp_path: Path, kind: str) -> None:
    path, problem = _bad(tmp_path, kind)
    done = _import(path, "--out", tmp_path / "out")
    assert isinstance(done.exception, RecordError), done.output
    line = done.exception.line()
    assert line.startswith(f"{path}: {problem}") and "\n" not in line
    if kind == "broken json log":  # whole words, closed, not pydantic's cut text
        assert line.endswith(")") and len(line) < len(str(path)) + 300
    assert not (tmp_path / "out").exists()


def test_out_naming_a_file_is_one_line(tmp_path: Path) -> None:
    log = _log(tmp_path / "run.eval", _records()[:1])
    target = tmp_path / "taken"
    target.write_text("x", encoding="utf-8")
    done = _import(log, "--out", target)
    assert isinstance(done.exception, RecordError), done.output
    assert done.exception.line() == (
        f"{target}: --out: is a file; --out names the directory the records go to"
    )
