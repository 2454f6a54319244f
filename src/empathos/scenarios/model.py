"""The scenario model: a persona card, a hidden four-stage story, labels and an optional P_0.

A scenario is what the simulated user is (the persona card), what the director holds back
and releases stage by stage (the story), and how the scenario is stratified (labels). The
model is versioned (``schema_version``) and every field carries a description, so the JSON
schema in ``docs/scenarios.md`` is generated from it.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    ValidationInfo,
    field_validator,
    model_validator,
)

from empathos.canonical import canonical_digest
from empathos.epm import start_problem
from empathos.rubric import EMPATHY_RUBRIC
from empathos.rubric import p0_from_iedr as rubric_p0

__all__ = [
    "IEDR_INDICATORS",
    "SCHEMA_VERSION",
    "Axis",
    "AxisPriority",
    "DifficultyBand",
    "Domain",
    "EmpathyNeeds",
    "Experience",
    "Identity",
    "Labels",
    "Language",
    "PersonaCard",
    "Priorities",
    "PriorityLevel",
    "Provenance",
    "ResolvedLabels",
    "Scenario",
    "Story",
    "StoryStage",
    "Threshold",
    "Traits",
    "band_for_norm",
    "p0_from_iedr",
]

SCHEMA_VERSION = 1

Language = Literal["zh", "en"]


class Threshold(StrEnum):
    """How picky the person is about the empathy they receive."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class PriorityLevel(StrEnum):
    """How much the person needs one kind of empathy right now."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Axis(StrEnum):
    """The three axes of the latent state: cognitive (C), affective (A), proactive (P)."""

    COGNITIVE = "cognitive"
    AFFECTIVE = "affective"
    PROACTIVE = "proactive"

    @property
    def key(self) -> str:
        """The one-letter key: C, A or P."""
        return {"cognitive": "C", "affective": "A", "proactive": "P"}[self.value]


class Domain(StrEnum):
    """The six life domains used to stratify scenarios."""

    LIFE_CIRCUMSTANCES = "life_circumstances"
    HEALTH = "physical_mental_health"
    LEISURE = "leisure"
    VALUES = "values_beliefs"
    RELATIONSHIPS = "interpersonal_relations"
    CAREER = "career"


class DifficultyBand(StrEnum):
    """Difficulty by ||P_0||: easy <= 27 < medium <= 32 < hard <= 36 < very hard."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    VERY_HARD = "very_hard"


# IEDR indicator ids in axis order, from the empathy rubric (EPM_SPEC section 2).
IEDR_INDICATORS: tuple[str, ...] = tuple(ind.key for ind in EMPATHY_RUBRIC.iedr)


def p0_from_iedr(levels: dict[str, int]) -> tuple[float, float, float]:
    """P_0 = per-axis sum of the scores of the nine IEDR levels, as (C, A, P)."""
    vec = rubric_p0(levels, EMPATHY_RUBRIC)
    return (float(vec[0]), float(vec[1]), float(vec[2]))


def band_for_norm(norm: float) -> DifficultyBand:
    """The difficulty band of a scenario whose initial deficit has norm ``norm``."""
    if norm <= 27:
        return DifficultyBand.EASY
    if norm <= 32:
        return DifficultyBand.MEDIUM
    if norm <= 36:
        return DifficultyBand.HARD
    return DifficultyBand.VERY_HARD


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


class Identity(_Model):
    """Who the person is."""

    name: str = Field(min_length=1, description="The person's name.")
    gender: str = Field(description="Gender as the card states it (free text).")
    age: int | None = Field(default=None, ge=0, le=120, description="Age in years, if known.")


class Traits(_Model):
    """The outer social persona and the inner core, which may differ."""

    outer: str = Field(description="How the person comes across socially.")
    inner: str = Field(description="What the person is like underneath.")


class EmpathyNeeds(_Model):
    """What the person wants to talk about and what kind of response reaches them."""

    vent: str = Field(description="What the person wants to get off their chest.")
    hoped_for: str = Field(description="The empathic points they hope the other side will hit.")
    sensitivities: str = Field(description="What irritates them and what moves them.")


class AxisPriority(_Model):
    """How much one kind of empathy is needed right now, and why."""

    level: PriorityLevel = Field(description="high, medium or low.")
    rationale: str = Field(default="", description="Why this level, in the card's words.")


_ORDER_KEYS = {
    "c": Axis.COGNITIVE,
    "cognitive": Axis.COGNITIVE,
    "a": Axis.AFFECTIVE,
    "affective": Axis.AFFECTIVE,
    "p": Axis.PROACTIVE,
    "proactive": Axis.PROACTIVE,
}
_RANK_LEVELS = (PriorityLevel.HIGH, PriorityLevel.MEDIUM, PriorityLevel.LOW)


