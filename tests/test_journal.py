"""The one append-only journal helper (empathos.journal) on a torn last line: a partial line
is set aside in ``<name>.torn`` and named, a whole line missing only its newline is kept, the
next line starts on a line of its own, and every fragment of several crashes is kept."""

from __future__ import annotations

import json
from pathlib import Path

from empathos.journal import append_line, mend, read_lines

A = json.dumps({"step": 1, "loss": 0.5})
B = json.dumps({"step": 2, "loss": 0.25})


def test_a_partial_last_line_is_set_aside_and_named(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(A + "\n" + B[:9], encoding="utf-8")
    lines, torn = read_lines(path)
    assert [t for _, t in lines] == [A + "\n"]
    assert torn is not None and torn.side == tmp_path / "j.jsonl.torn" and torn.size == 9
    assert str(torn.side) in torn.message() and "cut short" in torn.message()
    assert torn.side.read_text(encoding="utf-8") == B[:9] + "\n"
    assert append_line(path, B) is None
    assert path.read_text(encoding="utf-8") == A + "\n" + B + "\n"


def test_a_whole_line_missing_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(A, encoding="utf-8")
    assert mend(path) is None and not (tmp_path / "j.jsonl.torn").exists()
    append_line(path, B)
    assert path.read_text(encoding="utf-8").splitlines() == [A, B]


def test_every_fragment_of_several_crashes_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text('{"one": ', encoding="utf-8")  # a file of a single torn line
    assert append_line(path, A) is not None
    path.write_text(path.read_text(encoding="utf-8") + '{"two": [', encoding="utf-8")
    torn = append_line(path, B)
    assert torn is not None
    assert torn.side.read_text(encoding="utf-8") == '{"one": \n{"two": [\n'
    assert path.read_text(encoding="utf-8").splitlines() == [A, B]


def test_training_metrics_resume_past_a_torn_line(tmp_path: Path) -> None:
    """``metrics.jsonl`` of a training run resumed from step 1: the rows after it go, a torn
    line is set aside (it used to stop the resume with a JSON error)."""
    from empathos.train.trainer import drop_rows_after

    path = tmp_path / "metrics.jsonl"
    path.write_text(A + "\n" + B + "\n" + '{"step": 3, "lo', encoding="utf-8")
    torn = drop_rows_after(path, 1)
    assert torn is not None and torn.side.read_text(encoding="utf-8") == '{"step": 3, "lo\n'
    assert path.read_text(encoding="utf-8") == A + "\n"
