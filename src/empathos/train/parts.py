"""The heavy parts of a training run, built in one step: the policy to train, its optimizer,
its learning-rate schedule and (full fine-tuning with a KL term) a frozen reference.

:func:`build_parts` seeds every generator from the config, loads the policy and builds the
rest; the :class:`~empathos.train.trainer.Trainer` takes them ready-made.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass

import numpy as np
import torch
from torch.optim.lr_scheduler import LRScheduler

from empathos.llm.local import CausalLM, LocalPolicy
from empathos.train.config import TrainConfig
from empathos.train.policy import LoraSettings, load_trainable_policy

__all__ = ["TrainParts", "build_parts", "seed_everything"]


@dataclass(frozen=True)
class TrainParts:
    """The policy, its optimizer and schedule, and the reference of the KL term (None: none,
    or the LoRA policy with its adapter switched off)."""

    policy: LocalPolicy
    optimizer: torch.optim.Optimizer
    scheduler: LRScheduler
    reference: CausalLM | None


def seed_everything(seed: int) -> None:
    """Seed torch (every device), numpy's and Python's global generators."""
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)


def build_parts(config: TrainConfig) -> TrainParts:
    """Seed, load the policy (a new LoRA adapter, or all weights), and build the rest.
    Bad input (the policy's path) raises a ConfigError naming the field."""
    from transformers import get_cosine_schedule_with_warmup

    seed_everything(config.seed)
    lora = config.policy.lora
    settings = (
        LoraSettings(
            r=lora.r,
            alpha=lora.alpha,
            dropout=lora.dropout,
            target_modules=tuple(lora.target_modules),
        )
        if lora is not None
        else None
    )
    policy = load_trainable_policy(
        config.policy.path,
        lora=settings,
        device=config.policy.device,
        bf16=config.policy.bf16,
        gradient_checkpointing=config.policy.gradient_checkpointing,
        where="policy.path",
    )
    reference: CausalLM | None = None
    if lora is None and config.kl != "none":
        reference = copy.deepcopy(policy.model)
        reference.requires_grad_(False)
        reference.eval()
    params = [p for p in policy.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    total = config.steps * config.epochs * config.minibatches
    scheduler: LRScheduler = get_cosine_schedule_with_warmup(
        optimizer, round(config.warmup * total), total
    )
    return TrainParts(policy=policy, optimizer=optimizer, scheduler=scheduler, reference=reference)
