"""A judge that never answers validly (issue 24, point 7): after `judge_failures_limit`
consecutive evaluations it could not rate, the dialogue ends as an error at once, not after
every remaining turn's retries, and the record keeps the judge's last raw reply (clipped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_helpers import C_ONE, auto_continue, fast_endpoint, mdep_form, scenario

from empathos.epm import TerminationKind
from empathos.llm import ChatRequest, ModelClient, ScriptedBackend
from empathos.llm.scripted import Reply
from empathos.run.config import load_run_config
from empathos.run.session import sandbox_config
from empathos.sandbox import Roles, SandboxConfig, run_dialogue
from empathos.sandbox.agents import OUTPUT_KEPT

RAMBLE = "What a lovely, caring reply! I would rate it highly on every axis. " * 50


def _roles(judge_says: Iterator[Reply]) -> tuple[Roles, list[ChatRequest]]:
    seen: list[ChatRequest] = []

    def judge(request: ChatRequest) -> Reply:
        seen.append(request)
        return next(judge_says)

    def make(role: str, handler: object) -> ModelClient:
        backend = ScriptedBackend(handler)  # type: ignore[arg-type]
        return ModelClient(backend, fast_endpoint(f"{role}-model"), role)

    roles = Roles(
        user=make("user", lambda r: "it still hurts"),
        judge=make("judge", judge),
        director=make("director", auto_continue),
        tested=make("tested", lambda r: "I hear you."),
    )
    return roles, seen


def _forever(reply: Reply) -> Iterator[Reply]:
    while True:
        yield reply


async def test_a_judge_that_never_answers_validly_ends_the_dialogue_at_once() -> None:
    roles, seen = _roles(_forever(RAMBLE))
    rec = await run_dialogue(scenario(), roles, SandboxConfig(min_turns=12, max_turns=20))
    assert rec.termination.kind is TerminationKind.ERROR
    assert rec.termination.turn == 3 and len(rec.turns) == 3  # not 12 turns of retries
    assert [e.scored for e in rec.evaluations] == [False, False, False]
    assert len(seen) == 3 * 2  # three evaluations, each one call and one re-ask
    reason = rec.termination.reason or ""
    assert reason.startswith("the judge failed 3 evaluations in a row (judge_failures_limit): ")
    assert "invalid output after 1 re-ask(s)" in reason
    assert "its last reply: 'What a lovely, caring reply!" in reason and len(reason) < 600
    failed = [c for c in rec.model_calls if c.role == "judge"]
    assert len(failed) == 3 and all(c.error for c in failed)
    kept = failed[-1].metadata["output"]
    assert kept.startswith("What a lovely") and len(kept) == OUTPUT_KEPT < len(RAMBLE)


@pytest.mark.parametrize("limit", [1, 5])
async def test_the_limit_is_configurable(limit: int) -> None:
    roles, _ = _roles(_forever(RAMBLE))
    cfg = SandboxConfig(min_turns=12, max_turns=20, judge_failures_limit=limit)
    rec = await run_dialogue(scenario(), roles, cfg)
    assert rec.termination.kind is TerminationKind.ERROR and rec.termination.turn == limit


async def test_only_consecutive_failures_count() -> None:
    # fail, fail, rate, fail, fail, rate ...: never three in a row, so the dialogue goes on
    pattern = [RAMBLE, RAMBLE, RAMBLE, RAMBLE, mdep_form(C_ONE)]  # a failed window = 2 calls

    def cycle() -> Iterator[Reply]:
        while True:
            yield from pattern

    roles, _ = _roles(cycle())
    rec = await run_dialogue(scenario(), roles, SandboxConfig(min_turns=9, max_turns=9))
    assert [e.scored for e in rec.evaluations][:6] == [False, False, True, False, False, True]
    assert rec.termination.turn == 9 and "in a row" not in (rec.termination.reason or "")


def test_run_config_sets_the_limit() -> None:
    cfg = load_run_config(None, {}, environ={"EMPATHOS_JUDGE_FAILURES_LIMIT": "5"})
    assert sandbox_config(cfg).judge_failures_limit == 5
    assert sandbox_config(load_run_config(None, {}, environ={})).judge_failures_limit == 3
