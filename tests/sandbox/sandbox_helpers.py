"""Scripted roles for the sandbox tests: real ModelClients over scripted backends.

Every role is a real :class:`~empathos.llm.ModelClient` (retries, validation, call records)
whose backend answers from a handler written here; all roles append to one shared log, so a
test can check the global order of calls and exactly what each role was sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from empathos.llm import (
    ChatRequest,
    EndpointConfig,
    ModelClient,
    RetryConfig,
    ScriptedBackend,
    StructuredConfig,
    ToolReply,
    auto_reply,
    fault,
)
from empathos.llm.scripted import Reply
from empathos.rubric import EMPATHY_RUBRIC
from empathos.sandbox import Roles
from empathos.scenarios import Scenario, load_builtin

MDEP_KEYS = [i.key for i in EMPATHY_RUBRIC.mdep]
IEDR_KEYS = [i.key for i in EMPATHY_RUBRIC.iedr]
JUDGE_MARK = "JUDGE-EVIDENCE-7Q"

# Level tuples (C.Prog, C.Neg, A.Prog, A.Neg, P.Prog, P.Neg) and the v_t they give.
ZERO = (0, 0, 0, 0, 0, 0)  # v = (0, 0, 0)
DEEP = (2, 0, 2, 0, 2, 0)  # v = (+3, +3, +3)
HARM = (0, -1, 0, -1, 0, -1)  # v = (-2, -2, -2)
C_ONE = (1, 0, 0, 0, 0, 0)  # v = (+1, 0, 0)
DRIFT = (0, 0, 0, 0, 1, -1)  # v = (0, 0, -1)
LIFT = (0, 0, 1, -1, 2, 0)  # v = (0, -1, +3)


def mdep_form(levels: Sequence[int]) -> dict[str, Any]:
    """An MDEP answer with the given levels, evidence carrying a marker no other role may see."""
    return {
        k: {"level": lv, "evidence": f"{JUDGE_MARK} {k}", "reasoning": "scripted"}
        for k, lv in zip(MDEP_KEYS, levels, strict=True)
    }


def iedr_form(level: int = 2) -> dict[str, Any]:
    """An IEDR answer with every indicator at ``level``."""
    return {k: {"level": level, "evidence": "e", "reasoning": "r"} for k in IEDR_KEYS}


def fast_endpoint(model: str, max_concurrency: int = 16) -> EndpointConfig:
    """A scripted endpoint with tiny backoffs, so fault tests take milliseconds."""
    return EndpointConfig(
        kind="scripted",
        model=model,
        max_concurrency=max_concurrency,
        retry=RetryConfig(max_attempts=2, backoff_base_s=0.001, backoff_max_s=0.002, jitter_s=0),
        structured=StructuredConfig(max_reasks=1),
    )


@dataclass
class Script:
    """Handlers per role plus the shared log of (role, request) in call order."""

    judge_levels: list[Sequence[int] | None] = field(default_factory=list)
    director_actions: dict[int, ToolReply] = field(default_factory=dict)
    failing: set[str] = field(default_factory=set)
    log: list[tuple[str, ChatRequest]] = field(default_factory=list)
    iedr_level: int = 2

    def calls(self, role: str) -> list[ChatRequest]:
        """Requests one role received, in order."""
        return [r for name, r in self.log if name == role]

    def handler(self, role: str) -> Callable[[ChatRequest], Reply]:
        counter: Iterator[int] = iter(range(1, 10_000))
        evals: Iterator[int] = iter(range(10_000))

        def answer(request: ChatRequest) -> Reply:
            self.log.append((role, request))
            if role in self.failing:
                raise fault("fatal", f"{role} endpoint refuses")
            if role == "user":
                return f"user line {next(counter) + 1}"
            if role == "tested":
                return f"reply {next(counter)}"
            if role == "judge":
                if request.schema_name == "IEDRForm":
                    return iedr_form(self.iedr_level)
                i = next(evals)
                levels = self.judge_levels[i] if i < len(self.judge_levels) else ZERO
                if levels is None:
                    raise fault("fatal", "judge endpoint refuses this window")
                return mdep_form(levels)
            turn = len(self.calls("director"))
            return self.director_actions.get(turn) or auto_continue(request)

        return answer

    def roles(self, *, director: bool = True, max_concurrency: int = 16) -> Roles:
        def make(role: str) -> ModelClient:
            backend = ScriptedBackend(self.handler(role))
            return ModelClient(backend, fast_endpoint(f"{role}-model", max_concurrency), role)

        return Roles(
            user=make("user"),
            judge=make("judge"),
            director=make("director") if director else None,
            tested=make("tested"),
        )


def auto_continue(request: ChatRequest) -> Reply:
    """The director's default: continue with a focus note."""
    if request.tools:
        return ToolReply("continue", {"focus": "", "reason": "scripted default"})
    return auto_reply(request)


@cache
def _base() -> Scenario:
    return load_builtin().scenarios[0]


def scenario(p0: tuple[float, float, float] | None = (-6.0, -6.0, -6.0)) -> Scenario:
    """A bundled (project-written) scenario; P_0 replaced (None: unknown, so the judge's IEDR
    runs)."""
    return _base().model_copy(update={"p0": p0, "iedr": None})


def section(text: str, heading: str, next_heading: str) -> str:
    """The text between two headings of a rendered prompt."""
    start = text.index(heading) + len(heading)
    return text[start : text.index(next_heading, start)]