def _parse_order(text: str) -> list[Axis]:
    parts = [p.strip().lower() for p in re.split(r"[>＞,]", text) if p.strip()]
    axes = [_ORDER_KEYS.get(p) for p in parts]
    if len(axes) != 3 or None in axes or len(set(axes)) != 3:
        raise ValueError(
            f"priority order must name C, A and P once each, e.g. 'A > C > P'; got {text!r}"
        )
    return [a for a in axes if a is not None]


class Priorities(_Model):
    """Cognitive / affective / proactive priorities: levels with rationales, or an ordering.

    Accepts either a mapping ``{cognitive: {level, rationale}, ...}`` or an ordering string such
    as ``"A > C > P"`` (first = high, second = medium, third = low).
    """

    cognitive: AxisPriority = Field(description="Need to be understood (C).")
    affective: AxisPriority = Field(description="Need to be resonated with (A).")
    proactive: AxisPriority = Field(description="Need to be affirmed and empowered (P).")
    order: list[Axis] | None = Field(
        default=None, description="Ordering from most to least needed, when the card gives one."
    )

    @model_validator(mode="before")
    @classmethod
    def _from_order(cls, data: Any) -> Any:
        if isinstance(data, str):
            axes = _parse_order(data)
            out: dict[str, Any] = {"order": [a.value for a in axes]}
            for axis, level in zip(axes, _RANK_LEVELS, strict=True):
                out[axis.value] = {"level": level.value}
            return out
        return data

    def level(self, axis: Axis) -> PriorityLevel:
        """The priority level of ``axis``."""
        item: AxisPriority = getattr(self, axis.value)
        return item.level


class Experience(_Model):
    """The person's history and present, from which the director may surface memories."""

    childhood: str = Field(description="A formative childhood memory.")
    adolescence: str = Field(description="A formative memory from adolescence.")
    young_adulthood: str = Field(description="A formative memory from young adulthood.")
    growth_arc: str = Field(description="The implicit thread of growth running through it all.")
    current_situation: str = Field(description="Work, life and relationships right now.")
    main_goal: str = Field(description="What the person is working towards.")
    vision: str = Field(default="", description="What drives them: their picture of a good life.")


class PersonaCard(_Model):
    """Everything the user agent is told about who it plays (never the hidden story)."""

    identity: Identity = Field(description="Name, gender, age.")
    traits: Traits = Field(description="Outer social persona versus inner core.")
    threshold: Threshold = Field(description="Empathy threshold: low, medium or high.")
    needs: EmpathyNeeds = Field(description="What they want to vent and what reaches them.")
    priorities: Priorities = Field(description="C/A/P priorities with rationales.")
    experience: Experience = Field(description="Past and present.")
    topic: str = Field(min_length=1, description="The chat topic: the person's opening line.")
    trigger: str = Field(description="What just happened that makes them want to talk.")


class StoryStage(_Model):
    """One stage of the hidden story."""

    title: str = Field(min_length=1, description="Short title of the stage.")
    content: str = Field(min_length=1, description="What happens or surfaces in this stage.")


class Story(_Model):
    """The hidden story the director releases gradually."""

    stages: list[StoryStage] = Field(
        min_length=4,
        max_length=4,
        description="Exactly four stages (typically: evoked memory, reflection, "
        "self-examination, emotional eruption).",
    )
    outcome: str = Field(description="What the person wants from talking now.")
    interlude: str = Field(description="A related past memory the director can bring in.")


class Labels(_Model):
    """Stored stratification labels. Axis and band may be derived from P_0 instead."""

    domain: Domain | None = Field(default=None, description="Life domain (one of six).")
    language: Language = Field(description="Language of the scenario's text: zh or en.")
    dominant_axis: Axis | None = Field(
        default=None, description="Largest deficit axis of P_0, when stored explicitly."
    )
    difficulty: DifficultyBand | None = Field(
        default=None, description="Difficulty band, when stored explicitly."
    )
    distance: float | None = Field(
        default=None, ge=0, description="||P_0|| when it is known but P_0 itself is not."
    )


class ResolvedLabels(_Model):
    """The labels used for counting: stored values, else derived from P_0."""

    domain: Domain | None = Field(description="Life domain, if known.")
    dominant_axis: Axis | None = Field(description="Largest deficit axis, if known.")
    difficulty: DifficultyBand | None = Field(description="Difficulty band, if known.")
    threshold: Threshold = Field(description="Empathy threshold of the persona.")
    language: Language = Field(description="zh or en.")
    p0_norm: float | None = Field(description="||P_0||, if known.")


class Provenance(_Model):
    """Where a scenario came from. Not part of the content hash."""

    kind: Literal["own", "published", "builtin"] = Field(
        description="Which format it was read from."
    )
    path: str = Field(default="", description="The file it was read from.")
    line: int | None = Field(default=None, description="Line number within a JSONL file.")
    official: bool = Field(default=False, description="Listed in the published official case set.")
    licence: str = Field(default="", description="Licence of the text, when not the project's.")


