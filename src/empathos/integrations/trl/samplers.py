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
  ``top_p``. Log-probs are taken at the sampling temperature (``log_softmax(logits / T)``), as
  TRL computes its own: TRL 1.16 compares them with the policy's in its off-policy mask
  (``off_policy_mask_threshold``). FSDP without vLLM is refused (:func:`refuse_unsharded_fsdp`).

Each generation round is agreed across processes by :func:`round_plan` (one gather): whether
any process still has a dialogue, and one reply cap, the largest any process asked for, since
an engine shared by several processes (vLLM's server; a colocated engine with tensor parallel
size > 1) takes its sampling settings from one of them. :func:`needs_lockstep`: whether every
process must also send the same number of prompts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from empathos.errors import ConfigError
from empathos.llm.local import LocalPolicy

__all__ = [
    "ReplySampler",
    "Sampled",
    "model_sampler",
    "needs_lockstep",
    "refuse_unsharded_fsdp",
    "round_plan",
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


def refuse_unsharded_fsdp(trainer: Any) -> None:
    """FSDP without vLLM is refused: the model sampler generates outside TRL's
    ``unwrap_model_for_generation`` / ``summon_full_params`` and without ``synced_gpus``, so
    processes whose dialogues need different numbers of forward passes would hang."""
    if getattr(trainer, "use_vllm", False):
        return
    kind = str(getattr(trainer.accelerator, "distributed_type", ""))
    if getattr(trainer, "is_fsdp_enabled", False) or kind.endswith("FSDP"):
        raise ConfigError(
            "FSDP needs use_vllm=True with empa_rollout_func: the model's own generate runs "
            "outside TRL's summon_full_params, and processes with unequal dialogues would hang",
            field="use_vllm",
        )


def model_sampler(trainer: Any) -> ReplySampler:
    """Replies from the trainer's model's ``generate`` (see the module docstring)."""
    refuse_unsharded_fsdp(trainer)
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
            logprob_temperature=float(args.temperature),
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
        if not prompts:  # no engine collective without lockstep (needs_lockstep)
            return []
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


def needs_lockstep(trainer: Any) -> bool:
    """Whether every process must send the same number of prompts in every round: vLLM's
    server (TRL hands back equal shares of the gathered outputs) and a colocated engine with
    tensor parallel size > 1 (the same, within its group). A colocated engine per process
    (tensor parallel 1) needs nothing: fillers there would be waste."""
    if trainer.accelerator.num_processes <= 1 or not getattr(trainer, "use_vllm", False):
        return False
    mode = getattr(trainer, "vllm_mode", "server")
    return mode != "colocate" or int(getattr(trainer, "vllm_tensor_parallel_size", 1)) > 1


def round_plan(trainer: Any, count: int, cap: int) -> tuple[bool, int]:
    """(whether any process still has an active dialogue, the round's reply cap): ``count``
    and ``cap`` are this process's; the cap agreed is the largest over every process. A
    collective on several processes (one gather): every process calls it each round, so
    vLLM's and DeepSpeed's collective calls stay in step."""
    accelerator = trainer.accelerator
    if accelerator.num_processes <= 1:
        return count > 0, cap
    mine = torch.tensor([[count, cap]], dtype=torch.int64, device=accelerator.device)
    every = accelerator.gather(mine).reshape(-1, 2)
    return bool(int(every[:, 0].sum().item()) > 0), int(every[:, 1].max().item())
