"""The offline backend with the real bundled model (loaded once per process)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import pytest
import torch
from pydantic import BaseModel, Field

from empathos.llm import EndpointConfig, ToolSpec, build_model
from empathos.llm.offline import OfflineModel, cache_dir, load_offline_model
from empathos.llm.offline.decoder import TorchDecoder
from empathos.llm.offline.model import _load

pytestmark = pytest.mark.slow


class Rating(BaseModel):
    level: Literal[-1, 0, 1, 2] = Field(description="How empathic the reply is.")
    empathic: bool = Field(description="Whether the reply is empathic at all.")
    score: int = Field(ge=0, le=100, description="Score out of 100.")
    reason: str = Field(max_length=120, description="One short sentence.")


class Ask(BaseModel):
    question: str = Field(description="The question to ask.")


class Close(BaseModel):
    outcome: Literal["resolved", "stuck"] = Field(description="How the dialogue ended.")


PROMPT = [{"role": "user", "content": "I failed my exam and I feel awful."}]


@pytest.fixture(scope="module")
def lm() -> OfflineModel:
    return load_offline_model()


@pytest.fixture
def model(lm: OfflineModel) -> Any:
    return build_model(EndpointConfig(kind="offline", max_tokens=24), role="judge")


async def test_plain_chat(model: Any) -> None:
    result = await model.chat(PROMPT)
    assert result.text.strip()
    rec = result.record
    assert rec.backend == "offline" and rec.input_tokens > 10 and 0 < rec.output_tokens <= 24


async def test_structured_is_valid_by_construction(model: Any) -> None:
    result = await model.structured(PROMPT, Rating)
    assert isinstance(result.value, Rating)
    assert result.record.reasks == 0 and not result.record.repaired
    assert json.loads(result.raw)["level"] in (-1, 0, 1, 2)


async def test_tool_call_is_one_of_the_tools(model: Any) -> None:
    tools = [ToolSpec("ask", "Ask a question.", Ask), ToolSpec("close", "End.", Close)]
    result = await model.tool_call(PROMPT, tools)
    assert result.call.name in ("ask", "close")
    assert isinstance(result.call.arguments, Ask | Close)


def _reference_logprob(lm: OfflineModel, prefix: list[int], option: list[int]) -> float:
    ids = torch.tensor([prefix + option])
    with torch.inference_mode():
        logp = torch.log_softmax(lm.model(input_ids=ids).logits[0].float(), dim=-1)
    return float(sum(logp[len(prefix) - 1 + i, tok] for i, tok in enumerate(option)))


def test_choose_ranks_by_likelihood_and_rolls_back(lm: OfflineModel) -> None:
    prompt = lm.prompt_ids([{"role": "user", "content": "Is the sky blue? yes or no"}])
    options = ['"yes"', '"no"', '"perhaps not"', '"blue sky"']
    with lm.lock, torch.inference_mode():
        decoder = TorchDecoder(lm, prompt)
        decoder.emit('{"answer": ')
        prefix = list(decoder.ids)
        best = decoder.choose(options)
        fresh = lm.model(input_ids=torch.tensor([decoder.ids])).logits[0, -1].float()
        assert torch.allclose(decoder.logits, fresh, atol=1e-3)  # the cache was rolled back
    toks = [lm.tokenizer.encode(o, add_special_tokens=False) for o in options]
    scores = [_reference_logprob(lm, prefix, t) for t in toks]
    assert best == max(range(len(options)), key=scores.__getitem__)
    assert decoder.ids == prefix + toks[best]


def test_converted_copy_is_cached_and_loads_the_same_weights(lm: OfflineModel) -> None:
    target = next(cache_dir().glob("smollm2-135m-instruct-f32-*"))
    assert (target / "model.safetensors").is_file()
    again = _load()
    assert again.source == "cache" and again.load_s < 10
    assert again.tokenizer.chat_template == lm.tokenizer.chat_template
    name, weight = next(iter(lm.model.state_dict().items()))
    assert torch.equal(again.model.state_dict()[name], weight)


async def test_generation_leaves_the_event_loop_free(model: Any) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    result = await model.chat(PROMPT, max_tokens=16)
    task.cancel()
    assert result.record.latency_s > 0.1
    assert ticks >= result.record.latency_s / 0.01 * 0.3


async def test_concurrent_chats_are_batched_with_the_same_greedy_text(
    lm: OfflineModel, model: Any
) -> None:
    from empathos.llm.offline.batcher import batcher_for

    prompts = [[{"role": "user", "content": t}] for t in ("I lost my job.", "I feel lonely.")]
    singles = [(await model.chat(p, max_tokens=12)).text for p in prompts]
    runs = len(batcher_for(lm).batches)
    rated, *chats = await asyncio.gather(
        model.structured(PROMPT, Rating), *(model.chat(p, max_tokens=12) for p in prompts)
    )
    assert isinstance(rated.value, Rating)
    assert [c.text for c in chats] == singles
    assert sorted(batcher_for(lm).batches[runs:]) == [1, 2]  # the schema call ran alone


def test_constrained_context_matches_the_json_and_strings_obey_the_cap(lm: OfflineModel) -> None:
    from empathos.llm.offline.constrained import build_json
    from empathos.llm.types import json_schema_of

    prompt = lm.prompt_ids(PROMPT)
    with lm.lock, torch.inference_mode():
        decoder = TorchDecoder(lm, prompt, string_cap=3)
        text = build_json(json_schema_of(Rating), decoder)
        written = lm.tokenizer.decode(decoder.ids[len(prompt) :])
    assert written == text  # what the model saw is exactly the JSON it produced
    reason = Rating.model_validate_json(text).reason
    assert len(lm.tokenizer.encode(reason, add_special_tokens=False)) <= 4
