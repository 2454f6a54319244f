"""A loopback OpenAI-compatible judge for the pairwise tests, and transcript runs to judge."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from empathos.cli.main import app
from empathos.llm.testing import LoopbackServer, completion_body, read_request

#: decide(first dialogue text, second dialogue text) -> "first" | "second" | None (HTTP 403)
Decide = Callable[[str, str], str | None]

HEADINGS = {
    "en": ("# The first dialogue", "# The second dialogue"),
    "zh": ("# 第一段对话", "# 第二段对话"),
}


def split_dialogues(text: str) -> tuple[str, str]:
    """The two dialogues of our judge's prompt (its last user message)."""
    for first, second in HEADINGS.values():
        if first in text and second in text:
            head, rest = text.split(first, 1)[1].split(second, 1)
            return head, rest
    raise AssertionError(f"not a pairwise prompt: {text[:200]!r}")


def form(winner: str) -> str:
    pick = {"winner": winner, "margin": 2}
    return json.dumps(
        {
            "reasoning": "scripted",
            **{a: pick for a in ("cognitive", "affective", "proactive", "overall")},
        }
    )


class JudgeServer(LoopbackServer):
    """Answers each chat completion with ``decide``'s verdict as our judge's JSON form;
    ``hang_after``: requests after that many hang (for an interrupt)."""

    def __init__(
        self,
        decide: Decide,
        hang_after: int | None = None,
        answer: Callable[[str], str | None] | None = None,
    ) -> None:
        super().__init__("judge-server")
        self.decide = decide
        self.answer = answer  # the prompt's last message -> the reply (instead of decide)
        self.hang_after = hang_after
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                _, _, body = await read_request(reader)
                request = json.loads(body)
                with self._lock:
                    self.requests.append(request)
                    n = len(self.requests)
                if self.hang_after is not None and n > self.hang_after:
                    await asyncio.sleep(3600)
                text = request["messages"][-1]["content"]
                if self.answer is not None:
                    content = self.answer(text)
                else:
                    winner = self.decide(*split_dialogues(text))
                    content = None if winner is None else form(winner)
                if content is None:
                    code, payload = 403, {"error": {"message": "refused", "type": "denied"}}
                else:
                    code, payload = 200, completion_body(content, model="judge")
                data = json.dumps(payload).encode()
                head = f"HTTP/1.1 {code} X\r\ncontent-type: application/json\r\n"
                writer.write(f"{head}content-length: {len(data)}\r\n\r\n".encode() + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.CancelledError, ConnectionError):
            pass
        finally:
            writer.close()


def write_run(
    folder: Path, model: str, scenarios: list[str], reply: Callable[[str, int], str]
) -> Path:
    """A transcript run directory: ``transcripts.jsonl`` with one 3-turn dialogue per scenario."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for s in scenarios:
        msgs = []
        for t in range(3):
            msgs += [
                {"role": "user", "content": f"[{s}] line {t}"},
                {"role": "assistant", "content": reply(s, t)},
            ]
        lines.append(json.dumps({"scenario_id": s, "model": model, "transcript": msgs}))
    (folder / "transcripts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def empathos(*args: str) -> Result:
    """``empathos ARGS`` in this process (typer's runner: the real command, no start-up)."""
    return CliRunner().invoke(app, list(args))


def judge_flags(url: str) -> list[str]:
    return ["--judge-model", "scripted-judge", "--judge-base-url", url]


def judgements(out: Path) -> list[dict[str, Any]]:
    return [
        json.loads(x)
        for x in (out / "judgements.jsonl").read_text(encoding="utf-8").splitlines()
        if x
    ]


# Our own stand-in in the benchmark's layout (not its text): the slots and two codes.
FIXTURE = """Compare respondents Q1111 and Q2222 in a role-play.
[Q1111]
{conversation_history_A}
{debrief_A}
[Q2222]
{conversation_history_B}
{debrief_B}
Notes: {scenario_notes}
Answer JSON: {"overall_eq": "Q1111+++ or Q2222+", "warmth": "..."}
"""


def eqbench_copy(folder: Path) -> Path:
    """A copy of EQ-Bench 3's data/ folder in its layout, with our own stand-in text."""
    data = folder / "data"
    data.mkdir(parents=True)
    (data / "pairwise_prompt_eqbench3.txt").write_text(FIXTURE, encoding="utf-8")
    (data / "scenario_notes.txt").write_text("# 1\nnote one\n# 2\nnote two\n", encoding="utf-8")
    return folder
