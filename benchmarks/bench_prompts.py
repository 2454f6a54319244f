"""Benchmark: request bytes per dialogue, prefix reuse and what a prefix cache cannot serve.

Run: ``python benchmarks/bench_prompts.py`` (the published sample cases script_003 and
script_010, read from ``EMPATHOS_EMPA_SAMPLE``, never copied) or ``--builtin`` (the bundled
scenarios), ``--turns 12`` by default.

One deterministic loopback server (:class:`empathos.llm.loopback.CachingServer`) serves every
role of ``empathos run``'s real path (config -> model clients over HTTP -> sandbox -> runner):
each user and model line is one fixed sentence of about 60 characters, each MDEP form the
first valid instance of its JSON schema (every level 0), the IEDR form one fixed valid
instance with every indicator at level 2 (the first instance, every level 0, is a degenerate
starting point, which ends a dialogue as an error at turn 0; docs/epm.md), the director one
tool call (by default the first
tool with the first allowed values, as a scripted director answers: the setting that gives
the issue's 408,550 bytes within 1% on the code before it; ``--director reveal`` releases
stages 1, 2, 3, 4 at turns 1, 3, 5, 7, then continues). Dialogues
run one at a time, every one exactly ``--turns`` turns, and the server counts the bytes of
every request body. Printed per role and in all, per dialogue:

- request bytes (the messages plus tools and schemas, as sent);
- prefix reuse: the share of those bytes that repeat the same role's previous request as a
  prefix (the body as sent: empathos's client puts the messages last, after the tools, the
  schema and the sampling parameters, where prefix caches also put them);
- uncached bytes: request bytes minus that shared prefix, what a prefix cache cannot serve;

beside the release's own runner and empathos before issue 28, as the issue measured them
(targets: request bytes <= 0.5x the release's, prefix reuse >= 0.80).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROLES = ("user", "director", "judge", "model_under_test")
USER_LINE = "I keep going over what happened and I still can't let it go."
MODEL_LINE = "That sounds heavy to carry. What part of it weighs most today?"
SAMPLE_CASES = ("script_003", "script_010")
# The issue's table (per dialogue, the two sample cases, 12 turns).
RELEASE = {"bytes": 523_269, "reuse": 0.50, "uncached": 262_000}
BEFORE = {"bytes": 408_550, "reuse": 0.32, "uncached": 278_000}
# This script on the code before issue 28 (commit 54f9c93, with this script's loopback judge:
# the IEDR form at level 2), per director setting.
BEFORE_HERE = {
    "first": {"bytes": 411_318, "reuse": 0.50, "uncached": 205_236},
    "reveal": {"bytes": 424_877, "reuse": 0.48, "uncached": 222_708},
}
TARGET_REUSE = 0.80


def iedr_answer(level: int = 2) -> str:
    """The IEDR form the loopback judge gives: every indicator at ``level``."""
    from empathos.rubric.forms import IEDR_KEYS

    item = {"level": level, "evidence": "scripted", "reasoning": "scripted"}
    return json.dumps(dict.fromkeys(IEDR_KEYS, item))


def first_tool(tools: list[dict[str, Any]], n: int) -> tuple[str, str]:
    """The issue's setting: the first tool with the first allowed values, every turn (what a
    scripted director answers: release stage 1)."""
    from empathos.llm.offline.constrained import FirstChoiceDecoder, build_tool_call

    pairs = [(t["function"]["name"], t["function"]["parameters"]) for t in tools]
    return build_tool_call(pairs, FirstChoiceDecoder())


def reveal_tool(tools: list[dict[str, Any]], n: int) -> tuple[str, str]:
    """A busier director: release stages 1..4 at its calls 1, 3, 5, 7; otherwise continue."""
    names = {t["function"]["name"] for t in tools}
    if n % 2 == 0 and n // 2 < 4 and "reveal_story_stage" in names:
        args = {
            "action": "reveal_story_stage",
            "stage": n // 2 + 1,
            "reason": "The last layer has been talked through.",
            "guidance": "Let a little more of this come out, in your own words.",
        }
        return "reveal_story_stage", json.dumps(args)
    args = {"action": "continue", "focus": "", "reason": "The talk is moving."}
    return "continue", json.dumps(args)


def run_one(url: str, scenarios: str, case: str, turns: int, out: Path) -> None:
    """One dialogue of ``case`` through the real path, every role on the loopback server."""
    from rich.console import Console

    from empathos.run.config import load_run_config
    from empathos.run.progress import RunProgress
    from empathos.run.session import close_session, execute, prepare_run

    roles = {
        role: {"kind": "openai", "base_url": url, "model": f"bench-{role}",
               "retry": {"max_attempts": 1}}
        for role in ROLES
    }  # fmt: skip
    path = out.with_suffix(".yaml")
    path.write_text(json.dumps({"roles": roles}), encoding="utf-8")
    cli = {
        "scenarios": scenarios,
        "cases": case,
        "concurrency": 1,
        "max_turns": turns,
        "min_turns": turns,  # every dialogue runs exactly N turns
        "out": out,
    }
    config = load_run_config(path, cli, environ={})
    prepared = prepare_run(config)
    with RunProgress(Console(file=io.StringIO()), prepared.plan.total) as progress:
        outcome = asyncio.run(execute(prepared, progress))
    close_session(prepared, outcome, "completed")
    if outcome.errors or outcome.crashed:
        raise SystemExit(f"{case}: the dialogue ended as an error: {outcome.rows}")


def measure(
    cases: list[str], scenarios: str, turns: int, director: str = "first"
) -> dict[str, dict[str, float]]:
    """Bytes per role, summed over the dialogues, and the number of dialogues."""
    from empathos.llm.loopback import CachingServer

    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    lines = {"bench-user": USER_LINE, "bench-model_under_test": MODEL_LINE}
    tool = first_tool if director == "first" else reveal_tool
    server = CachingServer(lines, tool=tool, text="scripted", forms={"IEDRForm": iedr_answer()})
    with server, tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            server.reset()
            run_one(server.url, scenarios, case, turns, Path(tmp) / f"run{i}")
            for ex in server.exchanges:
                role = ex.model.removeprefix("bench-")
                for name in (role, "all"):
                    t = totals[name]
                    t["requests"] += 1
                    t["bytes"] += ex.body_bytes
                    t["cached"] += ex.cached_bytes
    for t in totals.values():
        t["dialogues"] = len(cases)
    return totals


def report(totals: dict[str, dict[str, float]], *, compare: str | None) -> None:
    """The table per role; with ``compare`` (the director setting), the comparison."""
    n = totals["all"]["dialogues"]
    print(f"per dialogue ({n:.0f} dialogue(s)):")
    head = ("role", "requests", "request bytes", "prefix reuse", "uncached")
    print(f"{head[0]:18} {head[1]:>9} {head[2]:>14} {head[3]:>13} {head[4]:>10}")
    for role in (*ROLES, "all"):
        t = totals.get(role)
        if not t:
            continue
        reuse = t["cached"] / t["bytes"] if t["bytes"] else 0.0
        print(
            f"{role:18} {t['requests'] / n:9.1f} {t['bytes'] / n:14,.0f} {reuse:13.2f} "
            f"{(t['bytes'] - t['cached']) / n:10,.0f}"
        )
    if compare is None:
        return
    t = totals["all"]
    now = {
        "bytes": t["bytes"] / n,
        "reuse": t["cached"] / t["bytes"],
        "uncached": (t["bytes"] - t["cached"]) / n,
    }
    here = BEFORE_HERE[compare]
    print()
    print(f"{'per dialogue':16} {'release*':>9} {'before*':>9} {'before**':>9} {'now':>9}")
    for key, name, fmt in (
        ("bytes", "request bytes", "{:9,.0f}"),
        ("reuse", "prefix reuse", "{:9.2f}"),
        ("uncached", "uncached bytes", "{:9,.0f}"),
    ):
        cells = " ".join(fmt.format(x) for x in (RELEASE[key], BEFORE[key], here[key], now[key]))
        note = ""
        if key == "bytes":
            note = f"   {now[key] / RELEASE[key]:.3f}x the release's (target <= 0.50x)"
        elif key == "reuse":
            note = f"   (target >= {TARGET_REUSE:.2f})"
        else:
            note = f"   {now[key] / RELEASE[key]:.2f}x the release's"
        print(f"{name:16} {cells}{note}")
    print("*: the issue's table; **: this script on the code before issue 28 (54f9c93)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument(
        "--builtin", action="store_true", help="The bundled scenarios instead of the sample."
    )
    parser.add_argument("--cases", help="Comma-separated case ids (default: the issue's).")
    parser.add_argument(
        "--director",
        choices=("first", "reveal"),
        default="first",
        help="first: the first tool every turn (the issue's setting); reveal: stages 1-4 at "
        "turns 1, 3, 5, 7, then continue.",
    )
    args = parser.parse_args()
    if args.builtin:
        from empathos.scenarios import load_builtin

        scenarios = "builtin"
        ids = [s.id for s in load_builtin().scenarios]
    else:
        sample = os.environ.get("EMPATHOS_EMPA_SAMPLE")
        if not sample or not Path(sample).is_dir():
            sys.exit("set EMPATHOS_EMPA_SAMPLE to the published sample's directory")
        scenarios, ids = sample, list(SAMPLE_CASES)
    if args.cases:
        ids = [x.strip() for x in args.cases.split(",") if x.strip()]
    where = "the bundled scenarios" if args.builtin else "the published sample"
    print(
        f"{len(ids)} case(s) of {where}, {args.turns} turns each, one dialogue at a time, "
        f"director: {args.director}"
    )
    totals = measure(ids, scenarios, args.turns, args.director)
    issue_setting = not args.builtin and ids == list(SAMPLE_CASES) and args.turns == 12
    report(totals, compare=args.director if issue_setting else None)


if __name__ == "__main__":
    main()
