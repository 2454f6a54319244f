"""Token usage and cost of dialogue records: per dialogue, per role and in all.

What ``empathos run`` writes into the manifest, ``empathos score --format json`` into each
row and the report into its usage section. Pure: records in, numbers out. Cost is what the
records' calls carry (priced when they were made, from the run's price table); a call
without a price adds tokens but no cost, and a group none of whose calls was priced has no
cost (``None``), never a made-up 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from empathos.records import DialogueRecord, ModelCallRecord

__all__ = ["TokenCount", "TokenMean", "Usage", "WithCalls", "count_calls", "usage_summary"]


class TokenCount(BaseModel):
    """The calls of a group, their tokens and their cost."""

    model_config = ConfigDict(extra="forbid")

    calls: int = Field(0, description="Model calls.")
    input_tokens: int = Field(0, description="Prompt tokens, cached ones included.")
    cached_input_tokens: int = Field(
        0, description="Of the prompt tokens, those the server served from its prefix cache."
    )
    output_tokens: int = Field(0, description="Completion tokens.")
    cost_usd: float | None = Field(
        None, description="Cost of the priced calls in US dollars; None: no call was priced."
    )

    @property
    def uncached_input_tokens(self) -> int:
        """Prompt tokens the server had to process."""
        return self.input_tokens - self.cached_input_tokens


class TokenMean(BaseModel):
    """Tokens and cost per dialogue, on average."""

    model_config = ConfigDict(extra="forbid")

    calls: float = Field(description="Model calls per dialogue.")
    input_tokens: float = Field(description="Prompt tokens per dialogue.")
    cached_input_tokens: float = Field(description="Cached prompt tokens per dialogue.")
    output_tokens: float = Field(description="Completion tokens per dialogue.")
    cost_usd: float | None = Field(description="Cost per dialogue (USD); None: unpriced.")


class Usage(BaseModel):
    """Tokens and cost of a set of dialogues: in all, per dialogue and per role."""

    model_config = ConfigDict(extra="forbid")

    dialogues: int = Field(description="Dialogues counted.")
    total: TokenCount = Field(description="Every call of every dialogue.")
    per_dialogue: TokenMean | None = Field(description="The mean dialogue (None: none).")
    roles: dict[str, TokenCount] = Field(description="Every call of each role (user, ...).")
    cached_share: float | None = Field(
        description="cached_input_tokens / input_tokens (None: no prompt tokens reported)."
    )


def count_calls(calls: Iterable[ModelCallRecord]) -> TokenCount:
    """The totals of some calls."""
    out = TokenCount()
    costs: list[float] = []
    for call in calls:
        out.calls += 1
        out.input_tokens += call.prompt_tokens or 0
        out.cached_input_tokens += call.cached_prompt_tokens or 0
        out.output_tokens += call.completion_tokens or 0
        if call.cost_usd is not None:
            costs.append(call.cost_usd)
    out.cost_usd = sum(costs) if costs else None
    return out


class WithCalls(Protocol):
    """A record that lists its model calls (a dialogue's, or a bench item's)."""

    @property
    def model_calls(self) -> Sequence[ModelCallRecord]:
        """Every call the record made."""
        ...


def usage_summary(records: Sequence[DialogueRecord] | Sequence[WithCalls]) -> Usage:
    """The usage of ``records`` (every call, failed ones included: they were paid for)."""
    calls = [c for r in records for c in r.model_calls]
    total = count_calls(calls)
    roles = {
        role: count_calls(c for c in calls if c.role == role)
        for role in sorted({c.role for c in calls})
    }
    n = len(records)
    mean = None
    if n:
        mean = TokenMean(
            calls=total.calls / n,
            input_tokens=total.input_tokens / n,
            cached_input_tokens=total.cached_input_tokens / n,
            output_tokens=total.output_tokens / n,
            cost_usd=None if total.cost_usd is None else total.cost_usd / n,
        )
    share = total.cached_input_tokens / total.input_tokens if total.input_tokens else None
    return Usage(dialogues=n, total=total, per_dialogue=mean, roles=roles, cached_share=share)
