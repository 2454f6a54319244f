"""The record of one bench item, one JSON file per item in the run directory.

``<out>/records/<item id>__t<trial>.json`` holds a :class:`BenchItemRecord`. For every
benchmark it keeps what was sent and what came back (``messages``), what was parsed from it,
the item's scores, and every model call (tokens, cost, latency). An endpoint failure is
``status: "error"`` with its ``error``: no answer, never a wrong one.

EQ-Bench 3 items (``bench: "eqbench3"``) are what the pairwise pass reads: ``item_id`` is the
scenario id, ``model`` the model's label, ``messages`` the whole transcript as {role,
content} messages in order (each scripted user turn filled into the master prompt, the
model's reply, then the debrief prompt and the model's debrief; an analysis task: its one
prompt and the analysis), and ``judge.criteria`` the judge's criterion scores (0-20).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from empathos.bench.registry import REGISTRY
from empathos.records import ModelCallRecord
from empathos.run.rundir import DialogueKey, IndexRow

__all__ = ["BENCH_SCHEMA_VERSION", "BenchItemRecord", "BenchName", "ChatTurn", "JudgeRating"]

BENCH_SCHEMA_VERSION = 1


def _registered(name: str) -> str:
    if name not in REGISTRY:
        raise ValueError(f"{name!r} is not a benchmark (one of {', '.join(REGISTRY)})")
    return name


#: A benchmark's name: a string the registry knows (:data:`empathos.bench.registry.REGISTRY`),
#: so a new benchmark needs no change here.
BenchName = Annotated[str, AfterValidator(_registered)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChatTurn(_Model):
    """One message of the conversation with the model under test."""

    role: Literal["system", "user", "assistant"] = Field(description="Who wrote it.")
    content: str = Field(description="The text.")


class JudgeRating(_Model):
    """The judge's rubric pass over one EQ-Bench 3 transcript."""

    model: str = Field(description="The judge's model id.")
    prompt: str = Field(description="The rubric prompt sent to the judge.")
    reply: str = Field(description="The judge's reply.")
    criteria: dict[str, float] = Field(
        description="Every criterion the judge rated validly -> its score (0-20)."
    )
    allowed: list[str] = Field(description="The criteria that make the item's score.")


class BenchItemRecord(_Model):
    """One item of a bench run: prompts, replies, parsed answer, score (see the module)."""

    schema_version: Literal[1] = Field(1, description="Version of this record format.")
    bench: BenchName = Field(description="The benchmark.")
    item_id: str = Field(description="The item's id (EQ-Bench 3: the scenario id).")
    item_hash: str = Field(description="Hash of the item's content and prompts.")
    language: str | None = Field(None, description="The item's language, where it has one.")
    task: str | None = Field(
        None, description="EmoBench: EU or EA; EQ-Bench 3: roleplay, drafting or analysis."
    )
    model: str = Field(description="The label of the model under test (its model id).")
    status: Literal["done", "error"] = Field(description="error: an endpoint failed.")
    error: str | None = Field(None, description="Why the item has no answer (status error).")
    messages: list[ChatTurn] = Field(description="The conversation, replies included.")
    choices: list[int | None] | None = Field(
        None, description="EmoBench: the chosen choice index per question (None: unparseable)."
    )
    ratings: dict[str, dict[str, int]] | None = Field(
        None, description="EQ-Bench: 'first_pass' and 'revised' ratings, emotion -> 0-10."
    )
    judge: JudgeRating | None = Field(None, description="EQ-Bench 3: the judge's rubric pass.")
    protocol: str | None = Field(
        None,
        description="How the item was run: EmoBench 'official' or 'paper'; EQ-Bench 'v2.1' "
        "(no revision block) or 'revise'. None: written before protocols were recorded.",
    )
    detail: dict[str, Any] | None = Field(
        None,
        description="The protocol's own record: EQ-Bench attempts and their temperatures; "
        "EmoBench 'lenient_only' (answers only the lenient diagnostic parser could read) and, "
        "for the paper protocol, each choice order and its votes.",
    )
    sage: dict[str, Any] | None = Field(
        None, description="SAGE: the dialogue in SAGE's own result layout (emo_point, history)."
    )
    unparseable: bool = Field(False, description="The answer could not be parsed.")
    scores: dict[str, float] = Field(
        default_factory=dict,
        description="EmoBench: task -> 1/0; EQ-Bench: first_pass (and revised) question "
        "scores; EQ-Bench 3: task (0-20). Empty: no score (an error or unparseable answer).",
    )
    model_calls: list[ModelCallRecord] = Field(
        default_factory=list, description="Every model call, failed ones included."
    )
    finished_at: str = Field(description="UTC time the item ended, ISO 8601.")

    def index_row(self, key: DialogueKey, file: str) -> IndexRow:
        """The run index's row of this item."""
        calls = self.model_calls
        costs = [c.cost_usd for c in calls if c.cost_usd is not None]
        return IndexRow(
            dialogue_id=key.id,
            scenario_id=key.scenario_id,
            trial=key.trial,
            scenario_hash=self.item_hash,
            status=self.status,
            termination="error" if self.status == "error" else "answered",
            reason=self.error or ("unparseable" if self.unparseable else ""),
            turns=sum(m.role == "assistant" for m in self.messages),
            input_tokens=sum(c.prompt_tokens or 0 for c in calls),
            output_tokens=sum(c.completion_tokens or 0 for c in calls),
            cost_usd=sum(costs) if costs else None,
            file=file,
            finished_at=self.finished_at,
        )