_HASHES: dict[int, tuple[Scenario, str]] = {}


def _check_start(p0: tuple[float, float, float], info: ValidationInfo) -> None:
    """A scenario may not start at (or too near) the goal: see empathos.epm.start_problem."""
    problem = start_problem(p0)
    if problem is not None:
        name = info.data.get("id")
        raise ValueError(f"scenario {name!r}: {problem}" if name else problem)


class Scenario(_Model):
    """A persona card plus a hidden crisis story, with labels and an optional initial deficit."""

    schema_version: Literal[1] = Field(default=1, description="Version of this scenario format.")
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$", description="Stable identifier.")
    persona: PersonaCard = Field(description="The persona card.")
    story: Story = Field(description="The hidden four-stage story.")
    labels: Labels = Field(description="Stratification labels.")
    iedr: dict[str, int] | None = Field(
        default=None,
        description="Stored IEDR levels (0..3) keyed C.1..P.3, so P_0 is known without a judge.",
    )
    p0: tuple[FiniteFloat, FiniteFloat, FiniteFloat] | None = Field(
        default=None, description="Stored P_0 as (C, A, P); derived from `iedr` when absent."
    )
    raw_persona_prompt: str | None = Field(
        default=None,
        description="The verbatim persona card (published-layout mode); the user agent's "
        "card is rendered from the parsed fields, this text only when a field is missing.",
    )
    source: Provenance = Field(
        default_factory=lambda: Provenance(kind="own"), description="Provenance (not hashed)."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form extra data.")

    @field_validator("iedr")
    @classmethod
    def _check_iedr(
        cls, value: dict[str, int] | None, info: ValidationInfo
    ) -> dict[str, int] | None:
        if value is None:
            return None
        if set(value) != set(IEDR_INDICATORS):
            missing = sorted(set(IEDR_INDICATORS) - set(value))
            extra = sorted(set(value) - set(IEDR_INDICATORS))
            raise ValueError(f"needs exactly C.1..P.3; missing {missing}, unknown {extra}")
        for key, level in value.items():
            allowed = EMPATHY_RUBRIC.indicator(key).levels
            if level not in allowed:
                raise ValueError(f"{key}: level must be one of {list(allowed)}, got {level}")
        _check_start(p0_from_iedr(value), info)
        return {k: value[k] for k in IEDR_INDICATORS}

    @field_validator("p0")
    @classmethod
    def _check_stored_p0(
        cls, value: tuple[float, float, float] | None, info: ValidationInfo
    ) -> tuple[float, float, float] | None:
        if value is not None:
            _check_start(value, info)
        return value

    @model_validator(mode="after")
    def _check_p0(self) -> Scenario:
        if self.p0 is not None and self.iedr is not None:
            derived = p0_from_iedr(self.iedr)
            if any(abs(a - b) > 1e-6 for a, b in zip(self.p0, derived, strict=True)):
                raise ValueError(f"p0 {self.p0} disagrees with the stored iedr ({derived})")
        return self

    def initial_state(self) -> tuple[float, float, float] | None:
        """P_0 as (C, A, P): stored, else derived from the stored IEDR, else unknown."""
        if self.p0 is not None:
            return self.p0
        if self.iedr is not None:
            return p0_from_iedr(self.iedr)
        return None

    def resolved_labels(self) -> ResolvedLabels:
        """Labels for stratification: stored values first, then what P_0 implies."""
        p0 = self.initial_state()
        norm = math.sqrt(sum(x * x for x in p0)) if p0 is not None else self.labels.distance
        axis = self.labels.dominant_axis
        if axis is None and p0 is not None and min(p0) < 0:
            axis = list(Axis)[min(range(3), key=lambda i: p0[i])]
        band = self.labels.difficulty
        if band is None and norm is not None:
            band = band_for_norm(norm)
        return ResolvedLabels(
            domain=self.labels.domain,
            dominant_axis=axis,
            difficulty=band,
            threshold=self.persona.threshold,
            language=self.labels.language,
            p0_norm=norm,
        )

    def scenario_hash(self) -> str:
        """Stable sha256 of the content (everything except provenance), hex; computed once per
        (frozen) scenario object: every dialogue of a run records it."""
        hit = _HASHES.get(id(self))
        if hit is not None and hit[0] is self:
            return hit[1]
        data = self.model_dump(mode="json", exclude={"source"})
        digest = canonical_digest(data, compact=True)
        if len(_HASHES) >= 1024:
            _HASHES.clear()
        _HASHES[id(self)] = (self, digest)  # the scenario kept beside it: its id is not reused
        return digest
