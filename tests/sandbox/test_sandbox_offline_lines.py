"""The bundled model's first lines read like a conversation: no echo of the prompt, no loop.

Every bundled scenario plays its first turn on the real offline model (the model under test
replies to the opening line, then the simulated user writes turn 2's line), with the role
settings of the offline default. Each line is checked against the prompt its call was made
with: no run of 8 tokens copied from that prompt, and no 4-gram three times in the line.
Tokens here are words, single CJK characters and punctuation marks, counted independently
of any tokenizer the code uses."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from empathos.llm import ChatModel, EndpointConfig, Message, as_messages, build_model
from empathos.llm.offline import OfflineModel
from empathos.sandbox import EmpathyEnv, Roles, SandboxConfig, agents
from empathos.scenarios import load_scenarios

SPAN = 8
_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W_]+|[^\w\s]")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def copied(line: str, prompt: str, span: int = SPAN) -> str | None:
    grams = tokens(prompt)
    seen = {tuple(grams[i : i + span]) for i in range(len(grams) - span + 1)}
    toks = tokens(line)
    for i in range(len(toks) - span + 1):
        if tuple(toks[i : i + span]) in seen:
            return " ".join(toks[i : i + span])
    return None


def looping(line: str) -> str | None:
    toks = tokens(line)
    counts = Counter(tuple(toks[i : i + 4]) for i in range(len(toks) - 3))
    worst = max(counts.items(), key=lambda kv: kv[1], default=None)
    return " ".join(worst[0]) if worst and worst[1] >= 3 else None


class Recorder:
    """The real role model, keeping the messages of each free-text call."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.role = inner.role
        self.config = inner.config
        self.sent: list[list[Message]] = []

    async def chat(self, messages: Sequence[Any], **overrides: float | int) -> Any:
        self.sent.append(as_messages(messages))
        return await self.inner.chat(messages, **overrides)

    async def structured(self, messages: Sequence[Any], schema: Any, **overrides: Any) -> Any:
        return await self.inner.structured(messages, schema, **overrides)

    async def tool_call(self, messages: Sequence[Any], tools: Any, **overrides: Any) -> Any:
        return await self.inner.tool_call(messages, tools, **overrides)


def _model(role: str, max_tokens: int | None = None, kind: str = "offline") -> Recorder:
    return Recorder(build_model(EndpointConfig(kind=kind, max_tokens=max_tokens), role))  # type: ignore[arg-type]


async def _first_turn(scenario: Any) -> list[tuple[str, str, str]]:
    """(speaker, line, the prompt its call was sent) for turn 1's reply and turn 2's line."""
    user, tested = _model("user", 40), _model("tested", 48)
    judge = _model("judge", kind="scripted")  # not called: no evaluation before turn 2
    roles = Roles(user=user, judge=judge, tested=tested)  # type: ignore[arg-type]
    env = EmpathyEnv(roles, SandboxConfig(min_turns=2, max_turns=2, eval_every=2, director="rules"))
    await env.reset(scenario)
    agent_model: ChatModel = tested  # type: ignore[assignment]
    await env.step_agent(agents.TestedAgent(agent_model))
    turns = env.state.turns
    assert len(turns) == 2 and len(tested.sent) == 1 and len(user.sent) == 1, scenario.id
    return [
        ("model", turns[0].assistant, tested.sent[0][0].content),
        ("user", turns[1].user, user.sent[0][0].content),
    ]


@pytest.mark.slow
async def test_first_lines_neither_echo_their_prompt_nor_loop(offline_lm: OfflineModel) -> None:
    scenarios = load_scenarios("builtin").scenarios
    assert len(scenarios) >= 2
    results = await asyncio.gather(*(_first_turn(s) for s in scenarios))
    problems = []
    for scenario, lines in zip(scenarios, results, strict=True):
        for speaker, line, prompt in lines:
            assert line.strip(), (scenario.id, speaker)
            echo, loop = copied(line, prompt), looping(line)
            if echo or loop:
                problems.append(f"{scenario.id} {speaker}: {line!r} (echo: {echo}; loop: {loop})")
    assert not problems, "\n".join(problems)


def test_the_checks_catch_an_echo_and_a_loop() -> None:
    prompt = "# What you are like inside: You are Maya Okafor (female, 29). The notes below"
    assert copied("ok. What you are like inside: You are Maya Okafor, hi", prompt)
    assert copied("What you are like inside today, Maya", prompt) is None
    assert copied("外婆住了四十年的老房子下个月就要拆了", "她说外婆住了四十年的老房子") is not None
    assert looping("I'm a little girl with a heart. I'm a little girl with a heart. "
                   "I'm a little girl with a heart.")  # fmt: skip
    assert looping("I'm a little girl with a heart, and I'm not afraid to share it.") is None
