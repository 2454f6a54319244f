"""One bench item against the endpoints: send its prompts, parse the replies, score them.

Each ``play_*`` function takes a case (an item and what it needs) and the role models, and
returns the item's :class:`~empathos.bench.record.BenchItemRecord`. A model call that fails
(after the client's retries) ends the item as ``status: "error"`` with the reason and the
failed call recorded: an endpoint failure is never a wrong answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from empathos.bench.eqbench import (
    ATTEMPT_TEMPERATURES,
    ItemResult,
    score_reply,
    without_revision,
)
from empathos.bench.eqbench3 import (
    judge_prompt,
    parse_judge,
    task_score,
    transcript_text,
    user_turns,
)
from empathos.bench.eqbench3_files import KindPrompts
from empathos.bench.eqbench_files import EqQuestion
from empathos.bench.record import BenchItemRecord, BenchName, ChatTurn, JudgeRating
from empathos.errors import ModelCallError
from empathos.llm import ChatModel, Message, record_of
from empathos.records import ModelCallRecord
from empathos.run.manifest import utc_now
from empathos.sandbox.agents import call_record

__all__ = [
    "BenchCase",
    "Conversation",
    "Roles",
    "failed_item",
    "play_eqbench",
    "play_eqbench3",
    "record_of_item",
    "roles_of",
]


@dataclass(frozen=True)
class BenchCase:
    """One item as the runner sees it (an id and a content hash) with what playing it needs."""

    id: str
    digest: str
    bench: BenchName
    language: str | None
    task: str | None
    play: Callable[[BenchCase, Roles], Awaitable[BenchItemRecord]]
    item: Any
    """The benchmark's item: an EmoItem, an EqQuestion or an EQ-Bench 3 Scenario."""
    prompts: Any = None
    """What the item's prompts are made from: EmoPrompts, or (KindPrompts, debrief)."""
    protocol: str = ""
    """How the benchmark is run: EmoBench ``official`` or ``paper``; EQ-Bench ``v2.1`` (no
    revision block, the default) or ``revise``."""

    def scenario_hash(self) -> str:
        """The item's content hash (a changed item is not resumed)."""
        return self.digest


@dataclass(frozen=True)
class Roles:
    """The role models of a bench run; the judge only for EQ-Bench 3, the simulated user
    only for SAGE."""

    tested: ChatModel
    label: str
    judge: ChatModel | None = None
    judge_label: str = ""
    simulator: ChatModel | None = None
    simulator_label: str = ""


def roles_of(models: Sequence[tuple[str, ChatModel, str]]) -> Roles:
    """The :class:`Roles` of (run-config role, model, label) triples, the model under test
    first; ``judge`` is the judge, ``user`` the simulated user."""
    slots = {"judge": ("judge", "judge_label"), "user": ("simulator", "simulator_label")}
    fields: dict[str, Any] = {}
    for role, model, label in models[1:]:
        fields[slots[role][0]], fields[slots[role][1]] = model, label
    return Roles(models[0][1], models[0][2], **fields)


@dataclass
class Conversation:
    """Messages sent and received so far, and every call made."""

    messages: list[Message] = field(default_factory=list)
    calls: list[ModelCallRecord] = field(default_factory=list)

    async def ask(
        self, model: ChatModel, content: str, *, keep: bool = True, **overrides: float | int
    ) -> str:
        """Send ``content`` as the next user message (``overrides``: sampling parameters of
        this call); return (and, with ``keep``, append) the reply. A failed call is
        recorded, then its error raised."""
        sent = (
            [*self.messages, Message(role="user", content=content)]
            if keep
            else [Message(role="user", content=content)]
        )
        try:
            result = await model.chat(sent, allow_empty=True, **overrides)
        except ModelCallError as exc:
            failed = record_of(exc)
            if failed is not None:
                self.calls.append(
                    call_record(failed, turn=len(self.calls), prompt=None, messages=sent)
                )
            raise
        self.calls.append(
            call_record(result.record, turn=len(self.calls), prompt=None, messages=sent)
        )
        if keep:
            self.messages = [*sent, Message(role="assistant", content=result.text)]
        return result.text

    def turns(self) -> list[ChatTurn]:
        """The conversation as record entries."""
        return [ChatTurn(role=m.role, content=m.content) for m in self.messages if m.role != "tool"]


