"""The offline model's weights setting ($EMPATHOS_OFFLINE_WEIGHTS): a bad value is a one-line
config error; bfloat16 keeps perplexity on a fixed text within 2% of float32 and still
answers without copying its prompt or repeating itself."""

from __future__ import annotations

import copy

import pytest
import torch

from empathos.errors import ConfigError
from empathos.llm.offline import OfflineModel, load_offline_model
from empathos.llm.offline.batcher import generate_one
from empathos.llm.offline.model import offline_settings, offline_weights
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
