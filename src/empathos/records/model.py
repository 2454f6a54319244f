"""The project's own dialogue record: one finished (or failed) dialogue, re-scorable.

Versioned by ``schema_version``; every field is described (the JSON schema in
``docs/records.md`` is generated from these models). No secrets: only model names, never
keys or base URLs with credentials.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from empathos.epm import EPMConfig, EPMPoint, Termination, TerminationKind, start_problem
from empathos.rubric import EMPATHY_RUBRIC, Indicator, Rubric

__all__ = [
    "SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "DialogueError",
    "DialogueRecord",
    "DirectorAction",
    "Evaluation",
    "IndicatorRating",
    "InitialDeficit",
    "ModelCallRecord",
    "Rejudged",
    "Turn",
]

#: The version written. Version 1 records (no empty-reply, error or score-warning fields) and
#: version 2 records (no cached prompt tokens, never re-judged) are read as they are: every
#: field added since has a default.
SCHEMA_VERSION: Literal[3] = 3
SUPPORTED_SCHEMA_VERSIONS = (1, 2, 3)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IndicatorRating(_Model):
    """The judge's rating of one indicator."""

    level: int | None = Field(description="Rated level; None when missing or invalid.")
    evidence: str = Field(default="", description="Quote the rating rests on ('0' if none).")
    reasoning: str = Field(default="", description="The judge's reasoning.")
    raw_level: str | None = Field(
        default=None, description="The level as found, when it could not be read (import only)."
    )

    @field_validator("level", mode="before")
    @classmethod
    def _whole_number(cls, value: object) -> object:
        """A level is a whole number or null: never a bool, a float, NaN or text."""
        if value is None or (isinstance(value, int | np.integer) and not isinstance(value, bool)):
            return value
        raise ValueError(f"a level must be a whole number or null, got {value!r:.40}")


class InitialDeficit(_Model):
    """The IEDR rating of the case and the initial deficit it yields."""

    ratings: dict[str, IndicatorRating] = Field(description="IEDR ratings by indicator key.")
    P0: tuple[float, ...] = Field(description="Initial deficit P_0, one value per axis.")


class Evaluation(_Model):
    """One judge evaluation (after every K turns) and the EPM state it led to."""

    turn: int = Field(ge=1, description="Turn index (1-based) of the evaluation.")
    scored: bool = Field(description="False when the judge failed after its retries.")
    ratings: dict[str, IndicatorRating] = Field(
        default_factory=dict, description="MDEP ratings by indicator key (may be partial)."
    )
    unscored_reason: str | None = Field(
        default=None, description="Why the evaluation is unscored (None when scored)."
    )
    state: EPMPoint = Field(description="EPM state after this evaluation.")
    flags: list[str] = Field(
        default_factory=list,
        description="Import notes: 'ratings_missing', 'ratings_partial', 'level_invalid:A.Neg'.",
    )


class DirectorAction(_Model):
    """What the director did at one turn."""

    turn: int = Field(ge=0, description="Turn the action belongs to.")
    action: str = Field(description="Action kind, e.g. 'guidance', 'reveal', 'stop'.")
    detail: str = Field(default="", description="Text of the action.")
    source: Literal["model", "rules"] | None = Field(
        default=None, description="Chosen by the director model or by the rule-based fallback."
    )
    honoured: bool = Field(
        default=True, description="False when the action was ignored (an early end request)."
    )
    note: str = Field(default="", description="Why the rules stood in, when they did.")


class Turn(_Model):
    """One exchange: the simulated user's line and the tested model's reply."""

    index: int = Field(ge=1, description="Turn index, 1-based.")
    user: str = Field(description="What the simulated user said.")
    assistant: str = Field(default="", description="The tested model's reply ('' if none).")
    finish_reason: str | None = Field(
        default=None,
        description="Why the tested model's generation stopped, as its endpoint said ('stop', "
        "'length', ...; None: not reported). Since version 2.",
    )
    empty_reply: bool = Field(
        default=False,
        description="The tested model returned no text (null or blank content); the judge "
        "rated the empty reply. Since version 2.",
    )


class ModelCallRecord(_Model):
    """One call to a language model. Every field but ``role`` is optional."""

    role: str = Field(description="Role of the caller: user, director, judge, tested, ...")
    model: str | None = Field(default=None, description="Model id at the endpoint.")
    turn: int | None = Field(default=None, description="Turn the call belongs to.")
    latency_s: float | None = Field(default=None, ge=0, description="Wall time in seconds.")
    prompt_tokens: int | None = Field(default=None, ge=0, description="Input tokens.")
    cached_prompt_tokens: int | None = Field(
        default=None,
        ge=0,
        description="Of the input tokens, those the server served from its prefix cache, as "
        "it reported them (usage.prompt_tokens_details.cached_tokens or its equivalents); "
        "None: not recorded. Since version 3.",
    )
    completion_tokens: int | None = Field(default=None, ge=0, description="Output tokens.")
    retries: int | None = Field(default=None, ge=0, description="Retries before the answer.")
    cost_usd: float | None = Field(default=None, ge=0, description="Cost in US dollars.")
    cache_hit: bool | None = Field(default=None, description="Answered from the cache.")
    template_id: str | None = Field(default=None, description="Prompt template id.")
    template_version: str | None = Field(default=None, description="Prompt template version.")
    error: str | None = Field(default=None, description="Error class and message, if it failed.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Anything else.")


class DialogueError(_Model):
    """An exception that ended a dialogue from outside the model calls (a bug)."""

    type: str = Field(description="Exception class, e.g. 'ModuleNotFoundError'.")
    message: str = Field(description="The exception's message.")
    traceback: str = Field(default="", description="Where it was raised (the last frames).")