def record_of_item(
    case: BenchCase, roles: Roles, talk: Conversation, **fields: Any
) -> BenchItemRecord:
    return BenchItemRecord(
        bench=case.bench,
        item_id=case.id,
        item_hash=case.digest,
        language=case.language,
        task=case.task,
        model=roles.label,
        messages=talk.turns(),
        model_calls=talk.calls,
        finished_at=utc_now(),
        **{"status": "done", **fields},
    )


def failed_item(
    case: BenchCase, roles: Roles, talk: Conversation, exc: ModelCallError
) -> BenchItemRecord:
    return record_of_item(case, roles, talk, status="error", error=exc.line())


#: The benchmark's reply-length caps: plain ratings, and ratings with critique and revision.
EQ_MAX_TOKENS = {False: 60, True: 600}


async def play_eqbench(case: BenchCase, roles: Roles) -> BenchItemRecord:
    """Ask one EQ-Bench question as the benchmark does: the prompt without its revision
    block unless the protocol is ``revise``; an answer that does not parse completely (or
    is all zeros) asked again, up to 3 attempts at rising temperatures; in the revise
    format the first partial answer is kept when no attempt parses completely."""
    question: EqQuestion = case.item
    revise = case.protocol == "revise"
    prompt = question.prompt if revise else without_revision(question.prompt)
    talk = Conversation()
    kept: tuple[str, ItemResult] | None = None
    temperatures: list[float] = []
    for temperature in ATTEMPT_TEMPERATURES:
        temperatures.append(temperature)
        try:
            reply = await talk.ask(
                roles.tested, prompt, keep=False, temperature=temperature,
                max_tokens=EQ_MAX_TOKENS[revise],
            )  # fmt: skip
        except ModelCallError as exc:
            return failed_item(case, roles, talk, exc)
        result = score_reply(question.reference, reply, revise=revise)
        if result.complete(revise=revise):
            kept = (reply, result)
            break
        partial = result.first_pass is not None or result.revised is not None
        if revise and kept is None and partial:
            kept = (reply, result)
    reply, result = kept if kept is not None else (reply, result)
    talk.messages = [Message(role="user", content=prompt), Message(role="assistant", content=reply)]
    scores = {} if result.first_pass is None else {"first_pass": result.first_pass}
    if result.revised is not None:
        scores["revised"] = result.revised
    return record_of_item(
        case,
        roles,
        talk,
        ratings={"first_pass": result.ratings.first_pass, "revised": result.ratings.revised},
        unparseable=result.first_pass is None and result.revised is None,
        scores=scores,
        protocol=case.protocol,
        detail={"attempts": len(temperatures), "temperatures": temperatures},
    )


async def play_eqbench3(case: BenchCase, roles: Roles) -> BenchItemRecord:
    """Play one EQ-Bench 3 scenario's scripted turns (and the debrief), then have the judge
    rate the transcript on the rubric."""
    kind: KindPrompts
    kind, debrief_prompt = case.prompts
    talk = Conversation()
    try:
        for turn in user_turns(case.item, kind.master):
            await talk.ask(roles.tested, turn)
        body = [{"role": m.role, "content": m.content} for m in talk.messages]
        debrief = ""
        if case.task != "analysis":
            debrief = await talk.ask(roles.tested, debrief_prompt)
        assert roles.judge is not None
        transcript = transcript_text(body, case.item.kind)
        prompt = judge_prompt(kind.judge, transcript, debrief, kind.criteria)
        judge_reply = await talk.ask(roles.judge, prompt, keep=False)
    except ModelCallError as exc:
        return failed_item(case, roles, talk, exc)
    criteria = parse_judge(judge_reply)
    score = task_score(criteria, kind.allowed)
    rating = JudgeRating(
        model=roles.judge_label,
        prompt=prompt,
        reply=judge_reply,
        criteria=criteria,
        allowed=list(kind.allowed),
    )
    if score is None:
        problem = "the judge rated none of the scored criteria"
        return record_of_item(case, roles, talk, status="error", error=problem, judge=rating)
    return record_of_item(case, roles, talk, judge=rating, scores={"task": score})
