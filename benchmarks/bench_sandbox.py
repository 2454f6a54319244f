"""Benchmark: 64 concurrent dialogues against a loopback endpoint of fixed latency L per call.

Run: ``python benchmarks/bench_sandbox.py [--dialogues 64] [--turns 5] [--latency 1.0]``.

A loopback OpenAI-compatible server (a separate process, so its CPU is not counted) answers
every call after exactly L seconds with a canned valid reply of the request's shape: text for
the user and the model under test, JSON following the schema for the judge, a tool call for
the director. Every role of ``empathos run``'s real path (config -> model clients over HTTP ->
sandbox -> runner -> run directory) points at it. Printed side by side:

- the bound: one dialogue's sequential calls x L (and one dialogue run alone, measured);
- the wall time of all dialogues at once, and its ratio to the bound (target: <= 1.2 for 64
  dialogues; <= 1.3 for 1,000 dialogues at L = 3 s);
- the framework's own CPU time per turn (this process's CPU time / turns run; target <= 4 ms);
- the dialogues that ended as errors, by reason (target: 0, also for 1,000 dialogues at
  L = 1 s and L = 3 s: overload slows a run, it never loses dialogues), and the load average
  of the machine before and after (the figures mean little on a machine shared with other
  work).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

TARGET_RATIO = 1.2  # 64 dialogues
TARGET_RATIO_1000 = 1.3  # 1,000 dialogues at L = 3 s
TARGET_CPU_MS = 4.0


# -- the loopback server (runs in a child process) ---------------------------------------
def serve(port: int, latency: float) -> None:
    """Serve /v1/chat/completions: every reply after ``latency`` seconds."""
    import uvicorn

    from empathos.llm import ChatRequest, RawReply, RawToolCall, ToolReply, auto_reply
    from empathos.llm.server import create_app, listen_socket

    def as_raw(request: ChatRequest) -> RawReply:
        reply = auto_reply(request)
        if isinstance(reply, ToolReply):
            args = reply.arguments
            text = args if isinstance(args, str) else json.dumps(args, default=str)
            call = RawToolCall(name=reply.name, arguments=text)
            return RawReply(tool_calls=[call], input_tokens=1, output_tokens=8)
        text = reply if isinstance(reply, str) else json.dumps(reply, default=str)
        return RawReply(content=text, input_tokens=1, output_tokens=64)

    canned: dict[str, RawReply] = {}

    class FixedLatency:
        kind = "fixed-latency"
        endpoint: str | None = None

        async def complete(self, request: ChatRequest) -> RawReply:
            await asyncio.sleep(latency)
            if not request.tools and request.response_schema is None:
                return RawReply(
                    content="I hear you. Tell me more?", input_tokens=1, output_tokens=6
                )
            shape = json.dumps([request.schema_name, [t.name for t in request.tools]])
            if shape not in canned:  # build each shape's reply once: the server stays cheap
                canned[shape] = as_raw(request)
            return canned[shape]

    sock = listen_socket("127.0.0.1", port, backlog=4096)
    roles = ("user", "director", "judge", "model_under_test")
    app = create_app(FixedLatency(), "fixed", aliases=[f"fixed-{role}" for role in roles])
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


# -- the measured side ------------------------------------------------------------------
def run_config(url: str, out: Path, dialogues: int, turns: int) -> Any:
    from empathos.run.config import load_run_config

    roles = {
        role: {
            "kind": "openai",
            "base_url": url,
            "model": f"fixed-{role}",
            "name": role,
            "max_concurrency": 4096,
            "retry": {"max_attempts": 1},
        }
        for role in ("user", "director", "judge", "model_under_test")
    }
    cases = ["en-01-sourdough", "en-02-night-shift", "en-03-lease", "en-04-diagnosis"]
    if dialogues != 1 and dialogues % len(cases):
        raise SystemExit(f"--dialogues must be 1 or a multiple of {len(cases)}")
    path = out.with_suffix(".yaml")
    path.write_text(json.dumps({"roles": roles}), encoding="utf-8")
    cli = {
        "cases": ",".join(cases[: min(dialogues, len(cases))]),
        "trials": max(1, dialogues // len(cases)),
        "concurrency": dialogues,
        "max_turns": turns,
        "min_turns": turns,  # every dialogue runs exactly N turns
        "out": out,
    }
    return load_run_config(path, cli, environ={})


def measure(url: str, dialogues: int, turns: int) -> dict[str, Any]:
    """Run ``dialogues`` at once through the real path; wall time, CPU time, calls, turns."""
    from rich.console import Console

    from empathos.run.progress import RunProgress
    from empathos.run.session import close_session, execute, prepare_run

    with tempfile.TemporaryDirectory() as tmp:
        config = run_config(url, Path(tmp) / "run", dialogues, turns)
        prepared = prepare_run(config)
        quiet = Console(file=io.StringIO())
        cpu0, t0 = time.process_time(), time.perf_counter()
        with RunProgress(quiet, prepared.plan.total) as progress:
            outcome = asyncio.run(execute(prepared, progress))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        close_session(prepared, outcome, "completed")
        turns_run = sum(r.turns for r in outcome.rows)
        docs = [json.loads(p.read_text()) for p in (Path(tmp) / "run" / "records").glob("*.json")]
        calls = [len(d["model_calls"]) for d in docs]
        reasons = Counter(
            d["termination"].get("reason") or "?"
            for d in docs
            if d["termination"].get("kind") == "error"
        )
        reasons.update(outcome.crashed.values())
    errors = outcome.errors + len(outcome.crashed)
    return {
        "reasons": reasons,
        "dialogues": len(outcome.rows),
        "errors": errors,
        "wall": wall,
        "cpu": cpu,
        "turns": turns_run,
        "calls_per_dialogue": max(calls) if calls else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=64)
    parser.add_argument("--turns", type=int, default=5, help="N turns per dialogue.")
    parser.add_argument("--latency", type=float, default=1.0, help="L seconds per call.")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(0, args.latency)
        return
    load_before = os.getloadavg()
    proc, url = start_server(args.latency)
    try:
        alone = measure(url, 1, args.turns)
        many = measure(url, args.dialogues, args.turns)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    load_after = os.getloadavg()
    bound = alone["calls_per_dialogue"] * args.latency
    # the ratio targets: 64 dialogues (any L); 1,000 dialogues at L = 3 s
    target: float | None = TARGET_RATIO if args.dialogues <= 64 else None
    if args.dialogues >= 1000 and args.latency >= 3.0:
        target = TARGET_RATIO_1000
    print(f"loopback server: L = {args.latency:.3f} s per call; N = {args.turns} turns")
    print(f"one dialogue: {alone['calls_per_dialogue']:.0f} sequential calls")
    print(f"  bound (calls x L)           {bound:8.2f} s")
    print(f"  measured alone              {alone['wall']:8.2f} s")
    print(
        f"{many['dialogues']:.0f} dialogues at once       {many['wall']:8.2f} s"
        f"   ratio to bound {many['wall'] / bound:.3f}"
        + (f" (target <= {target})" if target else " (no target)")
        + f"   ratio to alone {many['wall'] / alone['wall']:.3f}"
    )
    print(
        f"framework CPU time per turn  {1000 * many['cpu'] / max(1, many['turns']):8.2f} ms"
        f" (target <= {TARGET_CPU_MS})"
        f"   ({many['cpu']:.2f} s CPU over {many['turns']:.0f} turns, this process only)"
    )
    print(f"errors: {many['errors']:.0f} of {args.dialogues} dialogues (target 0)")
    for reason, count in many["reasons"].most_common(5):
        print(f"  {count:5d} x {reason}")
    print(
        "load average (1, 5, 15 min): before "
        + " ".join(f"{x:.2f}" for x in load_before)
        + ", after "
        + " ".join(f"{x:.2f}" for x in load_after)
        + f" ({os.cpu_count()} CPUs)"
    )


if __name__ == "__main__":
    main()