class Rejudged(_Model):
    """Where a re-judged record comes from (``empathos rejudge``): the dialogue is the
    original's; the ratings, the EPM trajectory and the termination are another judge's."""

    judge: str = Field(description="Model id of the judge that re-rated the dialogue.")
    original_judge: str | None = Field(
        default=None, description="Model id of the judge that rated it first."
    )
    source: str = Field(description="The original record's file.")
    original_termination: Termination = Field(description="How the original trajectory ended.")
    p0: Literal["rerated", "kept"] = Field(
        description="'rerated': the new judge's IEDR gives P_0; 'kept': the original P_0 "
        "(stored with the scenario, or the run's IEDR when asked to keep it)."
    )


def _check_levels(
    ratings: dict[str, IndicatorRating], family: tuple[Indicator, ...], where: str
) -> None:
    """Every rating names an indicator of ``family`` and holds one of its levels (or None)."""
    allowed = {ind.key: ind.levels for ind in family}
    for key, rating in ratings.items():
        if key not in allowed:
            raise ValueError(f"{where}.{key}: unknown indicator (known: {', '.join(allowed)})")
        if rating.level is not None and rating.level not in allowed[key]:
            raise ValueError(
                f"{where}.{key}.level: {rating.level} is out of range "
                f"(allowed: {list(allowed[key])})"
            )


class DialogueRecord(_Model):
    """One dialogue, everything needed to re-score it and to replay its EPM trajectory."""

    schema_version: Literal[1, 2, 3] = Field(
        default=SCHEMA_VERSION, description="Version of this record format (1, 2 or 3)."
    )
    source: Literal["empathos", "empa-published"] = Field(
        default="empathos", description="Produced by empathos or imported from a published run."
    )
    scenario_id: str = Field(min_length=1, description="Id of the scenario (case).")
    scenario_hash: str | None = Field(default=None, description="Hash of the scenario content.")
    model: str | None = Field(default=None, description="Name of the tested model.")
    roles: dict[str, str] = Field(
        default_factory=dict, description="Model name of each other role (user, director, judge)."
    )
    # default_factory, not default: pydantic deep-copies a model given as default for every
    # record (~1.5 ms each); the rubric is frozen, so one shared instance is safe.
    rubric: Rubric = Field(
        default_factory=lambda: EMPATHY_RUBRIC,
        description="The rubric the judge rated on (default: the bundled EMPA rubric).",
    )
    epm_config: EPMConfig = Field(
        default_factory=EPMConfig, description="EPM settings the dialogue ran under."
    )
    iedr: InitialDeficit = Field(description="IEDR ratings and P_0.")
    initial_state: EPMPoint = Field(description="EPM state at turn 0.")
    turns: list[Turn] = Field(default_factory=list, description="The conversation, turn by turn.")
    evaluations: list[Evaluation] = Field(
        default_factory=list, description="Judge evaluations and EPM states, in turn order."
    )
    director: list[DirectorAction] = Field(
        default_factory=list, description="Director actions, in turn order."
    )
    model_calls: list[ModelCallRecord] = Field(
        default_factory=list, description="Every model call made for this dialogue."
    )
    total_turns: int = Field(ge=0, description="Number of turns the dialogue ran (T).")
    termination: Termination = Field(description="How the dialogue ended.")
    success: bool = Field(description="Whether the dialogue counts as a success.")
    n_unscored: int = Field(default=0, ge=0, description="Number of unscored evaluations.")
    created_at: str | None = Field(default=None, description="ISO timestamp of the dialogue.")
    error: DialogueError | None = Field(
        default=None,
        description="The exception that crashed the dialogue (termination 'error'); None when "
        "it ran to its end or a model call failed (see termination.reason). Since version 2.",
    )
    score_warning: str | None = Field(
        default=None,
        description="Why this dialogue's scores are not meaningful (sandbox roles on the "
        "bundled 135M model); None: no known reason. Since version 2.",
    )
    rejudged: Rejudged | None = Field(
        default=None,
        description="Set on a record written by `empathos rejudge`: the judge that re-rated "
        "the dialogue and where the original is. None: rated by the run's own judge. Since "
        "version 3.",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Free-form extras (import notes, run ids); no secrets."
    )

    @model_validator(mode="after")
    def _dimensions_match_rubric(self) -> DialogueRecord:
        dim = self.rubric.dim
        if len(self.iedr.P0) != dim or len(self.initial_state.P) != dim:
            raise ValueError(f"P_0 must have {dim} values (one per rubric axis)")
        for ev in self.evaluations:
            if len(ev.state.P) != dim or (ev.state.v is not None and len(ev.state.v) != dim):
                raise ValueError(f"evaluation at turn {ev.turn}: vectors must have {dim} values")
        _check_levels(self.iedr.ratings, self.rubric.iedr, "iedr.ratings")
        for i, ev in enumerate(self.evaluations):
            _check_levels(ev.ratings, self.rubric.mdep, f"evaluations[{i}].ratings")
        self._check_start()
        return self

    def _check_start(self) -> None:
        """A scored dialogue (any end but ``error``) must start far enough from the goal for
        its indices to be defined (:data:`empathos.epm.MIN_START_DISTANCE`)."""
        if self.termination.kind is TerminationKind.ERROR:
            return
        problem = start_problem(self.initial_state.P, self.epm_config.zone_eps)
        if problem is not None:
            where = "epj.P_0_initial_deficit" if self.source == "empa-published" else "iedr.P0"
            raise ValueError(f"{where}: {problem}; not scored")

    @property
    def trajectory(self) -> list[EPMPoint]:
        """All EPM points, turn 0 first."""
        return [self.initial_state, *(e.state for e in self.evaluations)]
