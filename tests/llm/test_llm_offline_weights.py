"""The offline model's settings: weights ($EMPATHOS_OFFLINE_WEIGHTS; a bad value is a one-line
config error; bfloat16 keeps perplexity on a fixed text within 2% of float32 and still
answers without copying its prompt or repeating itself) and threads ($EMPATHOS_TORCH_THREADS;
generation on one model thread with them, every other thread on one)."""

from __future__ import annotations

import asyncio
import copy
import os
import threading

import pytest
import torch

from empathos.errors import ConfigError
from empathos.llm.offline import OfflineModel, load_offline_model
from empathos.llm.offline.batcher import generate_one
from empathos.llm.offline.model import (
    MAX_AUTO_THREADS,
    offline_settings,
    offline_weights,
    set_torch_threads,
    torch_threads,
)
from empathos.llm.offline.model_thread import on_model_thread, run_on_model_thread
from empathos.llm.offline.sampling import copied_span, echo_tokens, message_tokens
from empathos.llm.types import ChatRequest, Message

# Our own text: advice on listening, plain English the model has seen the like of.
TEXT = (
    "When a friend tells you that something went wrong, the first thing they need is to feel "
    "heard. Repeat back what you understood, name the feeling you notice, and ask what would "
    "help right now. Advice can wait until they ask for it; most people already know what "
    "they could do."
)
PPL_MARGIN = 0.02  # bfloat16 within 2% of float32's perplexity (measured: 43.74 vs 43.99)


def test_the_setting_is_read_and_a_bad_value_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EMPATHOS_OFFLINE_WEIGHTS", "BFloat16")
    monkeypatch.setenv("EMPATHOS_PREFIX_CACHE_MB", "64")
    monkeypatch.setenv("EMPATHOS_TORCH_THREADS", "1")
    assert offline_settings() == {
        "weights": "bfloat16",
        "torch_threads": "1",
        "prefix_cache_mib": "64",
    }
    monkeypatch.setenv("EMPATHOS_OFFLINE_WEIGHTS", "int3")
    with pytest.raises(ConfigError) as err:
        offline_weights()
    assert "EMPATHOS_OFFLINE_WEIGHTS" in str(err.value) and "'int3'" in str(err.value)
    monkeypatch.setenv("EMPATHOS_OFFLINE_WEIGHTS", "float32")
    monkeypatch.setenv("EMPATHOS_PREFIX_CACHE_MB", "lots")
    with pytest.raises(ConfigError, match="EMPATHOS_PREFIX_CACHE_MB"):
        offline_settings()


def test_threads_default_to_the_usable_cores_and_a_number_is_taken_as_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("EMPATHOS_TORCH_THREADS", raising=False)
    usable = len(os.sched_getaffinity(0))
    assert torch_threads() == max(1, min(usable, MAX_AUTO_THREADS))
    monkeypatch.setenv("EMPATHOS_TORCH_THREADS", " Auto ")
    assert torch_threads() == max(1, min(usable, MAX_AUTO_THREADS))
    monkeypatch.setenv("EMPATHOS_TORCH_THREADS", "3")
    assert torch_threads() == 3 and offline_settings()["torch_threads"] == "3"
    monkeypatch.setenv("EMPATHOS_TORCH_THREADS", "two")
    with pytest.raises(ConfigError) as err:
        torch_threads()
    assert "EMPATHOS_TORCH_THREADS" in str(err.value) and "'two'" in str(err.value)


def _perplexity(model: object, ids: torch.Tensor) -> float:
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0, :-1].float()  # type: ignore[operator]
    return float(torch.nn.functional.cross_entropy(logits, ids[0, 1:]).exp())


@pytest.mark.slow
def test_bfloat16_keeps_perplexity_and_sensible_replies() -> None:
    lm = load_offline_model()
    if next(lm.model.parameters()).dtype != torch.float32:
        pytest.skip("the process's model is not float32")
    half = OfflineModel(
        model=copy.deepcopy(lm.model).to(torch.bfloat16),
        tokenizer=lm.tokenizer,
        source="test",
        load_s=0.0,
    )
    ids = torch.tensor([lm.tokenizer.encode(TEXT)])
    full, reduced = _perplexity(lm.model, ids), _perplexity(half.model, ids)
    assert abs(reduced - full) <= PPL_MARGIN * full, (full, reduced)
    messages = [
        Message(role="system", content="You are a warm listener. Answer in one sentence."),
        Message(role="user", content="My sister forgot my birthday again and I feel invisible."),
    ]
    reply = generate_one(half, ChatRequest(model="m", messages=messages, params={"max_tokens": 16}))
    assert reply.content and "echo" not in reply.flags
    tokens = echo_tokens(lm.tokenizer, reply.content)
    assert copied_span(tokens, message_tokens(lm.tokenizer, messages)) is None
    grams = [tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)]
    assert len(grams) == len(set(grams))  # no 3-gram twice


def test_generation_runs_on_one_model_thread_with_the_threads_and_others_keep_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the model thread forms torch's OpenMP team (docs/models.md, "Threads")."""
    monkeypatch.setenv("EMPATHOS_TORCH_THREADS", "2")
    set_torch_threads()  # what loading does in the loading thread
    assert torch.get_num_threads() == 1

    def where() -> tuple[int, int, str]:
        return threading.get_ident(), torch.get_num_threads(), threading.current_thread().name

    first = run_on_model_thread(where)
    second = asyncio.run(on_model_thread(where))
    assert first == second  # the same long-lived thread, with the setting's threads
    assert first[0] != threading.get_ident() and first[1] == 2
    assert first[2].startswith("empathos-model")
    monkeypatch.setenv("EMPATHOS_TORCH_THREADS", "1")
    assert run_on_model_thread(where)[1] == 1  # read again for every job
    assert torch.get_num_threads() == 1  # the calling thread kept one
