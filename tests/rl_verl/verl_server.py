"""verl's server client in front of a real model in this process (tests only).

:class:`TransformersServer` is verl's own ``LLMServerClient``: its ``generate`` (the one call
verl's agent loops make) is verl's, which sets ``min_global_steps`` / ``max_global_steps`` from
the server's reply. Only the two Ray hops are local: the load balancer's acquire / release, and
the replica, :class:`Replica`, which samples from the bundled SmolLM2-135M with transformers
where verl would run vLLM or SGLang, and replies as verl 0.9.1's vLLM server does: verl's
``TokenOutput`` with the token ids, their log-probabilities, ``num_preempted`` and
``extra_fields`` ``{"global_steps": <the weights' version>, "num_cached_tokens": ...}``. The
version moves every ``bump_every`` calls, as a weight update between turns would, so a dialogue
can start on one version and end on another. Every call is logged.
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
    """One generate call: the request, the prompt it got, the tokens it returned, the
    weights' version it ran on."""

    request_id: str
    prompt_ids: list[int]
    token_ids: list[int]
    max_tokens: int
    global_steps: int


class Replica:
    """The rollout server: the bundled model, its weights' version (``global_steps``)."""

    def __init__(self, policy: LocalPolicy, global_steps: int, bump_every: int) -> None:
        self.policy = policy
        self.global_steps = global_steps
        self.bump_every = bump_every
        self.calls: list[Call] = []

    async def generate(
        self, sticky_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any]
    ) -> TokenOutput:
        """Sampling is seeded by the rollout's sticky request id and the prompt length, so a
        rollout's turns are reproducible and the rollouts of one scenario differ."""
        max_tokens = int(sampling_params["max_tokens"])
        torch.manual_seed(zlib.crc32(f"{sticky_id}/{len(prompt_ids)}".encode()))
        (gen,) = self.policy.generate(
            [list(prompt_ids)],
            max_new_tokens=max_tokens,
            temperature=float(sampling_params.get("temperature", 1.0)),
            top_p=float(sampling_params.get("top_p", 1.0)),
        )
        step = self.global_steps
        self.calls.append(Call(sticky_id, list(prompt_ids), list(gen.token_ids), max_tokens, step))
        if len(self.calls) % self.bump_every == 0:
            self.global_steps += 1
        logprobs = gen.logprobs if sampling_params.get("logprobs") else None
        return TokenOutput(
            token_ids=gen.token_ids,
            log_probs=logprobs,
            stop_reason="completed",
            num_preempted=0,
            extra_fields={"global_steps": step, "num_cached_tokens": 0},
        )


class _Method:
    """``handle.generate.remote(...)``, as on a Ray actor handle, for the rollout's request."""

    def __init__(self, replica: Replica, sticky_id: str) -> None:
        self.replica, self.sticky_id = replica, sticky_id

    def remote(self, *, request_id: str, prompt_ids: list[int], sampling_params: dict[str, Any],
               **_: Any) -> Any:  # fmt: skip
        del request_id  # verl sends a fresh id per turn; the rollout's own seeds the sampling
        return self.replica.generate(self.sticky_id, prompt_ids=prompt_ids,
                                     sampling_params=sampling_params)  # fmt: skip


class _Handle:
    def __init__(self, replica: Replica, sticky_id: str) -> None:
        self.generate = _Method(replica, sticky_id)


class TransformersServer(LLMServerClient):  # type: ignore[misc]  # verl is untyped
    """See the module docstring."""

    def __init__(
        self, config: Any, policy: LocalPolicy, global_steps: int = 1, bump_every: int = 5
    ) -> None:
        super().__init__(config, load_balancer_handle=None)
        self.replica = Replica(policy, global_steps, bump_every)

    @property
    def calls(self) -> list[Call]:
        return self.replica.calls

    async def _acquire_server(self, request_id: str, **_: Any) -> tuple[str, Any]:
        return "local", _Handle(self.replica, request_id)

    def _release_server(self, server_id: str, request_id: str | None = None) -> None:
        del server_id, request_id  # the load balancer's count of requests in flight
