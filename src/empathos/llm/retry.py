"""The one retry policy: classify an error as rate limit, transient or fatal, then retry.

Rate limits (429), server errors (5xx, 408, 409), timeouts, refused or dropped connections,
failed DNS lookups and unreadable response bodies are retried with exponential backoff and
jitter, honouring ``Retry-After``. Authentication, permission, unknown-model and bad-request
errors fail at once. Every count and wait is bounded by
:class:`~empathos.llm.config.RetryConfig`. The message says what happened: a connection
refused, a name that did not resolve and a connection the server dropped are told apart from
a timeout (the SDK over aiohttp reports all of them as ``APITimeoutError``; the exception's
causes tell them apart, on the SDK's path and on the direct path).
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from empathos.errors import (
    ModelCallError,
    ModelFatalError,
    ModelRateLimitError,
    ModelTransientError,
)
from empathos.llm.config import RetryConfig

__all__ = [
    "AttemptStats",
    "BackendError",
    "ErrorKind",
    "classify_openai_error",
    "classify_status",
    "classify_transport_error",
    "connection_problem",
    "parse_retry_after",
    "run_with_retries",
    "to_model_error",
]

R = TypeVar("R")
ErrorKind = Literal["rate_limit", "transient", "fatal"]


class BackendError(Exception):
    """A classified failure of one backend attempt (internal; surfaces as ModelCallError)."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = None,
        code: str | None = None,
        param: str | None = None,
    ) -> None:
        self.kind: ErrorKind = kind
        self.message = message
        self.retry_after = retry_after
        self.status = status
        self.code = code  # OpenAI's error code (e.g. context_length_exceeded), if any
        self.param = param  # the request field at fault, if known
        super().__init__(message)


