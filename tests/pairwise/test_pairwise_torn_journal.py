"""A torn last line of ``judgements.jsonl`` (what a kill -9 or a full disk leaves): the rerun
sets the partial line aside in a side file it names, judges that one order again on a line
of its own, and the rerun after it pays for nothing (issue 45: the new verdict used to be
glued onto the partial line, so every rerun paid for it again). And a command that fails
for lack of a judge leaves no ``--out`` folder behind."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from pairwise_helpers import JudgeServer, empathos, judge_flags, write_run


def _first(a: str, b: str) -> str:
    return "first"


def _says(model: str, scenario: str, turn: int) -> str:
    return f"{model} says {scenario} {turn}"


def test_a_torn_last_judgement_is_set_aside_and_judged_once_more(tmp_path: Path) -> None:
    out = tmp_path / "pw"
    runs = [str(write_run(tmp_path / m, m, ["s1", "s2"], partial(_says, m))) for m in "ab"]
    args = ["compare", "--pairwise", *runs, "--out", str(out), "--bootstrap", "10"]
    journal = out / "judgements.jsonl"
    with JudgeServer(_first) as server:
        args += judge_flags(server.url)
        assert empathos(*args).exit_code == 0
        assert len(server.requests) == 4
        whole = journal.read_bytes()
        last = whole.splitlines(keepends=True)[-1]
        journal.write_bytes(whole[: len(whole) - len(last) // 2])  # half the last line gone
        again = empathos(*args)
        assert again.exit_code == 0, again.stderr
        assert len(server.requests) == 5  # only the torn order, once
        side = out / "judgements.jsonl.torn"
        assert f"set aside in {side}" in " ".join(again.stderr.split())
        assert side.read_bytes() == last[: len(last) - len(last) // 2] + b"\n"
        lines = journal.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 4 and all(json.loads(x)["picks"] for x in lines)
        third = empathos(*args)
        assert third.exit_code == 0 and len(server.requests) == 5  # nothing paid twice
        assert "set aside" not in third.stderr


def test_no_out_folder_is_left_when_there_is_no_judge(tmp_path: Path) -> None:
    runs = [str(write_run(tmp_path / m, m, ["s1"], partial(_says, m))) for m in "ab"]
    res = empathos("compare", "--pairwise", *runs, "--out", str(tmp_path / "pw"))
    assert res.exit_code != 0 and "no judge" in str(res.exception)
    assert not (tmp_path / "pw").exists()
