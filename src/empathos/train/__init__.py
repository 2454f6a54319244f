"""The causal-LM trainer: MAPO on a local Hugging Face model with the sandbox as environment.

Modules: ``config`` (the typed train config), ``rollout`` (batched rollouts in
:class:`~empathos.sandbox.EmpathyEnv`, token ids and log-probs recorded), ``update`` (advantages
by registry name, token broadcast, PPO clip loss), ``trainer`` (the loop, evaluation,
checkpoints, resume), ``toy`` (scripted roles rewarding one observable behaviour, for the CPU
smoke run and tests). See docs/train.md.
"""

from empathos.train import toy
from empathos.train.config import TrainConfig, load_train_config
from empathos.train.trainer import Scorer, Trainer, TrainerCallbacks, sandbox_config

__all__ = [
    "Scorer",
    "TrainConfig",
    "Trainer",
    "TrainerCallbacks",
    "load_train_config",
    "sandbox_config",
    "toy",
]
