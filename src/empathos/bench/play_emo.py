"""One EmoBench item against the endpoint, under the ``official`` protocol
(:mod:`empathos.bench.emobench_official`) or the ``paper`` one
(:mod:`empathos.bench.emobench_paper`)."""

from __future__ import annotations

import json
from typing import Any

from empathos.bench.emobench import EmoItem, EmoPrompts, item_scores
from empathos.bench.emobench_official import (
    LETTERS,
    OFFICIAL_TEMPERATURE,
    answer_block,
    item_strict_answers,
    lenient_only,
    official_messages,
    official_user,
    strict_answers,
)
from empathos.bench.emobench_paper import (
    N_SAMPLES,
    SINGLE_FIELD,
    choice_orders,
    majority,
    split_eu_template,
)
from empathos.bench.play import BenchCase, Conversation, Roles, failed_item, record_of_item
from empathos.bench.record import BenchItemRecord
from empathos.errors import ModelCallError
from empathos.llm import Message

__all__ = ["play_emobench"]


async def play_emobench(case: BenchCase, roles: Roles) -> BenchItemRecord:
    """Ask one EmoBench item by the case's protocol; score it."""
    if case.protocol == "paper":
        return await _play_paper(case, roles)
    item: EmoItem = case.item
    system, user = official_messages(item, case.prompts, roles.label)
    talk = Conversation(messages=[Message(role="system", content=system["content"])])
    try:
        reply = await talk.ask(roles.tested, user["content"], temperature=OFFICIAL_TEMPERATURE)
    except ModelCallError as exc:
        return failed_item(case, roles, talk, exc)
    answers = item_strict_answers(item, reply)
    return record_of_item(
        case,
        roles,
        talk,
        choices=list(answers),
        unparseable=any(a is None for a in answers),
        scores=item_scores(item, answers),
        protocol="official",
        detail={"lenient_only": lenient_only(item, reply, answers)},
    )


async def _votes(
    talk: Conversation, roles: Roles, history: list[Message], user: str, choices: list[str]
) -> tuple[list[int | None], int]:
    """Sample one question 5 times; each reply's strict letter, and how many replies only
    the lenient reader could read."""
    probe = EmoItem("EA", "", "", "", "", ((tuple(choices), choices[0]),))
    votes: list[int | None] = []
    lenient = 0
    for seed in range(N_SAMPLES):
        talk.messages = list(history)
        reply = await talk.ask(roles.tested, user, temperature=OFFICIAL_TEMPERATURE, seed=seed)
        (vote,) = strict_answers(("answer",), (len(choices),), reply)
        votes.append(vote)
        lenient += lenient_only(probe, reply, (vote,))
    return votes, lenient


def _user_parts(item: EmoItem, prompts: EmoPrompts, order: list[list[int]]) -> list[str]:
    """The user message per question asked, choices in ``order``."""
    if item.kind == "EA":
        return [official_user(item, prompts.templates["EA"], order)]
    first, second = split_eu_template(prompts.templates["EU"])
    return [official_user(item, first, order), official_user(item, second, order)]


async def _one_order(
    talk: Conversation, roles: Roles, case: BenchCase, system: str, order: list[list[int]]
) -> tuple[dict[str, Any], list[Message], int]:
    """The item asked in one choice order: its record entry, conversation, lenient count."""
    item: EmoItem = case.item
    history = [Message(role="system", content=system)]
    picks: list[int | None] = []
    votes_all: list[list[int | None]] = []
    lenient = 0
    for q, user in enumerate(_user_parts(item, case.prompts, order)):
        if q and picks[-1] is None:  # no emotion read: the cause is not asked (wrong)
            picks.append(None)
            votes_all.append([])
            continue
        shown = [item.questions[q][0][i] for i in order[q]]
        votes, more = await _votes(talk, roles, history, user, shown)
        lenient += more
        pick = majority(votes)
        picks.append(pick)
        votes_all.append(votes)
        answer = json.dumps({"answer": "" if pick is None else LETTERS[pick]})
        history += [Message(role="user", content=user),
                    Message(role="assistant", content=answer)]  # fmt: skip
    chosen = [None if p is None else order[q][p] for q, p in enumerate(picks)]
    return {"order": order, "votes": votes_all, "chosen": chosen}, history, lenient


async def _play_paper(case: BenchCase, roles: Roles) -> BenchItemRecord:
    item: EmoItem = case.item
    prompts: EmoPrompts = case.prompts
    system = prompts.instructions + answer_block(prompts.answer_format, SINGLE_FIELD)
    talk = Conversation()
    orders = choice_orders(item)
    entries: list[dict[str, Any]] = []
    totals: dict[str, float] = {}
    lenient = 0
    try:
        for order in orders:
            entry, history, more = await _one_order(talk, roles, case, system, order)
            entries.append(entry)
            lenient += more
            for task, value in item_scores(item, entry["chosen"]).items():
                totals[task] = totals.get(task, 0.0) + value / len(orders)
    except ModelCallError as exc:
        return failed_item(case, roles, talk, exc)
    talk.messages = history  # the last order's conversation (every call is in model_calls)
    none = [None] * len(item.questions)
    return record_of_item(
        case,
        roles,
        talk,
        choices=entries[0]["chosen"],
        unparseable=all(e["chosen"] == none for e in entries),
        scores=totals,
        protocol="paper",
        detail={"orders": entries, "lenient_only": lenient},
    )
