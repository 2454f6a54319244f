"""One bench item against the endpoints: send its prompts, parse the replies, score them.

Each ``play_*`` function takes a case (an item and what it needs) and the role models, and
returns the item's :class:`~empathos.bench.record.BenchItemRecord`. A model call that fails
(after the client's retries) ends the item as ``status: "error"`` with the reason and the
failed call recorded: an endpoint failure is never a wrong answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from empathos.bench.emobench import EmoItem, EmoPrompts, build_messages, item_scores, parse_answers
from empathos.bench.eqbench import score_reply
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
    "play_emobench",
    "play_eqbench",
    "play_eqbench3",
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


@dataclass
class Conversation:
    """Messages sent and received so far, and every call made."""

    messages: list[Message] = field(default_factory=list)
    calls: list[ModelCallRecord] = field(default_factory=list)

    async def ask(self, model: ChatModel, content: str, *, keep: bool = True) -> str:
        """Send ``content`` as the next user message; return (and, with ``keep``, append)
        the reply. A failed call is recorded, then its error raised."""
        sent = (
            [*self.messages, Message(role="user", content=content)]
            if keep
            else [Message(role="user", content=content)]
        )
        try:
            result = await model.chat(sent, allow_empty=True)
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


def _record(case: BenchCase, roles: Roles, talk: Conversation, **fields: Any) -> BenchItemRecord:
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


def _failed(
    case: BenchCase, roles: Roles, talk: Conversation, exc: ModelCallError
) -> BenchItemRecord:
    return _record(case, roles, talk, status="error", error=exc.line())


async def play_emobench(case: BenchCase, roles: Roles) -> BenchItemRecord:
    """Ask one EmoBench item (system + user prompt), parse the letters, score the tasks."""
    item: EmoItem = case.item
    prompts: EmoPrompts = case.prompts
    system, user = build_messages(item, prompts)
    talk = Conversation(messages=[Message(role="system", content=system["content"])])
    try:
        reply = await talk.ask(roles.tested, user["content"])
    except ModelCallError as exc:
        return _failed(case, roles, talk, exc)
    answers = parse_answers(item, reply)
    return _record(
        case,
        roles,
        talk,
        choices=list(answers),
        unparseable=any(a is None for a in answers),
        scores=item_scores(item, answers),
    )


async def play_eqbench(case: BenchCase, roles: Roles) -> BenchItemRecord:
    """Ask one EQ-Bench question, parse the ratings, score them (revise format when the
    question's prompt asks for revised scores)."""
    question: EqQuestion = case.item
    talk = Conversation()
    try:
        reply = await talk.ask(roles.tested, question.prompt)
    except ModelCallError as exc:
        return _failed(case, roles, talk, exc)
    result = score_reply(question.reference, reply, revise="Revised scores:" in question.prompt)
    scores = {} if result.first_pass is None else {"first_pass": result.first_pass}
    if result.first_pass is not None and result.revised is not None:
        scores["revised"] = result.revised
    return _record(
        case,
        roles,
        talk,
        ratings={"first_pass": result.ratings.first_pass, "revised": result.ratings.revised},
        unparseable=result.first_pass is None,
        scores=scores,
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
        prompt = judge_prompt(kind.judge, transcript_text(body), debrief, kind.criteria)
        judge_reply = await talk.ask(roles.judge, prompt, keep=False)
    except ModelCallError as exc:
        return _failed(case, roles, talk, exc)
    criteria = parse_judge(judge_reply, kind.criteria)
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
        return _record(case, roles, talk, status="error", error=problem, judge=rating)
    return _record(case, roles, talk, judge=rating, scores={"task": score})
