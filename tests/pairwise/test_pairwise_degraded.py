"""`compare --pairwise --degraded-check` end to end on a loopback judge: a judge that reads
content passes (the degraded copy loses), one that always says "the first" fails."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pairwise_helpers import Decide, JudgeServer, empathos, judge_flags, judgements, write_run
from typer.testing import Result

from empathos.validate.perturb import sycophantic_reply

MARK = "<<listens>>"
SCENARIOS = ["s1", "s2", "s3"]


def _runs(tmp: Path) -> list[str]:
    return [
        str(write_run(tmp / "a", "model-a", SCENARIOS, lambda s, t: f"{MARK} a {s} {t}")),
        str(write_run(tmp / "b", "model-b", SCENARIOS, lambda s, t: f"{MARK} b {s} {t}")),
    ]


def _check(tmp: Path, decide: Decide) -> tuple[Result, JudgeServer]:
    with JudgeServer(decide) as server:
        res = empathos(
            "compare", "--pairwise", "--degraded-check", *_runs(tmp), "--out", str(tmp / "pw"),
            *judge_flags(server.url), "--format", "json", "--bootstrap", "20",
        )  # fmt: skip
    return res, server


def reads_content(first: str, second: str) -> str:
    """The dialogue whose replies carry the marker (the original's)."""
    return "first" if MARK in first else "second"


def test_a_judge_that_reads_content_passes(tmp_path: Path) -> None:
    res, server = _check(tmp_path, reads_content)
    assert res.exit_code == 0, res.stderr
    assert len(server.requests) == 12  # 2 models x 3 scenarios, each against its copy, 2 orders
    lines = judgements(tmp_path / "pw")
    pairs = Counter((j["scenario_id"], *sorted((j["first"], j["second"]))) for j in lines)
    assert set(pairs.values()) == {2}
    assert {p[1:] for p in pairs} == {
        ("model-a", "model-a (degraded)"),
        ("model-b", "model-b (degraded)"),
    }
    sent = " ".join(r["messages"][-1]["content"] for r in server.requests)
    assert sycophantic_reply("affect", "en", "s1/0/1") in sent  # the documented rule
    check = json.loads(res.stdout)["degraded_check"]
    assert check["pairs"] == 6 and check["degraded_lost"] == 1.0 and check["flip_rate"] == 0.0
    assert check["passed"] and check["interval"] == [1.0, 1.0]


def test_a_judge_that_always_says_the_first_fails(tmp_path: Path) -> None:
    res, server = _check(tmp_path, lambda first, second: "first")
    assert res.exit_code == 1
    assert len(server.requests) == 12
    check = json.loads(res.stdout)["degraded_check"]
    assert check["flip_rate"] == 1.0 and check["degraded_lost"] == 0.0 and not check["passed"]
    table = empathos(
        "compare",
        "--pairwise",
        "--degraded-check",
        *_runs(tmp_path),
        "--out",
        str(tmp_path / "pw"),
        *judge_flags("http://127.0.0.1:9/v1"),
    )  # fmt: skip  (everything judged: no call is made)
    assert table.exit_code == 1
    assert "flip rate 100%; FAIL (threshold 80%)" in table.stdout
