"""Offline generation, with concurrent plain chats batched into one ``generate`` call.

While the model is busy, requests queue up; the next run takes every queued plain chat with
the same sampling settings (up to ``max_batch``) as one left-padded batch, or one constrained
(structured / tool) request alone. Plain chats sample as :mod:`.sampling` says (repetition
penalty, n-gram blocking, one more try after an echo of the prompt). Measured on 2 busy
cores: 4 prompts x 32 tokens as one batch ~1.8x the throughput of one by one
(benchmarks/bench_llm.py). Runs happen on the model thread (:mod:`.model_thread`) under the
model's lock, so the event loop stays free.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

from empathos.llm.offline import sampling
from empathos.llm.offline.decoder import constrained_reply, json_object_reply
from empathos.llm.offline.extras import generate_extras, penalties_of
from empathos.llm.offline.model import OfflineModel
from empathos.llm.offline.model_thread import on_model_thread
from empathos.llm.offline.prefix_cache import batch_cache, remember_batch
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
    return (*sampling.batch_key(request.params), *penalties_of(request), tuple(request.stop))


def _prompt(lm: OfflineModel, request: ChatRequest) -> list[int]:
    """The whole prompt (ContextLengthExceeded if it leaves no room for a reply)."""
    messages = request.messages
    if request.tools:
        # arguments are constrained by their schemas: the prompt names the tools only
        messages = with_instruction(messages, tools_instruction(request.tools, schemas=False))
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


def _generate(
    lm: OfflineModel,
    requests: list[ChatRequest],
    prompts: list[list[int]],
    max_new: int,
    kwargs: dict[str, Any],
    seed: int | None,
    cancel: list[threading.Event] | None,
) -> tuple[list[list[int]], list[int]]:
    """The new tokens of each prompt, generated as one left-padded batch (with the requests'
    penalties, stop strings and cancel events: :mod:`.extras`), and each prompt's count of
    tokens taken from the model's prefix cache (:mod:`.prefix_cache`)."""
    import torch

    eos = int(lm.tokenizer.eos_token_id)
    width = max(len(p) for p in prompts)
    pads = [width - len(p) for p in prompts]
    ids = torch.tensor([[eos] * pad + p for pad, p in zip(pads, prompts, strict=True)])
    mask = torch.tensor([[0] * pad + [1] * len(p) for pad, p in zip(pads, prompts, strict=True)])
    kwargs = {**kwargs, **generate_extras(lm, requests, width, cancel)}
    with lm.lock, torch.inference_mode():
        cache, used = batch_cache(lm.prefix, prompts, width)
        if cache is not None:
            kwargs["cache"] = cache
        if seed is not None:
            torch.manual_seed(seed)
        out = lm.model.generate(
            input_ids=ids,
            attention_mask=mask,
            pad_token_id=eos,
            max_new_tokens=max_new,
            return_dict_in_generate=True,
            **kwargs,
        )
        remember_batch(lm.prefix, getattr(out, "cache", None), out.sequences, pads, width, [eos])
    rows: list[list[int]] = out.sequences[:, width:].tolist()
    return rows, used


def _reply(lm: OfflineModel, row: list[int], prompt: list[int], cap: int) -> RawReply:
    eos = int(lm.tokenizer.eos_token_id)
    new = row[:cap]
    finished = eos in new
    if finished:
        new = new[: new.index(eos) + 1]
    text = lm.tokenizer.decode(new, skip_special_tokens=True).strip()
    return RawReply(
        content=text if finished else sampling.trim_to_sentence(text),
        input_tokens=len(prompt),
        output_tokens=len(new),
        finish_reason="stop" if finished else "length",
    )


def _echoes(lm: OfflineModel, reply: RawReply, request: ChatRequest) -> bool:
    tokens = sampling.echo_tokens(lm.tokenizer, reply.content or "")
    sources = sampling.message_tokens(lm.tokenizer, request.messages)
    return sampling.copied_span(tokens, sources) is not None


def generate_batch(
    lm: OfflineModel,
    requests: list[ChatRequest],
    cancel: list[threading.Event] | None = None,
) -> list[RawReply]:
    """Plain replies to requests sharing sampling settings, as one left-padded batch; a row
    whose ``cancel`` event is set stops at the next token.

    A reply that copies a long span of its own messages is sampled once more (all such
    replies as one batch); the kept reply is flagged (see :mod:`.sampling`)."""
    prompts = [_prompt(lm, r) for r in requests]
    caps = [_cap(lm, r, p) for r, p in zip(requests, prompts, strict=True)]
    params = requests[0].params
    seed = int(params["seed"]) if "seed" in params else None
    kwargs = sampling.generate_kwargs(params)
    rows, used = _generate(lm, requests, prompts, max(caps), kwargs, seed, cancel)
    replies = [
        _reply(lm, row, prompt, cap).model_copy(update={"cached_tokens": n})
        for row, prompt, cap, n in zip(rows, prompts, caps, used, strict=True)
    ]
    echoed = [i for i, req in enumerate(requests) if _echoes(lm, replies[i], req)]
    if not echoed:
        return replies
    again, again_used = _generate(
        lm,
        [requests[i] for i in echoed],
        [prompts[i] for i in echoed],
        max(caps[i] for i in echoed),
        sampling.resample_kwargs(params),
        (seed or 0) + 1,
        None if cancel is None else [cancel[i] for i in echoed],
    )
    for i, row, n in zip(echoed, again, again_used, strict=True):
        first, second = replies[i], _reply(lm, row, prompts[i], caps[i])
        flags = ["echo_resampled", *(["echo"] if _echoes(lm, second, requests[i]) else [])]
        replies[i] = second.model_copy(
            update={
                "input_tokens": first.input_tokens + second.input_tokens,
                "output_tokens": first.output_tokens + second.output_tokens,
                "cached_tokens": first.cached_tokens + n,
                "flags": flags,
            }
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
                    one = await on_model_thread(generate_one, self.lm, requests[0], events[0])
                    replies = [one]
                else:
                    replies = await on_model_thread(generate_batch, self.lm, requests, events)
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
