"""The causal-LM trainer: MAPO on a local Hugging Face model with the sandbox as environment.

Modules: ``config`` (the typed train config), ``policy`` (the policy's training side),
``parts`` (the policy, optimizer, schedule and reference, built in one step), ``rollout``
(batched rollouts in :class:`~empathos.sandbox.EmpathyEnv`, token ids and log-probs recorded),
``update`` (advantages by registry name, token broadcast, old log-probs recomputed, PPO clip
loss), ``checkpoint`` (checkpoints, random generators, resume), ``trainer`` (the loop and
evaluation), ``toy`` (scripted roles rewarding one observable behaviour, for the CPU
smoke run and tests). See docs/train.md.
"""

from empathos.train import toy
from empathos.train.config import TrainConfig, load_train_config
from empathos.train.trainer import (
    Scorer,
    Trainer,
    TrainerCallbacks,
    build_trainer,
    sandbox_config,
)

__all__ = [
    "Scorer",
    "TrainConfig",
    "Trainer",
    "TrainerCallbacks",
    "build_trainer",
    "load_train_config",
    "sandbox_config",
    "toy",
]
