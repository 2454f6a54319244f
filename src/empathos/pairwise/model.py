"""What the pairwise engine reads and writes: transcript items, the judge's form, judgements.

An :class:`Item` is one whole dialogue: a scenario id, a trial, the model label and the
transcript as ``{role, content}`` messages (what an empathos record, a published EMPA result
or an EQ-Bench 3 transcript all reduce to). A :class:`Judgement` is one judged order of one
pair, as stored (one JSON line each in ``judgements.jsonl``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from empathos.llm import CallRecord
from empathos.pairwise.outcomes import Verdict

__all__ = ["AXES", "Item", "Judgement", "PairForm", "Pick", "TranscriptMessage"]

#: The aspects our judge compares: the three EMPA axes and the overall verdict.
AXES: tuple[str, ...] = ("cognitive", "affective", "proactive", "overall")


class TranscriptMessage(BaseModel):
    """One message of a transcript."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["system", "user", "assistant"] = Field(description="Who wrote it.")
    content: str = Field(description="The text.")


class Item(BaseModel):
    """One whole dialogue of one model on one scenario and trial."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario_id: str = Field(min_length=1, description="The scenario (case) id.")
    trial: int = Field(0, ge=0, description="The trial (repeat) of the scenario.")
    model: str = Field(min_length=1, description="The model's label.")
    transcript: tuple[TranscriptMessage, ...] = Field(
        description="The conversation as messages, in order."
    )
    debrief: str = Field("", description="EQ-Bench 3's debrief answer, if any ('' none).")
    sectioned: bool = Field(
        False,
        description="EQ-Bench 3 replies the benchmark parses into sections (its role-plays "
        "and drafting tasks): its judges see them rebuilt from the parsed sections.",
    )

    @property
    def reply_chars(self) -> int:
        """Characters the model wrote (its messages): the length covariate's length."""
        return sum(len(m.content) for m in self.transcript if m.role == "assistant")


class Pick(BaseModel):
    """The judge's choice on one aspect."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    winner: Literal["first", "second"] = Field(description="The dialogue judged better.")
    margin: int = Field(ge=1, le=5, description="How much better: 1 slightly ... 3 far.")


class PairForm(BaseModel):
    """Our pairwise judge's reply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reasoning: str = Field("", description="Two or three sentences.")
    cognitive: Pick = Field(description="Who understood the person better.")
    affective: Pick = Field(description="Who met their feelings better.")
    proactive: Pick = Field(description="Who better helped them act.")
    overall: Pick = Field(description="Whose conversation supported them better overall.")


class Judgement(BaseModel):
    """One order of one pair, judged (or failed)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = Field(1, description="Version of this line's layout.")
    scenario_id: str = Field(description="The scenario id.")
    trial: int = Field(description="The trial.")
    first: str = Field(description="The model whose dialogue was shown first.")
    second: str = Field(description="The model whose dialogue was shown second.")
    judge: str = Field(description="The judge's model id.")
    template_id: str = Field(description="The prompt's template id (or 'user:<file>').")
    template_version: str = Field(description="Its version (a content hash for a user's).")
    picks: dict[str, Pick] | None = Field(
        None, description="The choice per aspect (None: the call failed)."
    )
    plus: tuple[float, float] | None = Field(
        None,
        description="EQ-Bench 3's plus counts of the reply (first shown, second shown), by "
        "the benchmark's rule (None: not an EQ-Bench 3 judgement, or stored before it).",
    )
    error: str | None = Field(None, description="Why the call failed, if it did.")
    call: CallRecord | None = Field(
        None, description="The model client's record of the call: tokens, cost, cache hit."
    )

    @property
    def order(self) -> tuple[str, int, str, str, str]:
        """(scenario, trial, first, second, judge): what a rerun skips when done."""
        return (self.scenario_id, self.trial, self.first, self.second, self.judge)

    def verdict(self, aspect: str = "overall") -> Verdict | None:
        """The verdict on ``aspect`` (None: failed, or the judge gave none on it)."""
        pick = (self.picks or {}).get(aspect)
        if pick is None:
            return None
        return Verdict(
            self.scenario_id, self.trial, self.first, self.second, self.judge, pick.winner,
            pick.margin,
        )  # fmt: skip
