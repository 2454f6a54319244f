"""Retry-After parsing and the bounded policy, without a server."""

from __future__ import annotations

import email.utils

import httpx
import pytest

from empathos.llm.config import RetryConfig
from empathos.llm.retry import AttemptStats, BackendError, parse_retry_after, run_with_retries


def test_retry_after_forms() -> None:
    now = 1_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(httpx.Headers({"Retry-After": "2.5"})) == 2.5
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "1500"})) == 1.5
    assert parse_retry_after(httpx.Headers({"Retry-After": date}), now=now) == pytest.approx(30)
    assert parse_retry_after(httpx.Headers({"Retry-After": "soon"})) is None
    assert parse_retry_after(httpx.Headers({"Retry-After": "-5"})) == 0.0
    assert parse_retry_after(None) is None


async def test_fatal_is_not_retried_and_transient_is_bounded() -> None:
    policy = RetryConfig(max_attempts=4, backoff_base_s=0.0, jitter_s=0.0)
    calls: list[str] = []

    async def fatal() -> None:
        calls.append("f")
        raise BackendError("fatal", "no")

    stats = AttemptStats()
    with pytest.raises(BackendError):
        await run_with_retries(fatal, policy, stats)
    assert (calls, stats.attempts, stats.retries) == (["f"], 1, 0)

    async def flaky() -> None:
        calls.append("t")
        raise BackendError("transient", "again")

    stats = AttemptStats()
    with pytest.raises(BackendError, match="again"):
        await run_with_retries(flaky, policy, stats)
    assert calls.count("t") == 4 and (stats.attempts, stats.retries) == (4, 3)
