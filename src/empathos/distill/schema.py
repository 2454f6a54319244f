"""The shapes the distiller answers in: features (stage 1), persona and crisis (stage 2), variant.

Each is a pydantic model sent as the JSON schema of a structured call, so a constrained decoder
(the offline model) builds it field by field and an API model is validated and re-asked like
any other. Field descriptions are part of the schema the model sees.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from empathos.scenarios.model import (
    AxisPriority,
    Domain,
    EmpathyNeeds,
    Experience,
    Identity,
    StoryStage,
    Threshold,
    Traits,
)

__all__ = ["CrisisDraft", "DraftPriorities", "Features", "PersonaDraft", "VariantDraft"]


class _Draft(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Features(_Draft):
    """Stage 1: what a scrubbed support conversation tells about the person seeking support."""

    usable: Literal["yes", "no"] = Field(
        description="yes when there is a personal difficulty to build a scenario from; no for "
        "spam, tests, chit-chat or a conversation with no difficulty in it."
    )
    situation: str = Field(description="The situation in two or three sentences.")
    emotions: str = Field(description="The emotional layers: what shows, and what lies under it.")
    vent: str = Field(description="What the person wants to get off their chest.")
    support_sought: str = Field(description="The kind of support they are looking for.")
    irritants: str = Field(description="What irritates them or falls flat in the replies.")
    moved_by: str = Field(description="What reaches or moves them.")
    memories: str = Field(description="Cues of past memories and experiences they mention.")
    empathy_moments: str = Field(
        description="The moments that call for empathy, paraphrased (never quoted at length)."
    )
    domain: Domain = Field(description="The life domain the difficulty belongs to.")
    skip_reason: str = Field(default="", description="When usable is no: why, in a sentence.")


class DraftPriorities(_Draft):
    """How much each kind of empathy the person needs now, with a reason each."""

    cognitive: AxisPriority = Field(description="Need to be understood (C).")
    affective: AxisPriority = Field(description="Need to be felt with (A).")
    proactive: AxisPriority = Field(description="Need to be affirmed and empowered (P).")


class PersonaDraft(_Draft):
    """Stage 2a: a persona card anchored in the features (a new, fictional person)."""

    identity: Identity = Field(description="A new fictional name, gender and age.")
    traits: Traits = Field(description="Outer social persona and inner core.")
    needs: EmpathyNeeds = Field(description="What they vent, hope for, and are sensitive to.")
    priorities: DraftPriorities = Field(description="C/A/P priorities with rationales.")
    experience: Experience = Field(description="Long-term experiences and the present.")


class CrisisDraft(_Draft):
    """Stage 2b: the crisis event told as four stages, with outcome and interlude."""

    topic: str = Field(description="The person's opening line in the chat, in their voice.")
    trigger: str = Field(description="What just happened that makes them want to talk.")
    stages: list[StoryStage] = Field(
        min_length=4,
        max_length=4,
        description="Four stages: an evoked memory, reflection, self-examination, an emotional "
        "peak; each develops the same incident.",
    )
    outcome: str = Field(description="What the person wants from talking now.")
    interlude: str = Field(description="A related past memory the director can bring in.")


class VariantDraft(_Draft):
    """A guided variant of an existing scenario."""

    threshold: Threshold = Field(description="Empathy threshold of the variant.")
    persona: PersonaDraft = Field(description="The variant's persona card.")
    crisis: CrisisDraft = Field(description="The variant's crisis.")
