"""Typed configuration of one sandbox dialogue, and the bundle of role models it runs with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empathos.epm import EPMConfig, PresetName
from empathos.errors import ConfigError
from empathos.llm import ChatModel

__all__ = ["DirectorMode", "RewardKind", "Roles", "SandboxConfig", "model_name"]

DirectorMode = Literal["model", "rules"]
RewardKind = Literal["distance", "delta_e", "sage_emotion", "sage_outcome"]


class SandboxConfig(BaseModel):
    """Everything that shapes one dialogue besides the scenario and the role models. Frozen.

    The EPM settings are a preset plus the overrides set here (``None`` keeps the preset's
    value); :meth:`epm` builds the effective :class:`~empathos.epm.EPMConfig`, which goes
    into every record so the dialogue can be re-scored.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    preset: PresetName = Field(default="reference", description="EPM preset: reference or paper.")
    alpha: float | None = Field(default=None, gt=0, description="Override of the EPM alpha.")
    min_turns: int | None = Field(default=None, ge=0, description="Override of min_turns.")
    max_turns: int | None = Field(default=None, ge=1, description="Override of max_turns.")
    eval_every: int | None = Field(
        default=None, ge=1, description="Override of K: the judge rates every K turns."
    )
    unscored_share_limit: float | None = Field(
        default=None, ge=0, le=1, description="Override of the unscored share that means error."
    )
    language: Literal["zh", "en"] | None = Field(
        default=None, description="Prompt language; None uses the scenario's language."
    )
    system_prompt: str = Field(
        default="default",
        description="System prompt of the model under test: 'default' (the companion prompt), "
        "'none' (the model's own behaviour) or the path of a text file.",
    )
    director: DirectorMode = Field(
        default="model",
        description="'model': the director model chooses by tool call (rules on failure); "
        "'rules': the rule-based director only.",
    )
    reward: RewardKind = Field(
        default="distance",
        description="Environment reward: 'distance' (decrease of the half-space distance), "
        "'delta_e' (the energy increment), or SAGE's emotion (sage_data needed): "
        "'sage_emotion' (its change / 100 since the last evaluation) or 'sage_outcome' (the "
        "final emotion / 100 when the dialogue ends, 0 before).",
    )
    sage_data: str | None = Field(
        default=None,
        description="Your copy of SAGE (a clone of Tencent/digitalhuman or its SAGE folder), "
        "for the sage_* rewards: its analyser prompt asks the user role for the change.",
    )
    reveal_every: int = Field(
        default=3, ge=1, description="Rule-based director: release the next stage every N turns."
    )
    on_empty: Literal["reply", "error"] = Field(
        default="reply",
        description="A reply of the model under test without text (null content, a blank "
        "one, a reasoning model out of tokens): 'reply' records it as an empty reply that the "
        "judge rates and the score counts; 'error' ends the dialogue as error.",
    )
    judge_failures_limit: int = Field(
        default=3,
        ge=1,
        description="After this many consecutive evaluations the judge could not rate (its "
        "call failed after retries and re-asks, or its ratings were unusable) the dialogue "
        "ends as error at once, its reason quoting the judge's last reply.",
    )
    open_with_topic: bool = Field(
        default=True,
        description="Turn 1's user line is the persona's chat topic verbatim (no model call).",
    )

    def model_post_init(self, context: object, /) -> None:
        """A SAGE reward needs the user's copy of SAGE."""
        if self.reward.startswith("sage_") and not self.sage_data:
            raise ConfigError(f"reward {self.reward} needs sage_data (your copy of SAGE)",
                              field="sandbox.sage_data")  # fmt: skip

    def epm(self) -> EPMConfig:
        """The effective EPM configuration: the preset with this config's overrides."""
        names = ("alpha", "min_turns", "max_turns", "eval_every", "unscored_share_limit")
        overrides = {n: getattr(self, n) for n in names if getattr(self, n) is not None}
        try:
            return EPMConfig.preset(self.preset, **overrides)
        except ValidationError as exc:  # the message, not pydantic's link to its docs
            first = exc.errors(include_url=False)[0]
            problem = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(problem, field="sandbox") from None


@dataclass(frozen=True)
class Roles:
    """The role models of a dialogue. ``director`` may be None when the director is 'rules';
    ``tested`` may be None when the replies come from outside (the environment API)."""

    user: ChatModel
    judge: ChatModel
    director: ChatModel | None = None
    tested: ChatModel | None = None

    def names(self) -> dict[str, str]:
        """Model name of each role present (the director reads 'rules' when absent)."""
        out = {"user": model_name(self.user), "judge": model_name(self.judge)}
        out["director"] = model_name(self.director) if self.director is not None else "rules"
        if self.tested is not None:
            out["tested"] = model_name(self.tested)
        return out


def model_name(model: ChatModel) -> str:
    """The model id behind a ChatModel (``config.model`` of a ModelClient), else its role."""
    config = getattr(model, "config", None)
    name = getattr(config, "model", None)
    return name if isinstance(name, str) else model.role
