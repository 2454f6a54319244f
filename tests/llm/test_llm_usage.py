"""Cached prompt tokens as the server reports them, and the cost of a call, on both HTTP paths
(the ``stack`` fixture: our direct HTTP/1.1 client and the openai SDK's own stack) against a
real loopback socket."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from empathos.llm import build_model
from empathos.llm.config import ModelPrice
from empathos.llm.testing import FaultServer, Step, completion_body

USER = [{"role": "user", "content": "hello"}]


def _usage_step(usage: dict[str, Any]) -> Step:
    body = completion_body("fine") | {"usage": usage}
    return Step("reply", body=json.dumps(body).encode())


# Each provider's way of saying "this many prompt tokens came from the prefix cache".
SHAPES = {
    "openai": {"prompt_tokens": 1200, "completion_tokens": 40,
               "prompt_tokens_details": {"cached_tokens": 1024}},
    "deepseek": {"prompt_tokens": 1200, "completion_tokens": 40, "prompt_cache_hit_tokens": 1024,
                 "prompt_cache_miss_tokens": 176},
    "anthropic": {"prompt_tokens": 1200, "completion_tokens": 40, "cache_read_input_tokens": 1024},
}  # fmt: skip


@pytest.mark.parametrize("shape", SHAPES)
async def test_cached_tokens_reach_the_call_record(
    stack: str, fault_server: FaultServer, make_config: Any, shape: str
) -> None:
    price = ModelPrice(input=2.0, cached_input=0.5, output=8.0)
    fault_server.script(_usage_step(SHAPES[shape]), _usage_step({"prompt_tokens": 10}))
    model = build_model(make_config(fault_server.url, price=price), role="judge")
    first = (await model.chat(USER)).record
    assert (first.input_tokens, first.cached_input_tokens, first.output_tokens) == (1200, 1024, 40)
    # 176 uncached at $2, 1024 cached at $0.50, 40 completion at $8 per million tokens
    assert first.cost_usd == pytest.approx((176 * 2.0 + 1024 * 0.5 + 40 * 8.0) / 1e6)
    second = (await model.chat(USER)).record  # a server that reports no cache
    assert second.cached_input_tokens == 0 and second.cost_usd == pytest.approx(20 / 1e6)
    await model.aclose()


class Verdict(BaseModel):
    label: Literal["yes", "no"] = Field(description="The verdict.")


async def test_cached_tokens_add_up_over_reasks_and_price_without_a_cached_price(
    stack: str, fault_server: FaultServer, make_config: Any
) -> None:
    def step(content: str, cached: int) -> Step:
        usage = {"prompt_tokens": 1200, "completion_tokens": 40,
                 "prompt_tokens_details": {"cached_tokens": cached}}  # fmt: skip
        return Step("reply", body=json.dumps(completion_body(content) | {"usage": usage}).encode())

    fault_server.script(step('{"label": "maybe"}', 1024), step('{"label": "yes"}', 1100))
    price = ModelPrice(input=3.0, output=15.0)  # no cached price: cached tokens at the input's
    model = build_model(make_config(fault_server.url, price=price), role="judge")
    result = await model.structured(USER, Verdict)
    rec = result.record
    assert result.value.label == "yes" and rec.reasks == 1
    assert (rec.input_tokens, rec.cached_input_tokens, rec.output_tokens) == (2400, 2124, 80)
    assert rec.cost_usd == pytest.approx((2400 * 3.0 + 80 * 15.0) / 1e6)
    await model.aclose()


def test_a_garbled_cached_count_is_zero_not_a_crash() -> None:
    from empathos.llm.completion import parse_completion

    for details in ({"cached_tokens": "many"}, {"cached_tokens": None}, "x", {"cached_tokens": -5}):
        body = completion_body("ok") | {
            "usage": {"prompt_tokens": 5, "prompt_tokens_details": details}
        }
        assert parse_completion(body).cached_tokens == 0
