"""verl's server-manager interface served by a real model in this process (tests only).

:class:`TransformersServer` is a ``verl.workers.rollout.llm_server.LLMServerClient`` whose
``generate`` (the one call verl's agent loops make) samples from the bundled SmolLM2-135M with
transformers, where verl would call a vLLM or SGLang replica. It returns verl's ``TokenOutput``
(token ids and their log-probabilities) and logs every call.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

import torch
from verl.workers.rollout.llm_server import LLMServerClient
from verl.workers.rollout.replica import TokenOutput

from empathos.llm.local import LocalPolicy


@dataclass(frozen=True)
class Call:
    """One generate call: the request, the prompt it got and the tokens it returned."""

    request_id: str
    prompt_ids: list[int]
    token_ids: list[int]
    max_tokens: int


class TransformersServer(LLMServerClient):  # type: ignore[misc]  # verl is untyped
    """See the module docstring. Sampling is seeded by the request id and the prompt length,
    so a rollout's turns are reproducible and the rollouts of one scenario differ."""

    def __init__(self, config: Any, policy: LocalPolicy) -> None:
        super().__init__(config, load_balancer_handle=None)
        self.policy = policy
        self.calls: list[Call] = []

    async def generate(  # type: ignore[override]
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **_: Any
    ) -> TokenOutput:
        max_tokens = int(sampling_params["max_tokens"])
        torch.manual_seed(zlib.crc32(f"{request_id}/{len(prompt_ids)}".encode()))
        (gen,) = self.policy.generate(
            [list(prompt_ids)],
            max_new_tokens=max_tokens,
            temperature=float(sampling_params.get("temperature", 1.0)),
            top_p=float(sampling_params.get("top_p", 1.0)),
        )
        self.calls.append(Call(request_id, list(prompt_ids), list(gen.token_ids), max_tokens))
        logprobs = gen.logprobs if sampling_params.get("logprobs") else None
        return TokenOutput(token_ids=gen.token_ids, log_probs=logprobs, stop_reason="completed")
