"""The local policy's training side: a causal LM with a new or saved LoRA adapter to train,
and the forward pass that gives the log-probabilities the PPO loss needs.

Generation (rollouts) is the inference side's (:class:`empathos.llm.local.LocalPolicy`); the
trainer loads its policy here so that its weights can learn.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from empathos.llm.local import CausalLM, LocalPolicy, load_causal_lm, resolve_model_dir

__all__ = [
    "LoraSettings",
    "adapter_disabled",
    "load_trainable_policy",
    "sequence_logprobs",
]


@dataclass(frozen=True)
class LoraSettings:
    """A new LoRA adapter: rank, scale, dropout and the module names it wraps."""

    r: int = 16
    alpha: int = 32
    dropout: float = 0.0
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")


def load_trainable_policy(
    path: str | Path | None = None,
    *,
    lora: LoraSettings | None = None,
    adapter: str | Path | None = None,
    device: str | None = None,
    bf16: bool | None = None,
    gradient_checkpointing: bool = False,
    where: str = "policy",
) -> LocalPolicy:
    """Load a causal LM to train: with a new LoRA adapter (``lora``), a saved one to go on
    training (``adapter``, or a ``path`` that holds one), or all weights (neither: every
    weight trainable). ``gradient_checkpointing`` recomputes activations in the backward pass.

    ``path``, ``device`` and ``bf16`` as in :func:`empathos.llm.local.load_policy`. Bad input
    raises :class:`~empathos.errors.ConfigError` naming ``where``."""
    base, name, adapter_dir = resolve_model_dir(path, adapter, where)
    model, tokenizer, dev, dtype = load_causal_lm(base, device=device, bf16=bf16, where=where)
    if adapter_dir is None and lora is None:
        model.requires_grad_(True)
    if gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if adapter_dir is not None or lora is not None:
        from peft import LoraConfig, PeftModel, get_peft_model

        if adapter_dir is not None:
            model = PeftModel.from_pretrained(model, str(adapter_dir), is_trainable=True)
        elif lora is not None:
            cfg = LoraConfig(
                r=lora.r,
                lora_alpha=lora.alpha,
                lora_dropout=lora.dropout,
                target_modules=list(lora.target_modules),
                task_type="CAUSAL_LM",
            )
            model = get_peft_model(model, cfg)
        if gradient_checkpointing:  # the frozen base's outputs must carry gradient to LoRA
            model.enable_input_require_grads()
    return LocalPolicy(
        model=model,
        tokenizer=tokenizer,
        name=name,
        device=dev,
        dtype=dtype,
        lora=adapter_dir is not None or lora is not None,
    )


@contextlib.contextmanager
def adapter_disabled(model: CausalLM) -> Iterator[CausalLM]:
    """``model`` (a peft model) with its adapter switched off: the base model, as the
    reference of a LoRA policy."""
    disable = getattr(model, "disable_adapter", None)
    if disable is None:
        raise TypeError("the policy has no adapter to switch off (full fine-tuning needs a copy)")
    with disable():
        yield model


def sequence_logprobs(
    model: CausalLM,
    prompts: Sequence[Sequence[int]],
    responses: Sequence[Sequence[int]],
    *,
    pad_id: int,
    device: torch.device,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of each response token after its prompt, one forward pass.

    Rows are right-padded to the longest prompt + response. Returns ``logp`` (N, L) and the
    response mask (N, L) bool (True on response tokens; logp is 0 elsewhere), aligned so that
    position ``l`` holds the log-probability of token ``l`` of the packed row. Runs with
    gradient if the caller has it enabled.
    """
    rows = [list(p) + list(r) for p, r in zip(prompts, responses, strict=True)]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(rows), width), dtype=torch.long)
    resp = torch.zeros((len(rows), width), dtype=torch.bool)
    for i, (p, r) in enumerate(zip(prompts, responses, strict=True)):
        n = len(p) + len(r)
        ids[i, :n] = torch.tensor(rows[i])
        attn[i, :n] = 1
        resp[i, len(p) : n] = True
    ids, attn, resp = ids.to(device), attn.to(device), resp.to(device)
    # logits only where a response token is predicted (columns start-1 .. width-2): the
    # vocabulary projection and log-softmax of prompt positions would be thrown away
    start = max(1, min(len(p) for p in prompts))
    keep = width - start + 1
    out = model(input_ids=ids, attention_mask=attn, use_cache=False, logits_to_keep=keep)
    logp_next = torch.log_softmax(out.logits[:, :-1].float(), dim=-1)  # (N, width - start, V)
    tok = logp_next.gather(2, ids[:, start:, None])[..., 0]  # logp of token l at column l
    logp = torch.zeros((len(rows), width), dtype=tok.dtype, device=device)
    logp[:, start:] = tok
    return logp * resp, resp
