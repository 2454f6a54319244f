"""Helpers for the bench tests: run the CLI in a subprocess, write fixtures of our own in each
benchmark's layout (never benchmark text)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from empathos.cli.main import app
from empathos.errors import EmpathosError
from empathos.llm.testing import LoopbackServer, completion_body, read_request


@dataclass(frozen=True)
class Outcome:
    """What a command in this process printed and how it ended (exit 2 with ``error``: an
    expected error, which ``main`` prints as that one line)."""

    exit_code: int
    stdout: str
    error: str | None
    stderr: str = ""


def cli(*args: str | Path) -> Outcome:
    """Run the ``empathos`` command in this process (no interpreter start-up per call)."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    exc = result.exception
    if isinstance(exc, EmpathosError):
        return Outcome(2, result.stdout, exc.line())
    if exc is not None and not isinstance(exc, SystemExit):
        raise exc
    return Outcome(result.exit_code, result.stdout, None, result.stderr)


#: Our own EQ-Bench v2 style questions: id -> (four emotions with reference intensities).
EQ_REFERENCES: dict[str, list[tuple[str, int]]] = {
    "1": [("Calm", 2), ("Bitter", 7), ("Hopeful", 0), ("Wary", 5)],
    "2": [("Proud", 8), ("Guilty", 0), ("Amused", 3), ("Tense", 1)],
    "3": [("Lonely", 6), ("Relieved", 2), ("Jealous", 4), ("Content", 0)],
}


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment of an ``empathos`` subprocess: no EMPATHOS_* run settings leak into it
    (only the cache directory), a wide terminal, and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMPATHOS_")}
    if "EMPATHOS_CACHE_DIR" in os.environ:
        env["EMPATHOS_CACHE_DIR"] = os.environ["EMPATHOS_CACHE_DIR"]
    return {**env, "COLUMNS": "200", **extra}


def eq_prompt(qid: str) -> str:
    """A prompt of our own naming the question's emotions (the scripted models read them)."""
    names = "\n".join(name for name, _ in EQ_REFERENCES[qid])
    return f"Question {qid}: rate these feelings of Sam after the talk.\n{names}\n"


def write_eq_questions(folder: Path, *, as_strings: bool = False) -> Path:
    """A questions file in the benchmark's layout (``<folder>/data/<file>``)."""
    out: dict[str, Any] = {}
    for qid, emotions in EQ_REFERENCES.items():
        ref: dict[str, Any] = {}
        for i, (name, value) in enumerate(emotions, 1):
            ref[f"emotion{i}"] = name
            ref[f"emotion{i}_score"] = str(value) if as_strings and value else value
        out[qid] = {"prompt": eq_prompt(qid), "reference_answer_fullscale": ref}
    path = folder / "data" / "eq_bench_v2_questions_171.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out), encoding="utf-8")
    return path


def ratings_text(qid: str, offset: int, *, revise: bool = False, revised_offset: int = 0) -> str:
    """A reply rating question ``qid``'s emotions at reference + offset (clipped to 0-10)."""

    def block(off: int) -> str:
        return "\n".join(f"{name}: {min(10, max(0, v + off))}" for name, v in EQ_REFERENCES[qid])

    if not revise:
        return block(offset) + "\n"
    return (
        f"First pass scores:\n{block(offset)}\n\nCritique: thinking again.\n\n"
        f"Revised scores:\n{block(revised_offset)}\n"
    )


Reply = Callable[[dict[str, Any]], "str | int"]


class ScriptedServer(LoopbackServer):
    """A loopback OpenAI-compatible server whose model is a function of the request body:
    it returns the reply's text, or an HTTP status for a failure. Every body is kept. Every
    response ends its connection: Inspect does not close its HTTP clients, and a connection
    left open would be collected, unclosed, in a later test. A request that ``hold`` selects
    gets no answer until :meth:`open_gate` (the other requests are answered meanwhile)."""

    def __init__(self, reply: Reply, hold: Callable[[dict[str, Any]], bool] | None = None) -> None:
        super().__init__("bench-scripted-server")
        self.reply = reply
        self.hold = hold
        self._gate = asyncio.Event()
        self.bodies: list[dict[str, Any]] = []

    def open_gate(self) -> None:
        """Answer the held requests, and every later one."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._gate.set)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            _, _, raw = await read_request(reader)
            if raw:
                body = json.loads(raw)
                self.bodies.append(body)
                if self.hold is not None and self.hold(body):
                    await self._gate.wait()
                answer = self.reply(body)
                if isinstance(answer, int):
                    data = json.dumps({"error": {"message": "scripted failure"}}).encode()
                    head = b"HTTP/1.1 %d Failure\r\n" % answer
                else:
                    data = json.dumps(completion_body(answer, None, body["model"])).encode()
                    head = b"HTTP/1.1 200 OK\r\n"
                writer.write(
                    head
                    + b"connection: close\r\ncontent-type: application/json\r\n"
                    + b"content-length: %d\r\n\r\n%b" % (len(data), data)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()


def last_user(body: dict[str, Any]) -> str:
    """The text of the request's last user message."""
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
