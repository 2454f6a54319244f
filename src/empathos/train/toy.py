"""Scripted roles that reward one observable behaviour: the CPU smoke run and the tests.

With these as the user and the judge, the only way to earn reward is the behaviour, so a run
that learns shows up as a rising mean per-turn reward within minutes on a CPU. The judge is a
deterministic rule, not a model of empathy: use it to check the training machinery, never to
claim anything about support quality.

Name them in a train config: ``roles: {judge: {kind: scripted, handler:
empathos.train.toy:judge_addresses_user}, user: {kind: scripted, handler:
empathos.train.toy:user_states_feeling}}``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from empathos.llm import ChatRequest, auto_reply
from empathos.llm.scripted import Reply
from empathos.prompts import rated_reply
from empathos.rubric import EMPATHY_RUBRIC

__all__ = [
    "FEELING_LINE",
    "addresses_user",
    "asks_question",
    "judge_addresses_user",
    "judge_asks_question",
    "judge_for",
    "last_reply",
    "user_states_feeling",
]

FEELING_LINE = "Honestly I just feel lonely about it."
_GOOD = (1, 0, 1, 0, 1, 0)  # C.Prog, C.Neg, A.Prog, A.Neg, P.Prog, P.Neg
_NONE = (0, 0, 0, 0, 0, 0)
_YOU = re.compile(r"\byou(r|rs|'re|'ve|'ll|'d)?\b", re.IGNORECASE)


def last_reply(request: ChatRequest) -> str:
    """The supporter's last reply in an MDEP judge request's window ('' when absent), in
    any language and prompt style (:func:`empathos.prompts.rated_reply`)."""
    return rated_reply("\n".join(m.content for m in request.messages))


def addresses_user(reply: str) -> bool:
    """The reply speaks to the user: it says "you" (or your, you're ...)."""
    return bool(_YOU.search(reply))


def asks_question(reply: str) -> bool:
    """The reply asks the user something: it holds a question mark."""
    return "?" in reply


def _form(levels: tuple[int, ...]) -> dict[str, Any]:
    keys = [i.key for i in EMPATHY_RUBRIC.mdep]
    return {
        k: {"level": lv, "evidence": "0" if lv == 0 else "scripted", "reasoning": "scripted rule"}
        for k, lv in zip(keys, levels, strict=True)
    }


def _judge(rule: Callable[[str], bool]) -> Callable[[ChatRequest], Reply]:
    def handler(request: ChatRequest) -> Reply:
        if request.schema_name == "IEDRForm":
            keys = [i.key for i in EMPATHY_RUBRIC.iedr]
            return {k: {"level": 2, "evidence": "e", "reasoning": "scripted"} for k in keys}
        if request.response_schema is None:
            return auto_reply(request)
        return _form(_GOOD if rule(last_reply(request)) else _NONE)

    return handler


def judge_for(rule: Callable[[str], bool]) -> Callable[[ChatRequest], Reply]:
    """A scripted judge rating progress on every axis when ``rule(reply)`` holds (the
    initial deficit at level 2 on every indicator)."""
    return _judge(rule)


judge_addresses_user = _judge(addresses_user)
judge_addresses_user.__doc__ = "A judge rating progress on every axis when the reply says 'you'."
judge_asks_question = _judge(asks_question)
judge_asks_question.__doc__ = (
    "A judge rating progress on every axis when the reply asks a question."
)


def user_states_feeling(request: ChatRequest) -> Reply:
    """A user that answers every reply by stating the same feeling."""
    return FEELING_LINE
