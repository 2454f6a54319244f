"""The typed configuration of ``empathos train``: a YAML file, then CLI flags on top.

Defaults follow MAPO_SPEC sections 3-4 (16 scenarios x 4 rollouts per step, gamma 0.85,
alpha 0.5, clip 0.2 / 0.28, dual clip 10, no KL, lr 1e-6 cosine with 5% warm-up, weight decay
0.1, gradient clip 1.0, 2 epochs, temperature 1.0, 15 max / 8 min turns). Deviations are
listed in docs/train.md (LoRA by default, so the default learning rate is LoRA's 1e-5; one
minibatch per epoch unless asked).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empathos.errors import ConfigError
from empathos.llm import EndpointConfig
from empathos.rl.batch import AdvantageConfig
from empathos.rl.loss import PPOLossConfig

__all__ = [
    "EvalSettings",
    "LoraConfig",
    "PolicyConfig",
    "RolloutSettings",
    "TrainConfig",
    "TrainRole",
    "load_train_config",
]

KLMode = Literal["none", "loss", "reward"]
RewardName = Literal["distance", "delta_e", "potential"]


class TrainRole(EndpointConfig):
    """A sandbox role's endpoint (see :class:`~empathos.llm.EndpointConfig`) plus a scripted
    reply handler named ``module:function`` or ``file.py:function`` (kind scripted only)."""

    handler: str | None = Field(None, description="kind 'scripted' only: the reply handler.")


class LoraConfig(BaseModel):
    """A LoRA adapter to train (peft)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    r: int = Field(16, ge=1, description="Rank.")
    alpha: int = Field(32, ge=1, description="Scale numerator (lora_alpha).")
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description="Dropout on the adapter input.")
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"],
        description="Module names wrapped by the adapter.",
    )


