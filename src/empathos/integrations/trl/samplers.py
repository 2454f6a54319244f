"""Where the policy's replies come from inside TRL: its vLLM engine, or the model's ``generate``.

A sampler takes the token ids of each active dialogue and a reply cap and returns, per
dialogue, the sampled reply ids and the sampling log-probability of each:

- :func:`vllm_sampler` (the trainer has ``use_vllm``): TRL's own ``VLLMGeneration`` (server
  or colocated engine, weights synchronised by TRL before the rollout), with the trainer's
  sampling settings; the reply cap replaces ``max_completion_length`` for the call (TRL's cap
  counts the whole dialogue). Log-probs are vLLM's (NaN where vLLM gives none: TRL neutralises
  those in its importance-sampling correction).
- :func:`model_sampler` (otherwise): the trainer's model (unwrapped from accelerate) through
  :class:`empathos.llm.local.LocalPolicy` ``generate``, at the trainer's ``temperature`` and
  ``top_p``. Log-probs are of the raw policy (temperature 1); TRL uses sampling log-probs only
  for its vLLM correction, and recomputes the old policy's when it needs them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from empathos.llm.local import LocalPolicy

__all__ = [
    "ReplySampler",
    "Sampled",
    "any_active",
    "model_sampler",
    "sampler_for",
    "trainer_tokenizer",
    "vllm_sampler",
]


@dataclass(frozen=True)
class Sampled:
    """One reply: its token ids and the sampling log-probability of each."""

    ids: list[int]
    logprobs: list[float]


class ReplySampler(Protocol):
    """``sampler(prompts, max_tokens) -> one Sampled per prompt``."""

    def __call__(self, prompts: Sequence[Sequence[int]], max_tokens: int, /) -> list[Sampled]: ...


def trainer_tokenizer(trainer: Any) -> Any:
    """The trainer's tokenizer (a processor's own tokenizer when it has one)."""
    processing = trainer.processing_class
    return getattr(processing, "tokenizer", processing)


def model_sampler(trainer: Any) -> ReplySampler:
    """Replies from the trainer's model's ``generate`` (see the module docstring)."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    param = next(model.parameters())
    policy = LocalPolicy(
        model=model,
        tokenizer=trainer_tokenizer(trainer),
        name="trl-policy",
        device=param.device,
        dtype=param.dtype,
        lora=hasattr(model, "peft_config"),
    )
    args = trainer.args

    def sample(prompts: Sequence[Sequence[int]], max_tokens: int) -> list[Sampled]:
        if not prompts:
            return []
        gens = policy.generate(
            prompts,
            max_new_tokens=max_tokens,
            temperature=float(args.temperature),
            top_p=float(args.top_p),
            batch_size=len(prompts),
        )
        return [Sampled(list(g.token_ids), list(g.logprobs)) for g in gens]

    return sample


def _first(entry: Any) -> float:
    value = entry[0] if isinstance(entry, list | tuple) else entry
    return math.nan if value is None else float(value)


def vllm_sampler(trainer: Any) -> ReplySampler:
    """Replies from TRL's vLLM engine (see the module docstring)."""
    engine = trainer.vllm_generation

    def sample(prompts: Sequence[Sequence[int]], max_tokens: int) -> list[Sampled]:
        saved = engine.max_completion_length
        engine.max_completion_length = max_tokens
        try:
            _, ids, logprobs, _ = engine.generate(
                prompts=[list(p) for p in prompts], images=None, num_generations=1
            )
        finally:
            engine.max_completion_length = saved
        return [
            Sampled([int(x) for x in row], [_first(e) for e in lps])
            for row, lps in zip(ids, logprobs, strict=True)
        ]

    return sample


def sampler_for(trainer: Any) -> ReplySampler:
    """TRL's vLLM engine when the trainer uses vLLM, else the model's ``generate``."""
    if getattr(trainer, "use_vllm", False):
        return vllm_sampler(trainer)
    return model_sampler(trainer)


def any_active(trainer: Any, count: int) -> bool:
    """Whether any process still has an active dialogue (collective on several processes:
    vLLM and DeepSpeed calls must be made by every process in each round)."""
    accelerator = trainer.accelerator
    if accelerator.num_processes <= 1:
        return count > 0
    total = accelerator.gather(torch.tensor([count], device=accelerator.device)).sum()
    return bool(int(total.item()) > 0)
