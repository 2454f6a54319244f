"""The director's seven actions, as function-call tools with typed arguments.

The director chooses exactly one action per turn by calling one of these tools; it never
writes dialogue. Each argument model is also the record of the call (``action`` names it).
:data:`DIRECTOR_SPECS` is what the director agent offers the model: the LLM client sends their
wire form and validates the chosen call's arguments against the action's model; the
transitions (:mod:`empathos.sandbox.transitions`) consume the typed action.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from empathos.llm import ToolDef, ToolSpec

__all__ = [
    "DIRECTOR_SPECS",
    "DIRECTOR_TOOLS",
    "AdjustFocus",
    "ContinueAction",
    "DirectorAction",
    "EndConversation",
    "IntroduceTurningPoint",
    "MemoryPeriod",
    "Observe",
    "RevealMemory",
    "RevealStoryStage",
]

AxisName = Literal["cognitive", "affective", "proactive"]
MemoryPeriod = Literal["childhood", "adolescence", "young_adulthood", "current"]


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RevealStoryStage(_Action):
    """Release one stage of the hidden story to the user agent (re-revealing a stage from a
    new angle is allowed)."""

    action: Literal["reveal_story_stage"] = Field(
        default="reveal_story_stage", description="Tool name."
    )
    stage: int = Field(ge=1, le=4, description="Stage to release, 1..4.")
    reason: str = Field(description="Why this stage, now.")
    guidance: str = Field(description="How the user agent should bring it into the conversation.")


class RevealMemory(_Action):
    """Let the user agent surface a memory from one period of the persona's life."""

    action: Literal["reveal_memory"] = Field(default="reveal_memory", description="Tool name.")
    period: MemoryPeriod = Field(description="childhood, adolescence, young_adulthood or current.")
    reason: str = Field(default="", description="Why this memory, now.")
    guidance: str = Field(default="", description="How the user agent should bring it up.")


class AdjustFocus(_Action):
    """Steer what the user agent emphasises next, towards one axis of need."""

    action: Literal["adjust_focus"] = Field(default="adjust_focus", description="Tool name.")
    axis: AxisName = Field(description="cognitive, affective or proactive.")
    reason: str = Field(description="Why this axis.")
    guidance: str = Field(description="What the user agent should emphasise or test.")


class IntroduceTurningPoint(_Action):
    """Introduce a shift: a new realisation, a flare-up or a softening."""

    action: Literal["introduce_turning_point"] = Field(
        default="introduce_turning_point", description="Tool name."
    )
    stage: int | None = Field(default=None, ge=1, le=4, description="Related stage, or none.")
    axis: AxisName = Field(description="The axis the turning point concerns.")
    reason: str = Field(description="Why a turning point now.")
    guidance: str = Field(description="What changes in the user agent's stance.")


class Observe(_Action):
    """Change nothing this turn; watch how the supporter responds."""

    action: Literal["observe"] = Field(default="observe", description="Tool name.")
    observation: str = Field(description="What the director sees in the conversation.")
    reason: str = Field(description="Why it waits.")


class ContinueAction(_Action):
    """Let the conversation go on as it is, with an optional focus suggestion."""

    action: Literal["continue"] = Field(default="continue", description="Tool name.")
    focus: str = Field(default="", description="A light suggestion for the next user line.")
    reason: str = Field(description="Why no intervention is needed.")


class EndConversation(_Action):
    """End the dialogue. Only honoured when the victory conditions hold and t >= min_turns."""

    action: Literal["end_conversation"] = Field(
        default="end_conversation", description="Tool name."
    )
    reason: str = Field(description="Why the conversation has reached its end.")


DirectorAction = Annotated[
    RevealStoryStage
    | RevealMemory
    | AdjustFocus
    | IntroduceTurningPoint
    | Observe
    | ContinueAction
    | EndConversation,
    Field(discriminator="action"),
]

DIRECTOR_TOOLS: dict[str, type[_Action]] = {
    "reveal_story_stage": RevealStoryStage,
    "reveal_memory": RevealMemory,
    "adjust_focus": AdjustFocus,
    "introduce_turning_point": IntroduceTurningPoint,
    "observe": Observe,
    "continue": ContinueAction,
    "end_conversation": EndConversation,
}


class _FixedToolSpec(ToolSpec):
    """A ToolSpec whose wire form is computed once (JSON schema generation is the costliest
    part of a director call otherwise)."""

    def to_def(self) -> ToolDef:
        return _tool_def(self.name, self.description, self.arguments)


@cache
def _tool_def(name: str, description: str, arguments: type[BaseModel]) -> ToolDef:
    return ToolSpec(name, description, arguments).to_def()


DIRECTOR_SPECS: tuple[ToolSpec, ...] = tuple(
    _FixedToolSpec(name, "", cls) for name, cls in DIRECTOR_TOOLS.items()
)
"""The seven tools the director agent offers its model, in :data:`DIRECTOR_TOOLS` order. On
the wire a tool is its name and the lean schema of its arguments: the director's prompt
says, in the case's language, when to use each (a description here would repeat it)."""