@dataclass
class AttemptStats:
    """Counts over the attempts of one call."""

    attempts: int = 0
    retries: int = 0


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date).

    ``headers`` is looked up with lower-case names (HTTP header mappings ignore case)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _causes(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 16:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


# Exceptions of the HTTP stacks (aiohttp, httpx/httpcore, h11, empathos.llm.http1), by class name so
# that neither has to be imported here: the server closed the connection before or while
# answering.
_DROPPED = {
    "ServerDisconnectedError",
    "ClientPayloadError",
    "RemoteProtocolError",
    "ReadError",
    "WriteError",
    "ContentLengthError",
    "IncompleteReadError",
}


def _where(exc: Exception) -> str:
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    host = getattr(url, "host", None)
    if not host:
        return "the server"
    port = getattr(url, "port", None)
    return f"{host}:{port}" if port else str(host)


def connection_problem(exc: Exception, where: str | None = None) -> str | None:
    """What went wrong on the wire, in words: a refused connection, a failed DNS lookup or a
    dropped connection (from the exception's causes); None if it is none of those. ``where``
    is ``host:port`` (default: read from the exception's request, if it has one)."""
    where = where or _where(exc)
    causes = _causes(exc)
    for cause in causes:
        if isinstance(cause, socket.gaierror) or "ClientConnectorDNSError" in _names(cause):
            return f"DNS lookup failed for {where.rsplit(':', 1)[0]} (check the host in base_url)"
    for cause in causes:
        if isinstance(cause, ConnectionRefusedError):
            return f"connection refused by {where} (is the server running? check base_url)"
    for cause in causes:
        if isinstance(cause, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
            return f"connection dropped by {where} ({type(cause).__name__})"
        if _DROPPED & _names(cause):
            return f"connection dropped by {where} before a complete reply"
    return None


def classify_transport_error(exc: Exception, where: str | None = None) -> BackendError:
    """A failure before a complete HTTP reply (refused, DNS, dropped, timed out): transient."""
    problem = connection_problem(exc, where)
    if problem is not None:
        return BackendError("transient", problem)
    if isinstance(exc, TimeoutError | openai.APITimeoutError):
        return BackendError("transient", "request timed out (no reply within timeout_s)")
    cause = exc.__cause__ if isinstance(exc, openai.APIConnectionError) else exc
    return BackendError("transient", f"connection failed ({type(cause).__name__})")


def classify_status(
    status: int, message: str, code: str | None, headers: Mapping[str, str] | None
) -> BackendError:
    """An HTTP error reply: 429 is a rate limit, 5xx/408/409 transient, the rest fatal.
    ``message`` and ``code`` come from the body's OpenAI-style ``error`` object."""
    detail = _short(message)
    if code:
        detail = f"{code}: {detail}"
    retry_after = parse_retry_after(headers)
    if status == 429:
        return BackendError(
            "rate_limit", f"HTTP 429: {detail}", retry_after=retry_after, status=status
        )
    if status >= 500 or status in (408, 409):
        return BackendError(
            "transient", f"HTTP {status}: {detail}", retry_after=retry_after, status=status
        )
    hint = {
        401: "authentication failed (check the API key variable)",
        403: "permission denied",
        404: "model or endpoint not found (check base_url and model)",
    }.get(status, "request rejected")
    return BackendError("fatal", f"HTTP {status}: {hint}: {detail}", status=status, code=code)


def classify_openai_error(exc: Exception) -> BackendError:
    """Map an ``openai`` SDK exception (or a bare timeout / OS error) to a BackendError."""
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError included
        return classify_transport_error(exc)
    if isinstance(exc, openai.APIStatusError):
        return classify_status(exc.status_code, str(exc.message), exc.code, exc.response.headers)
    if isinstance(exc, openai.APIResponseValidationError | ValueError):
        # The body was not the JSON the SDK expected: a misbehaving server, maybe transient.
        return BackendError("transient", f"unreadable response body ({type(exc).__name__})")
    if isinstance(exc, TimeoutError | OSError):
        return classify_transport_error(exc)
    return BackendError("fatal", f"unexpected {type(exc).__name__}: {_short(str(exc))}")


def _delay(policy: RetryConfig, exc: BaseException | None, failures: int) -> float:
    """Wait after the ``failures``-th failed attempt: Retry-After if given, else backoff."""
    if isinstance(exc, BackendError) and exc.retry_after is not None:
        return float(min(exc.retry_after, policy.retry_after_max_s))
    base = policy.backoff_base_s * 2.0 ** max(0, failures - 1)
    return min(base, policy.backoff_max_s) + random.uniform(0.0, policy.jitter_s)


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, BackendError) and exc.kind != "fatal"


async def run_with_retries(
    attempt: Callable[[], Awaitable[R]], policy: RetryConfig, stats: AttemptStats
) -> R:
    """Await ``attempt()`` until it succeeds, a fatal error, or ``policy.max_attempts``.

    ``attempt`` raises :class:`BackendError`; the last one propagates when the policy gives up.
    The first attempt runs directly (the common case costs nothing); tenacity runs the rest.
    """
    stats.attempts += 1
    try:
        return await attempt()
    except BackendError as exc:
        if not _retryable(exc) or policy.max_attempts <= 1:
            raise
        stats.retries += 1
        await asyncio.sleep(_delay(policy, exc, 1))

    def before(_: RetryCallState) -> None:
        stats.attempts += 1

    def before_sleep(_: RetryCallState) -> None:
        stats.retries += 1

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        return _delay(policy, exc, state.attempt_number + 1)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts - 1),
        wait=wait,
        retry=retry_if_exception(_retryable),
        before=before,
        before_sleep=before_sleep,
        reraise=True,
    )
    return await retrying(attempt)


def to_model_error(exc: BackendError, *, role: str, endpoint: str, attempts: int) -> ModelCallError:
    """The typed, user-facing error for a classified failure that outlasted the retries."""
    cls: type[ModelCallError] = {
        "rate_limit": ModelRateLimitError,
        "transient": ModelTransientError,
        "fatal": ModelFatalError,
    }[exc.kind]
    tail = f" after {attempts} attempt(s)" if exc.kind != "fatal" else ""
    return cls(f"{exc.message}{tail}", role=role, endpoint=endpoint, attempts=attempts)
