"""The exact prefix cache (empathos.llm.offline.prefix_cache): its bound and choice of prefix
on small tensors, and reuse against no reuse on the real bundled model (greedy: the same
reply, token for token, plain, structured, tool call, JSON mode and batched)."""

from __future__ import annotations

from typing import Any, Literal

import pytest
import torch
from pydantic import BaseModel, Field

from empathos.llm import EndpointConfig, ToolSpec, build_model
from empathos.llm.offline import OfflineModel, load_offline_model
from empathos.llm.offline.batcher import generate_batch, generate_one
from empathos.llm.offline.prefix_cache import PrefixCache
from empathos.llm.server_wire import completion_body
from empathos.llm.types import ChatRequest, Message, RawReply

LAYERS, HEADS, DIM = 3, 2, 4


def _states(tokens: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Fake per-layer states whose values say which token they belong to."""
    t = torch.tensor(tokens, dtype=torch.float32)[None, None, :, None]
    return [(t.expand(1, HEADS, -1, DIM) + i, -t.expand(1, HEADS, -1, DIM)) for i in range(LAYERS)]


def _bytes(n_tokens: int) -> int:
    return LAYERS * 2 * HEADS * n_tokens * DIM * 4


def test_the_longest_shared_prefix_is_taken_and_the_last_token_is_always_computed() -> None:
    cache = PrefixCache(max_bytes=10**6)
    cache.store([1, 2, 3, 4], _states([1, 2, 3, 4]))
    cache.store([1, 2, 9, 9, 9, 9], _states([1, 2, 9, 9, 9, 9]))
    n, layers = cache.lookup([1, 2, 3, 4, 5, 6])
    assert n == 4 and layers is not None
    assert layers[1][0][0, 0, :, 0].tolist() == [2.0, 3.0, 4.0, 5.0]  # token + layer index
    n, _ = cache.lookup([1, 2, 3, 4])  # the whole prompt is kept: its last token is computed
    assert n == 3


def test_a_prompt_that_shares_nothing_is_computed_in_full() -> None:
    cache = PrefixCache(max_bytes=10**6)
    cache.store([1, 2, 3], _states([1, 2, 3]))
    assert cache.lookup([7, 1, 2, 3]) == (0, None)
    assert cache.hits == 0 and cache.lookups == 1


def test_memory_stays_under_the_bound_with_many_dialogues() -> None:
    bound = _bytes(200)
    cache = PrefixCache(max_bytes=bound)
    for dialogue in range(40):
        prompt = [1000 + dialogue]
        for turn in range(6):  # each turn's prompt extends the last one
            prompt = prompt + [turn] * 15
            cache.store(prompt, _states(prompt))
            assert cache.nbytes <= bound
            assert cache.nbytes == sum(e.nbytes for e in cache.entries.values())
    # the superseded turns were dropped and the oldest dialogues evicted: the newest is kept
    assert len(cache.entries) == 2
    assert cache.lookup([1039, *[0] * 15, 5])[0] == 16
    assert cache.lookup([1000, *[0] * 15, 5]) == (0, None)
    cache.store(list(range(300)), _states(list(range(300))))  # alone over the bound: not kept
    assert cache.nbytes <= bound and len(cache.entries) == 2


def test_a_hit_is_least_recently_used_last() -> None:
    cache = PrefixCache(max_bytes=_bytes(8))
    cache.store([1, 2, 3, 4], _states([1, 2, 3, 4]))
    cache.store([5, 6, 7, 8], _states([5, 6, 7, 8]))
    assert cache.lookup([1, 2, 3, 0])[0] == 3  # [1, 2, 3, 4] is now the most recent
    cache.store([9, 9], _states([9, 9]))
    assert cache.lookup([5, 6, 7, 0]) == (0, None)
    assert cache.lookup([1, 2, 3, 0])[0] == 3


def test_the_served_usage_counts_cached_prompt_tokens() -> None:
    body = completion_body(
        [RawReply(content="hi", input_tokens=40, cached_tokens=31)], "m", None, None
    )
    assert body["usage"]["prompt_tokens_details"] == {"cached_tokens": 31}


# -- the real model ---------------------------------------------------------------------------


class Verdict(BaseModel):
    kind: Literal["support", "advice", "question"] = Field(description="What the reply does.")
    reason: str = Field(description="One short sentence.")


class Ask(BaseModel):
    question: str = Field(description="The question to ask.")


SYSTEM = "You are a warm listener. Answer in one short sentence."
LINES = ["My dog ran away this morning.", "I searched the park for hours.", "Nobody has called."]


def _turns() -> list[list[Message]]:
    """A short dialogue's successive prompts, each extending the last."""
    history = [Message(role="system", content=SYSTEM)]
    prompts = []
    for i, line in enumerate(LINES):
        history = [*history, Message(role="user", content=line)]
        prompts.append(history)
        history = [*history, Message(role="assistant", content=f"I hear you ({i}).")]
    return prompts


@pytest.fixture(scope="module")
def lm() -> OfflineModel:
    return load_offline_model()


def _both(lm: OfflineModel, make: Any) -> tuple[list[RawReply], list[RawReply]]:
    kept = lm.prefix
    try:
        lm.prefix = PrefixCache(max_bytes=0)
        without = [make(messages) for messages in _turns()]
        lm.prefix = PrefixCache(max_bytes=2**26)
        with_reuse = [make(messages) for messages in _turns()]
    finally:
        lm.prefix = kept
    assert all(r.cached_tokens == 0 for r in without)
    assert with_reuse[0].cached_tokens == 0 and all(r.cached_tokens > 0 for r in with_reuse[1:])
    # the reused share of the last prompt is most of it
    assert with_reuse[-1].cached_tokens > 0.7 * with_reuse[-1].input_tokens
    return without, with_reuse


def _text(reply: RawReply) -> Any:
    return (reply.content, [(c.name, c.arguments) for c in reply.tool_calls], reply.output_tokens)


@pytest.mark.slow
def test_reuse_gives_the_same_greedy_plain_reply(lm: OfflineModel) -> None:
    def make(messages: list[Message]) -> RawReply:
        return generate_one(lm, ChatRequest(model="m", messages=messages, params={"max_tokens": 6}))

    without, with_reuse = _both(lm, make)
    assert [_text(r) for r in with_reuse] == [_text(r) for r in without]


@pytest.mark.slow
def test_reuse_gives_the_same_sampled_reply_for_a_fixed_seed(lm: OfflineModel) -> None:
    """Sampling draws from the same logits with the same random numbers either way."""

    def make(messages: list[Message]) -> RawReply:
        params = {"max_tokens": 8, "temperature": 1.3, "top_p": 0.95, "seed": 11}
        return generate_one(lm, ChatRequest(model="m", messages=messages, params=params))

    without, with_reuse = _both(lm, make)
    assert [_text(r) for r in with_reuse] == [_text(r) for r in without]

    # the seed matters: another seed samples another reply somewhere in the dialogue
    def other(messages: list[Message]) -> RawReply:
        params = {"max_tokens": 8, "temperature": 1.3, "top_p": 0.95, "seed": 12}
        return generate_one(lm, ChatRequest(model="m", messages=messages, params=params))

    assert [_text(other(m)) for m in _turns()] != [_text(r) for r in without]


@pytest.mark.slow
def test_reuse_gives_the_same_structured_tool_and_json_replies(lm: OfflineModel) -> None:
    schema = Verdict.model_json_schema()
    tools = [ToolSpec("ask", "Ask a question.", Ask).to_def()]

    def make(messages: list[Message]) -> list[RawReply]:
        shapes: list[dict[str, Any]] = [
            {"response_schema": schema, "schema_name": "Verdict"},
            {"tools": tools},
            {"json_mode": True},
        ]
        return [
            generate_one(
                lm, ChatRequest(model="m", messages=messages, params={"max_tokens": 5}, **shape)
            )
            for shape in shapes
        ]

    kept = lm.prefix
    try:
        lm.prefix = PrefixCache(max_bytes=0)
        without = [make(m) for m in _turns()[:2]]
        lm.prefix = PrefixCache(max_bytes=2**26)
        with_reuse = [make(m) for m in _turns()[:2]]
    finally:
        lm.prefix = kept
    assert [[_text(r) for r in turn] for turn in with_reuse] == [
        [_text(r) for r in turn] for turn in without
    ]
    assert all(r.cached_tokens > 0 for turn in with_reuse[1:] for r in turn)
    assert all(r.cached_tokens == 0 for turn in without for r in turn)


@pytest.mark.slow
def test_reuse_inside_a_batch_gives_the_same_greedy_replies(lm: OfflineModel) -> None:
    """Rows of one left-padded batch, each with its own kept prefix (of another length)."""
    other = [Message(role="system", content="Be brief."), Message(role="user", content="Hi.")]

    def make(messages: list[Message]) -> RawReply:
        requests = [
            ChatRequest(model="m", messages=m, params={"max_tokens": 5}) for m in (messages, other)
        ]
        return generate_batch(lm, requests)[0]

    without, with_reuse = _both(lm, make)
    assert [_text(r) for r in with_reuse] == [_text(r) for r in without]


@pytest.mark.slow
async def test_the_call_record_counts_cached_prompt_tokens(lm: OfflineModel) -> None:
    model = build_model(EndpointConfig(kind="offline", max_tokens=3), role="user")
    turns = _turns()
    first = await model.chat(turns[0])
    second = await model.chat(turns[1])
    assert second.record.cached_input_tokens >= first.record.input_tokens - 1
    assert second.record.cached_input_tokens < second.record.input_tokens


@pytest.mark.slow
def test_a_local_policy_reuses_prefixes_exactly_until_its_weights_change() -> None:
    from empathos.llm.local import load_policy

    policy = load_policy()
    other = policy.prompt_ids([Message(role="user", content="Hi.")], 4)
    turns = [policy.prompt_ids(m, 4) for m in _turns()]

    def run() -> list[Any]:
        gens = [policy.generate([t, other], max_new_tokens=4, temperature=0)[0] for t in turns]
        return gens

    policy.prefix = PrefixCache(max_bytes=0)
    without = run()
    policy.prefix = PrefixCache(max_bytes=2**26)
    with_reuse = run()
    assert [g.token_ids for g in with_reuse] == [g.token_ids for g in without]
    for a, b in zip(with_reuse, without, strict=True):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-3)
    assert [g.cached_tokens > 0 for g in with_reuse] == [False, True, True]
    assert all(g.cached_tokens == 0 for g in without)
    weight = next(policy.model.parameters())
    weight.requires_grad_(True)  # as a trainer's weights: an in-place step empties the cache
    with torch.no_grad():
        weight.mul_(1.0)
    assert policy.generate([turns[-1]], max_new_tokens=1, temperature=0)[0].cached_tokens == 0
