"""Cost accounting end to end: `empathos run` against a loopback server that reports cached
prompt tokens (a simulated prefix cache), with a price table; the cached tokens and the cost
reach every call record, the manifest, `empathos score --format json` and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_helpers import empathos, manifest, write_config
from typer.testing import CliRunner

from empathos.cli.main import app
from empathos.llm.loopback import BYTES_PER_TOKEN, CachingServer
from empathos.records import read_record

CASES = ("en-01-sourdough", "en-02-night-shift")
ROLES = ("user", "director", "judge", "model_under_test")
PRICES = {  # USD per million tokens; the director's model has no price
    "m-user": {"input": 1.0, "cached_input": 0.1, "output": 4.0},
    "m-judge": {"input": 2.0, "cached_input": 0.5, "output": 8.0},
    "m-model_under_test": {"input": 0.5, "output": 1.5},
}


def _cost(model: str, prompt: int, cached: int, completion: int) -> float:
    p = PRICES[model]
    cached_price = p.get("cached_input", p["input"])
    return ((prompt - cached) * p["input"] + cached * cached_price + completion * p["output"]) / 1e6


@pytest.fixture(scope="module")
def priced_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[int]]]:
    """Two dialogues of three turns, one at a time; the cached tokens the server reported,
    per model, in the order of the requests."""
    tmp = tmp_path_factory.mktemp("usage")
    lines = {"m-user": "I keep thinking about it.", "m-model_under_test": "That sounds hard."}
    with CachingServer(lines) as server:
        roles = {
            role: {"kind": "openai", "base_url": server.url, "model": f"m-{role}",
                   "retry": {"max_attempts": 1}}
            for role in ROLES
        }  # fmt: skip
        config = write_config(
            tmp / "run.yaml", roles=roles, cases=",".join(CASES), max_turns=3, min_turns=3,
            concurrency=1, prices=PRICES,
        )  # fmt: skip
        done = empathos("run", "--config", config, "--out", tmp / "out", cwd=tmp)
        reported: dict[str, list[int]] = {}
        for ex in server.exchanges:
            reported.setdefault(ex.model, []).append(ex.cached_bytes // BYTES_PER_TOKEN)
    assert done.returncode == 0, done.stderr
    assert "usage per dialogue (2):" in done.stderr and "% cached" in done.stderr
    return tmp / "out", reported


def test_every_call_records_cached_tokens_and_its_cost(
    priced_run: tuple[Path, dict[str, list[int]]],
) -> None:
    out, reported = priced_run
    seen: dict[str, list[int]] = {}
    for path in sorted((out / "records").glob("*.json")):  # dialogues in the order they ran
        rec = read_record(path)
        assert rec.schema_version == 3
        for call in rec.model_calls:
            assert call.cached_prompt_tokens is not None and call.prompt_tokens
            seen.setdefault(call.model or "", []).append(call.cached_prompt_tokens)
            if call.model in PRICES:
                want = _cost(call.model, call.prompt_tokens, call.cached_prompt_tokens,
                             call.completion_tokens or 0)  # fmt: skip
                assert call.cost_usd == pytest.approx(want)
            else:
                assert call.cost_usd is None  # no price: no made-up cost
    assert seen == reported  # exactly what the server said, call by call
    assert all(sum(v) > 0 for v in seen.values())  # prefixes were served from the cache


def test_the_manifest_counts_tokens_and_cost_per_run_role_and_dialogue(
    priced_run: tuple[Path, dict[str, list[int]]],
) -> None:
    out, reported = priced_run
    usage = manifest(out)["usage"]
    records = [read_record(p) for p in sorted((out / "records").glob("*.json"))]
    calls = [c for r in records for c in r.model_calls]
    total = usage["total"]
    assert total["calls"] == len(calls)
    assert total["cached_input_tokens"] == sum(sum(v) for v in reported.values())
    assert total["input_tokens"] == sum(c.prompt_tokens or 0 for c in calls)
    assert total["cost_usd"] == pytest.approx(sum(c.cost_usd or 0.0 for c in calls))
    assert usage["dialogues"] == 2 and set(usage["by_dialogue"]) == {f"{c}__t0" for c in CASES}
    assert usage["per_dialogue"]["input_tokens"] == pytest.approx(total["input_tokens"] / 2)
    roles = usage["roles"]
    assert set(roles) == {"user", "director", "judge", "tested"}
    assert roles["director"]["cost_usd"] is None and roles["judge"]["cost_usd"] > 0
    assert roles["judge"]["cached_input_tokens"] == sum(reported["m-judge"])
    assert sum(d["calls"] for d in usage["by_dialogue"].values()) == len(calls)


def test_score_json_and_the_report_show_the_usage(
    priced_run: tuple[Path, dict[str, list[int]]], tmp_path: Path
) -> None:
    out, _ = priced_run
    usage = manifest(out)["usage"]
    runner = CliRunner()  # in this process: a subprocess costs seconds of start-up
    score = runner.invoke(app, ["score", str(out), "--format", "json"])
    assert score.exit_code == 0, score.output
    (row,) = json.loads(score.stdout)
    assert row["extra"]["usage"]["total"] == usage["total"]
    assert row["extra"]["usage"]["roles"] == usage["roles"]
    report = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "r"), "--no-figures"])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    section = page.split('id="sec-usage"', 1)[1].split("</section>", 1)[0]
    assert "of them cached" in section
    judge = usage["roles"]["judge"]
    assert f"<td>judge</td><td>{judge['calls']}</td><td>{judge['input_tokens']}</td>" in section
    assert f"<td>{judge['cached_input_tokens']}</td>" in section
    assert f"<td>{judge['cost_usd']:.4f}</td>" in section
