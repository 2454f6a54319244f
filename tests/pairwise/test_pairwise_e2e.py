"""`empathos compare --pairwise` end to end against a loopback OpenAI-compatible judge."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from pairwise_helpers import JudgeServer, empathos, judge_flags, judgements, write_run

MARK = "<<warm>>"
SCENARIOS = [f"s{i}" for i in range(6)]


def prefers_marker(first: str, second: str) -> str:
    """The dialogue whose replies carry the marker; else the first shown (a position bias)."""
    if (MARK in first) != (MARK in second):
        return "first" if MARK in first else "second"
    return "first"


def _runs(tmp: Path) -> list[str]:
    return [
        str(write_run(tmp / "warm", "warm", SCENARIOS, lambda s, t: f"{MARK} I hear you {s} {t}")),
        str(write_run(tmp / "plain", "plain", SCENARIOS, lambda s, t: f"I see {s} {t}")),
        str(write_run(tmp / "terse", "terse", SCENARIOS, lambda s, t: f"ok {s} {t}")),
    ]


def test_the_marker_model_ranks_first_in_both_orders_within_the_budget(tmp_path: Path) -> None:
    out = tmp_path / "pw"
    args = ["compare", "--pairwise", *_runs(tmp_path), "--out", str(out), "--bootstrap", "20"]
    config = tmp_path / "judge.yaml"
    with JudgeServer(prefers_marker) as server:
        config.write_text(
            f"judge:\n  base_url: {server.url}\n  model: scripted-judge\n  cache: true\n"
        )
        args += ["--config", str(config), "--max-pairs", "7"]
        res = empathos(*args, "--format", "json")
        assert res.exit_code == 0, res.stderr
        assert len(server.requests) == 14  # 7 pairs, 2 orders each
        # the cache answers a repeat: with the judgements moved away, no request is made
        (out / "judgements.jsonl").rename(out / "first.jsonl")
        again = empathos(*args, "--format", "csv")
        assert again.exit_code == 0, again.stderr
        assert len(server.requests) == 14
    assert again.stdout.splitlines()[0].startswith("model,elo,")
    assert again.stdout.splitlines()[1].startswith("warm,")
    assert all(j["call"]["cache_hit"] for j in judgements(out))
    result = json.loads(res.stdout)
    assert result["ratings"][0]["model"] == "warm"
    lines = [json.loads(x) for x in (out / "first.jsonl").read_text().splitlines()]
    pairs = Counter((j["scenario_id"], *sorted((j["first"], j["second"]))) for j in lines)
    assert len(pairs) == 7 and set(pairs.values()) == {2}
    assert {(j["scenario_id"], j["first"], j["second"]) for j in lines} == {
        (s, x, y) for s, a, b in pairs for x, y in ((a, b), (b, a))
    }
    # the pairs without the marker are decided by position: every one of them flips
    assert result["flip_rate"]["scripted-judge"] == sum("warm" not in k for k in pairs) / 7
    assert result["usage"]["calls"] == 14 and result["usage"]["failed"] == 0
    assert result["usage"]["input_tokens"] == 14 * 3  # the loopback reports 3 per call


def test_a_budget_per_model(tmp_path: Path) -> None:
    out = tmp_path / "pw"
    args = ["compare", "--pairwise", *_runs(tmp_path), "--out", str(out), "--bootstrap", "20"]
    with JudgeServer(prefers_marker) as server:
        res = empathos(*args, *judge_flags(server.url), "--pairs-per-model", "3")
        assert res.exit_code == 0, res.stderr
        assert len(server.requests) == 2 * 5  # ceil(3 x 3 models / 2) = 5 pairs, 2 orders each
    pairs = Counter(tuple(sorted((j["first"], j["second"]))) for j in judgements(out))
    per_model = Counter(m for pair, n in pairs.items() for m in pair for _ in range(n // 2))
    assert sorted(per_model.values()) == [3, 3, 4]  # spread over the models


def test_a_judge_failure_on_one_pair_is_reported_and_the_rest_is_rated(tmp_path: Path) -> None:
    def refuse_one(first: str, second: str) -> str | None:
        if "[s2]" in first and MARK in first and "I see" in second:
            return None  # HTTP 403: a fatal error, not retried
        return prefers_marker(first, second)

    out = tmp_path / "pw"
    args = ["compare", "--pairwise", *_runs(tmp_path), "--out", str(out), "--bootstrap", "20"]
    with JudgeServer(refuse_one) as server:
        res = empathos(*args, *judge_flags(server.url))
        assert len(server.requests) == 36  # 6 scenarios x 3 model pairs x 2 orders
    assert res.exit_code == 1
    assert "1 call(s) failed" in res.stderr and "s2" in res.stderr
    assert res.stdout.splitlines()[2].startswith("warm")  # the table's first row
    failed = [j for j in judgements(out) if j["picks"] is None]
    assert len(failed) == 1 and failed[0]["error"] and failed[0]["call"]["error"]
    with JudgeServer(prefers_marker) as server:  # the rerun judges that order only
        res = empathos(*args, *judge_flags(server.url))
        assert res.exit_code == 0, res.stderr
        assert len(server.requests) == 1


def test_resume_after_ctrl_c_judges_only_the_missing_orders(tmp_path: Path) -> None:
    out = tmp_path / "pw"
    args = ["compare", "--pairwise", *_runs(tmp_path), "--out", str(out), "--concurrency", "1"]
    args += ["--bootstrap", "20"]
    with JudgeServer(prefers_marker, hang_after=5) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "empathos", *args, *judge_flags(server.url)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a foreground job
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while len(server.requests) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert len(judgements(out)) == 5  # what ended before Ctrl-C is kept
    # the line every resumable command prints (empathos run, bench, rejudge)
    assert f"interrupted (Ctrl-C): 5 judge call(s) in this session are kept in {out}" in err
    assert "run the same command to resume" in err
    with JudgeServer(prefers_marker) as server:
        res = empathos(*args, *judge_flags(server.url))
        assert res.exit_code == 0, res.stderr
        assert len(server.requests) == 36 - 5
    assert len(judgements(out)) == 36
