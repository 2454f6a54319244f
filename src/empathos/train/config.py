"""The typed configuration of ``empathos train``: a YAML file, the environment, then flags.

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

from pydantic import BaseModel, ConfigDict, Field

from empathos.layered_config import load_layers, tree_from_dotted
from empathos.llm.roles import RoleEndpoint
from empathos.rl.batch import AdvantageConfig
from empathos.rl.loss import PPOLossConfig

__all__ = [
    "EvalSettings",
    "LoraConfig",
    "PolicyConfig",
    "RolloutSettings",
    "TrainConfig",
    "load_train_config",
]

KLMode = Literal["none", "loss", "reward"]
RewardName = Literal["distance", "delta_e", "potential", "sage_emotion", "sage_outcome"]


class LoraConfig(BaseModel):
    """A LoRA adapter to train (peft)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    r: int = Field(16, ge=1, description="Rank.")
    alpha: int = Field(32, ge=1, description="Scale numerator (lora_alpha).")
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description="Dropout on the adapter input.")
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"],
        description="Module names wrapped by the adapter.",
    )


class PolicyConfig(BaseModel):
    """The model being trained."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

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

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

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
    reward: RewardName = Field(
        "distance",
        description="Per-turn reward: from the EPM (distance, delta_e, potential) or SAGE's "
        "emotion (sage_emotion: its change per turn; sage_outcome: the final emotion).",
    )
    sage_data: str | None = Field(None, description="Your copy of SAGE, for the sage_* rewards.")


class EvalSettings(BaseModel):
    """Held-out evaluation: same sandbox, other scenarios, fixed sampling seed."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

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

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    out: Path = Field(Path("runs/train"), description="Run directory.")
    seed: int = Field(0, description="Seed of data order, sampling and initialisation.")
    steps: int = Field(100, ge=1, description="Policy updates (rollout batches).")
    policy: PolicyConfig = Field(default_factory=PolicyConfig, description="The policy.")
    roles: dict[str, RoleEndpoint] = Field(
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


#: The flag of ``empathos train`` that sets each dotted field (for error messages).
TRAIN_FLAGS = {
    "policy.path": "--policy",
    "rollout.scenarios_per_step": "--scenarios-per-step",
    "rollout.rollouts_per_scenario": "--rollouts",
    "rollout.max_turns": "--max-turns",
    "rollout.max_new_tokens": "--max-new-tokens",
    "eval.every": "--eval-every",
}
ENV_PREFIX = "EMPATHOS_TRAIN_"


def load_train_config(
    path: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> TrainConfig:
    """The config from the YAML file, then ``EMPATHOS_TRAIN_<FIELD>`` variables (nested with
    ``__``), then ``overrides`` (dotted field -> value, None: not given; the CLI's flags) on
    top (:mod:`empathos.layered_config`). One :class:`ConfigError` naming the flag, variable
    or file and field on bad input."""
    layers = load_layers(
        TrainConfig,
        path=path,
        env_prefix=ENV_PREFIX,
        environ=environ,
        flags=tree_from_dotted(overrides or {}),
        flag_names=TRAIN_FLAGS,
    )
    config = layers.validate(TrainConfig)
    from empathos.rl.advantages import estimator_names

    if config.estimator not in estimator_names():
        names = ", ".join(sorted(estimator_names()))
        raise layers.error("estimator", f"unknown estimator {config.estimator!r}; valid: {names}")
    for role in config.roles:
        if role not in ("user", "judge", "director"):
            raise layers.error(
                f"roles.{role}", f"unknown role {role!r}; valid: user, judge, director"
            )
    if config.rollout.min_turns > config.rollout.max_turns:
        raise layers.error(
            "rollout.min_turns",
            f"min_turns ({config.rollout.min_turns}) is above max_turns "
            f"({config.rollout.max_turns})",
        )
    return config
