"""Offline generation, with concurrent plain chats batched into one ``generate`` call.

While the model is busy, requests queue up; the next run takes every queued plain chat with
the same sampling settings (up to ``max_batch``) as one left-padded batch, or one constrained
(structured / tool) request alone. Measured on 2 busy cores: 4 prompts x 32 tokens as one
batch ~1.8x the throughput of one by one (benchmarks/bench_llm.py). Runs happen in a worker
thread under the model's lock, so the event loop stays free.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

from empathos.llm.offline.decoder import constrained_reply, json_object_reply
from empathos.llm.offline.model import OfflineModel
from empathos.llm.offline.sampling import generate_extras, penalties_of
from empathos.llm.structured import tools_instruction, with_instruction
from empathos.llm.types import ChatRequest, RawReply

__all__ = ["DEFAULT_MAX_TOKENS", "Batcher", "batcher_for", "generate_batch", "generate_one"]

DEFAULT_MAX_TOKENS = 256
_BATCHERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Batcher] = (
    weakref.WeakKeyDictionary()
)


def _plain_key(request: ChatRequest) -> tuple[object, ...] | None:
    """Requests with equal keys can share a batch; None: must run alone."""
    if (
        request.tools
        or request.response_schema is not None
        or request.json_mode
        or "seed" in request.params
    ):
        return None
    temperature = float(request.params.get("temperature", 0.0))
    top_p = float(request.params.get("top_p", 1.0))
    return temperature, top_p, *penalties_of(request), tuple(request.stop)


def _prompt(lm: OfflineModel, request: ChatRequest) -> list[int]:
    """The whole prompt (ContextLengthExceeded if it leaves no room for a reply)."""
    messages = request.messages
    if request.tools:
        messages = with_instruction(messages, tools_instruction(request.tools))
    return lm.prompt_ids([m.model_dump() for m in messages])


def _cap(lm: OfflineModel, request: ChatRequest, prompt: list[int]) -> int:
    """``max_tokens`` (default 256) clamped to the room the context leaves."""
    return lm.room(len(prompt), int(request.params.get("max_tokens", DEFAULT_MAX_TOKENS)))


def generate_one(
    lm: OfflineModel, request: ChatRequest, cancel: threading.Event | None = None
) -> RawReply:
    """One request: constrained if it has a schema, tools or JSON mode, else plain."""
    import torch

    if request.tools or request.response_schema is not None:
        with lm.lock, torch.inference_mode():
            return constrained_reply(lm, _prompt(lm, request), request)
    if request.json_mode:
        prompt = _prompt(lm, request)
        with lm.lock, torch.inference_mode():
            return json_object_reply(lm, prompt, _cap(lm, request, prompt), cancel)
    return generate_batch(lm, [request], None if cancel is None else [cancel])[0]


def generate_batch(
    lm: OfflineModel,
    requests: list[ChatRequest],
    cancel: list[threading.Event] | None = None,
) -> list[RawReply]:
    """Plain replies to requests sharing sampling settings, as one left-padded batch; a row
    whose ``cancel`` event is set stops at the next token."""
    import torch

    prompts = [_prompt(lm, r) for r in requests]
    caps = [_cap(lm, r, p) for r, p in zip(requests, prompts, strict=True)]
    eos = int(lm.tokenizer.eos_token_id)
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[eos] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    params = requests[0].params
    temperature = float(params.get("temperature", 0.0))
    kwargs: dict[str, Any] = {"max_new_tokens": max(caps), "do_sample": temperature > 0}
    if temperature > 0:
        kwargs["temperature"] = temperature
        kwargs["top_p"] = float(params.get("top_p", 1.0))
    kwargs.update(generate_extras(lm, requests, width, cancel))
    with lm.lock, torch.inference_mode():
        if "seed" in params:
            torch.manual_seed(int(params["seed"]))
        out = lm.model.generate(input_ids=ids, attention_mask=mask, pad_token_id=eos, **kwargs)
    replies = []
    for row, prompt, cap in zip(out[:, width:].tolist(), prompts, caps, strict=True):
        new = row[:cap]
        finished = eos in new
        if finished:
            new = new[: new.index(eos) + 1]
        replies.append(
            RawReply(
                content=lm.tokenizer.decode(new, skip_special_tokens=True).strip(),
                input_tokens=len(prompt),
                output_tokens=len(new),
                finish_reason="stop" if finished else "length",
            )
        )
    return replies


class Batcher:
    """Queues requests of one event loop and runs them in batches in a worker thread."""

    def __init__(self, lm: OfflineModel, max_batch: int = 8) -> None:
        self.lm = lm
        self.max_batch = max(1, max_batch)
        self.pending: list[tuple[ChatRequest, asyncio.Future[RawReply]]] = []
        self._cancel: dict[int, threading.Event] = {}  # by id(future): set once cancelled
        self.batches: list[int] = []  # sizes of the runs so far (for tests and benchmarks)
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, request: ChatRequest) -> RawReply:
        """Queue ``request`` and wait for its reply."""
        future: asyncio.Future[RawReply] = asyncio.get_running_loop().create_future()
        cancel = self._cancel[id(future)] = threading.Event()

        def done(f: asyncio.Future[RawReply]) -> None:
            if f.cancelled():  # the caller went away: its generation stops at the next token
                cancel.set()

        future.add_done_callback(done)
        self.pending.append((request, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        try:
            return await future
        finally:
            self._cancel.pop(id(future), None)

    def _take(self) -> list[tuple[ChatRequest, asyncio.Future[RawReply]]]:
        first = self.pending.pop(0)
        key = _plain_key(first[0])
        if key is None:
            return [first]
        batch, rest = [first], []
        for item in self.pending:
            if len(batch) < self.max_batch and _plain_key(item[0]) == key:
                batch.append(item)
            else:
                rest.append(item)
        self.pending = rest
        return batch

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let requests submitted in the same loop turn join the batch
        while self.pending:
            batch = [(r, f) for r, f in self._take() if not f.cancelled()]
            if not batch:
                continue
            requests = [r for r, _ in batch]
            events = [self._cancel.get(id(f)) or threading.Event() for _, f in batch]
            self.batches.append(len(batch))
            try:
                if len(batch) == 1:
                    one = await asyncio.to_thread(generate_one, self.lm, requests[0], events[0])
                    replies = [one]
                else:
                    replies = await asyncio.to_thread(generate_batch, self.lm, requests, events)
            except Exception as exc:  # handed to every waiting caller, who classifies it
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), reply in zip(batch, replies, strict=True):
                if not future.done():
                    future.set_result(reply)


def batcher_for(lm: OfflineModel, max_batch: int = 8) -> Batcher:
    """The running event loop's batcher for the offline model."""
    loop = asyncio.get_running_loop()
    batcher = _BATCHERS.get(loop)
    if batcher is None or batcher.lm is not lm:
        batcher = _BATCHERS[loop] = Batcher(lm, max_batch)
    return batcher