class PolicyConfig(BaseModel):
    """The model being trained."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str | None = Field(
        None, description="Hugging Face causal LM directory; None: the bundled SmolLM2-135M."
    )
    lora: LoraConfig | None = Field(
        default_factory=LoraConfig, description="LoRA adapter to train; null: full fine-tuning."
    )
    bf16: bool | None = Field(None, description="bf16 weights; None: on a GPU only.")
    device: str | None = Field(None, description="torch device; None: cuda if present, else cpu.")
    gradient_checkpointing: bool = Field(False, description="Recompute activations in backward.")


class RolloutSettings(BaseModel):
    """How rollouts are sampled and what the sandbox looks like."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenarios_per_step: int = Field(16, ge=1, description="Scenarios (groups) per step.")
    rollouts_per_scenario: int = Field(4, ge=1, description="G: dialogues per scenario.")
    max_turns: int = Field(15, ge=1, description="Turn cap of a training dialogue.")
    min_turns: int = Field(8, ge=0, description="No success or failure before this turn.")
    max_new_tokens: int = Field(256, ge=1, description="Cap on tokens per reply.")
    temperature: float = Field(1.0, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    generation_batch: int = Field(64, ge=1, description="Replies generated in one batch.")
    system_prompt: str = Field("default", description="'default', 'none' or a text file path.")
    director_mode: Literal["model", "rules"] = Field("rules", description="Director mode.")
    epm_preset: Literal["reference", "paper"] = Field("reference", description="EPM preset.")
    reward: RewardName = Field("distance", description="Per-turn reward from the EPM.")


class EvalSettings(BaseModel):
    """Held-out evaluation: same sandbox, other scenarios, fixed sampling seed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    every: int = Field(10, ge=1, description="Evaluate every N steps (and before step 1, at end).")
    cases: list[str] | None = Field(
        None, description="Held-out scenario ids; None: the last eval_fraction of the selection."
    )
    fraction: float = Field(0.2, gt=0.0, lt=1.0, description="Share held out when cases is None.")
    rollouts_per_scenario: int = Field(2, ge=1, description="Dialogues per held-out scenario.")
    seed: int = Field(1234, description="Sampling seed of every evaluation (paired before/after).")
    max_turns: int | None = Field(None, ge=1, description="None: the rollout max_turns.")
    temperature: float | None = Field(None, ge=0.0, description="None: the rollout temperature.")


class TrainConfig(BaseModel):
    """Everything that defines a training run (recorded in the run directory)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: Path = Field(Path("runs/train"), description="Run directory.")
    seed: int = Field(0, description="Seed of data order, sampling and initialisation.")
    steps: int = Field(100, ge=1, description="Policy updates (rollout batches).")
    policy: PolicyConfig = Field(default_factory=PolicyConfig, description="The policy.")
    roles: dict[str, TrainRole] = Field(
        default_factory=dict,
        description="Endpoints of user, judge and (director_mode model) director; a missing "
        "role runs on the bundled offline model.",
    )
    scenarios: str = Field("builtin", description="'builtin', a scenario file or directory.")
    cases: list[str] | None = Field(None, description="Training scenario ids; None: all.")
    language: Literal["en", "zh"] | None = Field(None, description="Keep one language only.")
    rollout: RolloutSettings = Field(default_factory=RolloutSettings, description="Rollouts.")
    estimator: str = Field("mapo_dialogue", description="Advantage estimator (registry name).")
    advantage: AdvantageConfig = Field(default_factory=AdvantageConfig, description="Estimator.")
    loss: PPOLossConfig = Field(default_factory=PPOLossConfig, description="PPO clip loss.")
    kl: KLMode = Field(
        "none", description="'none', 'loss' (k3 penalty) or 'reward' (KL-in-reward)."
    )
    kl_coef: float = Field(0.05, ge=0.0, description="KL coefficient when kl is not 'none'.")
    lr: float = Field(1e-5, gt=0.0, description="AdamW learning rate (peak).")
    warmup: float = Field(0.05, ge=0.0, lt=1.0, description="Warm-up share of the steps.")
    weight_decay: float = Field(0.1, ge=0.0, description="AdamW weight decay.")
    grad_clip: float = Field(1.0, gt=0.0, description="Gradient norm clip.")
    epochs: int = Field(2, ge=1, description="Passes over each rollout batch.")
    minibatches: int = Field(1, ge=1, description="Optimizer steps per pass.")
    micro_batch: int = Field(8, ge=1, description="Turn samples per forward (grad accumulation).")
    max_skipped: int = Field(3, ge=0, description="Stop after this many skipped steps in a row.")
    eval: EvalSettings = Field(default_factory=EvalSettings, description="Held-out evaluation.")
    checkpoint_every: int = Field(10, ge=1, description="Save a checkpoint every N steps.")
    tensorboard: bool = Field(True, description="Write TensorBoard events when installed.")


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=path) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {' '.join(str(exc).split())}", file=path) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping, got {type(data).__name__}", file=path)
    return data


def _set(tree: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


def load_train_config(
    path: Path | None = None, overrides: Mapping[str, Any] | None = None
) -> TrainConfig:
    """The config from the YAML file with ``overrides`` (dotted field -> value, None: not
    given) on top. One :class:`ConfigError` naming the file (or flag) and field on bad input."""
    data = _read_yaml(path) if path is not None else {}
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    for key, value in given.items():
        _set(data, key, value)
    try:
        config = TrainConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        where = f"--{loc.replace('_', '-').replace('.', '-')}" if loc in given else loc
        raise ConfigError(first["msg"], file=None if loc in given else path, field=where) from None
    from empathos.rl.advantages import estimator_names

    if config.estimator not in estimator_names():
        names = ", ".join(sorted(estimator_names()))
        raise ConfigError(
            f"unknown estimator {config.estimator!r}; valid: {names}",
            file=None if "estimator" in given else path,
            field="--estimator" if "estimator" in given else "estimator",
        )
    for role in config.roles:
        if role not in ("user", "judge", "director"):
            raise ConfigError(f"unknown role {role!r}; valid: user, judge, director",
                              file=path, field=f"roles.{role}")  # fmt: skip
    if config.rollout.min_turns > config.rollout.max_turns:
        raise ConfigError(
            f"min_turns ({config.rollout.min_turns}) is above max_turns "
            f"({config.rollout.max_turns})",
            file=path,
            field="rollout.min_turns",
        )
    return config
