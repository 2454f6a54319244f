"""Free text on the offline backend: anti-repetition defaults, echo detection and re-sampling."""

from __future__ import annotations

import pytest

from empathos.llm import EndpointConfig, Message, build_model
from empathos.llm.offline import OfflineModel, load_offline_model
from empathos.llm.offline.batcher import _plain_key
from empathos.llm.offline.sampling import (
    DEFAULT_NO_REPEAT_NGRAM,
    DEFAULT_REPETITION_PENALTY,
    ECHO_SPAN,
    copied_span,
    echo_tokens,
    generate_kwargs,
    message_tokens,
    resample_kwargs,
    trim_to_sentence,
)
from empathos.llm.types import ChatRequest
from empathos.sandbox.agents import call_record


def test_copied_span_finds_a_long_run_of_prompt_tokens_only() -> None:
    source = list(range(100, 120))
    assert copied_span([1, 2, *range(105, 113), 3], [[7], source]) == tuple(range(105, 113))
    assert copied_span([1, *range(105, 112), 3], [source]) is None  # 7 tokens: not an echo
    assert copied_span([*range(105, 113)], [source], span=9) is None
    assert copied_span([], [source]) is None


def test_trim_to_sentence_drops_a_reply_cut_mid_sentence() -> None:
    assert trim_to_sentence("It is fine. You can start again tonight. The jar") == (
        "It is fine. You can start again tonight."
    )
    assert (
        trim_to_sentence("一切都会好的。你可以重新开始。可是") == "一切都会好的。你可以重新开始。"
    )
    assert trim_to_sentence("no sentence end at all here") == "no sentence end at all here"
    assert trim_to_sentence("Hi. and then a very long tail without any end") == (
        "Hi. and then a very long tail without any end"
    )  # the cut would drop more than half


def test_defaults_and_overrides_reach_generate() -> None:
    kwargs = generate_kwargs({})
    assert kwargs == {
        "do_sample": False,
        "repetition_penalty": DEFAULT_REPETITION_PENALTY,
        "no_repeat_ngram_size": DEFAULT_NO_REPEAT_NGRAM,
    }
    off = generate_kwargs({"repetition_penalty": 1.0, "no_repeat_ngram": 0, "temperature": 0.5})
    assert off == {"do_sample": True, "temperature": 0.5, "top_p": 1.0}
    again = resample_kwargs({})
    assert again["do_sample"] and again["temperature"] > 0
    msgs = [Message(role="user", content="hi")]
    plain = ChatRequest(model="m", messages=msgs)
    other = ChatRequest(model="m", messages=msgs, params={"no_repeat_ngram": 4})
    assert _plain_key(plain) != _plain_key(other)  # different settings never share a batch


# A prompt that a 135M model copies when nothing stops it.
ECHO = [
    Message(
        role="user",
        content="Repeat this sentence exactly, word for word: the little red boat sailed "
        "slowly across the quiet lake while the old fisherman sang his favourite song.\n"
        "Repeat this sentence exactly, word for word: the little red boat sailed "
        "slowly across the quiet lake while the old fisherman sang his favourite song.",
    )
]


@pytest.fixture(scope="module")
def lm() -> OfflineModel:
    return load_offline_model()


def _echo_len(lm: OfflineModel, text: str) -> bool:
    tokens = echo_tokens(lm.tokenizer, text)
    return copied_span(tokens, message_tokens(lm.tokenizer, ECHO)) is not None


@pytest.mark.slow
async def test_an_echo_is_sampled_again_and_flagged(lm: OfflineModel) -> None:
    # without the anti-repetition settings the greedy reply copies the prompt
    raw = EndpointConfig(kind="offline", max_tokens=32, repetition_penalty=1.0, no_repeat_ngram=0)
    res = await build_model(raw, "user").chat(ECHO)
    assert res.record.flags[:1] == ["echo_resampled"], res.text
    assert ("echo" in res.record.flags) == _echo_len(lm, res.text)  # flagged iff still echoing
    assert res.record.output_tokens > 0 and res.record.input_tokens > 2 * 30  # both tries count
    entry = call_record(res.record, turn=2, prompt=None, messages=ECHO)
    assert entry.metadata["flags"] == res.record.flags
    # with the defaults (n-gram blocking covers the prompt too) the first reply does not copy
    res = await build_model(EndpointConfig(kind="offline", max_tokens=32), "user").chat(ECHO)
    assert res.record.flags == [] and not _echo_len(lm, res.text), res.text
    assert ECHO_SPAN == 8
