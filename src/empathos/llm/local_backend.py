"""The local policy served to a model client: plain chats, batched across callers.

:class:`LocalBackend` plays the model under test from a
:class:`~empathos.llm.local.LocalPolicy` (``empathos run --policy``, ``kind: local``).
Structured output and tool calls are refused. A failure never stops the worker that serves
the queue: the calls of the batch that failed get the error, the next batch is served.
"""

from __future__ import annotations

import asyncio

import torch

from empathos.llm.local import Generation, LocalPolicy
from empathos.llm.offline.model_thread import on_model_thread
from empathos.llm.retry import BackendError
from empathos.llm.types import ChatRequest, RawReply

__all__ = ["LocalBackend"]

_DEFAULT_MAX_TOKENS = 256


class LocalBackend:
    """Serves plain chats from a :class:`LocalPolicy`, batching concurrent requests.

    Requests queued while the model is busy run together as one left-padded batch (up to
    ``max_batch``, same sampling settings). Structured output and tool calls are refused:
    this backend plays the model under test."""

    kind = "local"
    endpoint: str | None = None

    def __init__(self, policy: LocalPolicy, max_batch: int = 8) -> None:
        self.policy = policy
        self.max_batch = max(1, max_batch)
        self.pending: list[tuple[ChatRequest, asyncio.Future[RawReply]]] = []
        self.batches: list[int] = []
        self._worker: asyncio.Task[None] | None = None

    async def complete(self, request: ChatRequest) -> RawReply:
        """Queue ``request`` and wait for its reply."""
        if request.tools or request.response_schema is not None or request.json_mode:
            raise BackendError(
                "fatal", "the local backend serves plain chats only (the model under test)"
            )
        future: asyncio.Future[RawReply] = asyncio.get_running_loop().create_future()
        self.pending.append((request, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await future

    @staticmethod
    def _key(request: ChatRequest) -> tuple[float, float, int, int | None]:
        p = request.params
        seed = p.get("seed")
        return (
            float(p.get("temperature", 0.0)),
            float(p.get("top_p", 1.0)),
            int(p.get("max_tokens", _DEFAULT_MAX_TOKENS)),
            None if seed is None else int(seed),
        )

    def _run(self, requests: list[ChatRequest]) -> list[RawReply | Exception]:
        """The replies of one batch; a request whose prompt cannot be built (a chat template
        that refuses it) gets its exception, and the others are still generated."""
        temperature, top_p, max_new, seed = self._key(requests[0])
        out: list[RawReply | Exception] = []
        prompts: list[list[int]] = []
        for request in requests:
            try:
                prompts.append(self.policy.prompt_ids(request.messages, max_new))
            except Exception as exc:
                out.append(_failed(exc))
            else:
                out.append(RawReply())  # a placeholder for its generation
        if not prompts:
            return out
        if seed is not None:
            torch.manual_seed(seed)
        gens = iter(
            self.policy.generate(
                prompts,
                max_new_tokens=max_new,
                temperature=temperature,
                top_p=top_p,
                batch_size=len(prompts),
            )
        )
        return [item if isinstance(item, Exception) else _reply(next(gens)) for item in out]

    def _next_batch(self) -> list[tuple[ChatRequest, asyncio.Future[RawReply]]]:
        """Take the first pending request and those that may share its batch."""
        first = self.pending.pop(0)
        key = self._key(first[0])
        batch, rest = [first], []
        for item in self.pending:
            if len(batch) < self.max_batch and self._key(item[0]) == key:
                batch.append(item)
            else:
                rest.append(item)
        self.pending = rest
        return [(r, f) for r, f in batch if not f.cancelled()]

    async def _drain(self) -> None:
        """Serve the queue until it is empty. Any exception of a batch fails that batch's
        calls with it (never the worker: the next batch is served); if the worker itself is
        stopped (cancelled), the calls still waiting fail instead of waiting forever."""
        batch: list[tuple[ChatRequest, asyncio.Future[RawReply]]] = []
        try:
            await asyncio.sleep(0)
            while self.pending:
                batch = self._next_batch()
                if not batch:
                    continue
                self.batches.append(len(batch))
                try:
                    replies = await on_model_thread(self._run, [r for r, _ in batch])
                except Exception as exc:
                    replies = [_failed(exc)] * len(batch)
                for (_, future), reply in zip(batch, replies, strict=True):
                    _settle(future, reply)
                batch = []
        finally:
            stopped = BackendError("transient", "the local backend's worker was stopped")
            for _, future in [*batch, *self.pending]:
                _settle(future, stopped)
            self.pending = []


def _failed(exc: Exception) -> BackendError:
    """The error a call gets when its generation raised ``exc`` (fatal: asking the same model
    the same thing again would raise it again)."""
    if isinstance(exc, BackendError):
        return exc
    return BackendError("fatal", f"local generation failed: {type(exc).__name__}: {exc}")


def _reply(gen: Generation) -> RawReply:
    return RawReply(
        content=gen.text,
        input_tokens=len(gen.prompt_ids),
        output_tokens=len(gen.token_ids),
        cached_tokens=gen.cached_tokens,
        finish_reason="stop" if gen.finished else "length",
    )


def _settle(future: asyncio.Future[RawReply], outcome: RawReply | Exception) -> None:
    if future.done():
        return
    if isinstance(outcome, Exception):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
