"""Progress events a dialogue sends to an optional observer (for progress bars and logs)."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from empathos.epm import TerminationKind

__all__ = ["DialogueObserver", "TurnEvent"]


class TurnEvent(BaseModel):
    """Sent after every finished turn, and once with ``done`` when the dialogue ends."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenario_id: str = Field(description="Scenario of the dialogue.")
    turn: int = Field(ge=0, description="Turns completed so far.")
    done: bool = Field(description="The dialogue has ended (sent exactly once per dialogue).")
    termination: TerminationKind | None = Field(
        default=None, description="How it ended (only when done)."
    )
    n_calls: int = Field(ge=0, description="Model calls made since the previous event.")
    input_tokens: int = Field(ge=0, description="Prompt tokens since the previous event.")
    output_tokens: int = Field(ge=0, description="Completion tokens since the previous event.")
    cost_usd: float = Field(ge=0, description="Cost since the previous event (0 when unpriced).")


class DialogueObserver(Protocol):
    """Receives :class:`TurnEvent`s; must be quick and must not raise."""

    def __call__(self, event: TurnEvent, /) -> None:
        """Handle one event."""
        ...
