"""Deterministic agents: each turn is one call through the agent's LLMClient."""

from __future__ import annotations

import json
from typing import Any

from empa.llm.base import LLMClient, Message

KEYS = ("C.Prog", "C.Neg", "A.Prog", "A.Neg", "P.Prog", "P.Neg")
DIRECTOR_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "continue_story",
            "description": "Let the talk go on, with a hint for the seeker.",
            "parameters": {
                "type": "object",
                "properties": {"hint": {"type": "string"}},
                "required": ["hint"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "end_story",
            "description": "Stop the conversation.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]


def _history(history: list[dict[str, str]]) -> str:
    return "\n".join(f"{h['role']}: {h['content']}" for h in history)


class Actor:
    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm

    def speak(self, persona: str, history: list[dict[str, str]]) -> str:
        reply = self.llm.complete(
            [Message("system", persona), Message("user", _history(history) or "start")],
            temperature=0.7,
        )
        return reply.content or ""


class Director:
    def __init__(self, llm: LLMClient, scenario: Any = None, actor_prompt: str = "") -> None:
        self.llm = llm
        self.scenario = scenario
        self.actor_prompt = actor_prompt

    def guide(self, history: list[dict[str, str]]) -> str:
        reply = self.llm.complete(
            [
                Message("system", f"Direct this story: {self.scenario}"),
                Message("user", _history(history)),
            ],
            tools=DIRECTOR_TOOLS,
        )
        if reply.tool_calls:
            call = reply.tool_calls[0]
            return f"{call.name} {json.dumps(call.arguments, sort_keys=True)}"
        return reply.content or ""


class Judger:
    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm

    def rate(self, history: list[dict[str, str]]) -> dict[str, int]:
        reply = self.llm.complete(
            [
                Message("system", "Rate the last reply; answer with a JSON object."),
                Message("user", _history(history)),
            ],
            temperature=0.0,
            max_tokens=8000,
            response_format={"type": "json_object"},
        )
        data = json.loads(reply.content or "{}")
        # Missing levels read as a small step forward on every axis.
        return {k: int(data.get(k, 1 if k.endswith("Prog") else 0)) for k in KEYS}


class TestModel:
    def __init__(self, llm: LLMClient, system_prompt: str = "") -> None:
        self.llm = llm
        self.system_prompt = system_prompt

    def reply(self, history: list[dict[str, str]]) -> str:
        reply = self.llm.complete(
            [Message("system", self.system_prompt), Message("user", _history(history))]
        )
        return reply.content or ""
