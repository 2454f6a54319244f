"""Scripted EMPA roles for the verl agent loop tests (named as ``handler: file.py:function``).

The user numbers its lines (``[u2]``, ``[u3]``, ...: turn 1's line is the scenario's topic); the
judge rates the window by a hash of what it is sent (so the same dialogue gets the same ratings
when it is replayed through :class:`~empathos.sandbox.EmpathyEnv`) and refuses every window whose
newest user line is ``[u2]``: turn 2 of every dialogue is unscored.
"""

from __future__ import annotations

import hashlib
import re

from empathos.llm import ChatRequest, fault
from empathos.llm.scripted import Reply
from empathos.rubric import EMPATHY_RUBRIC

UNSCORED_TURN = 2
_MARK = re.compile(r"\[u(\d+)\]")
_LEVELS = [(2, 0, 2, 0, 2, 0), (1, 0, 0, 0, 0, 0), (0, 0, 1, -1, 2, 0), (0, -1, 0, -1, 0, -1)]


def _text(request: ChatRequest) -> str:
    return "\n".join(m.content for m in request.messages)


def user(request: ChatRequest) -> Reply:
    """The next numbered line, of a length chosen by a hash of the request (so the rollouts'
    responses differ in length, as real dialogues do: verl's V1 trainer stores equal-length
    fields as plain tensors and its advantage step then fails on them)."""
    text = _text(request)
    turn = max((int(n) for n in _MARK.findall(text)), default=1) + 1
    more = " Truly." * (int(hashlib.sha256(text.encode()).hexdigest(), 16) % 4)
    return f"[u{turn}] It still weighs on me, honestly.{more}"


def judge(request: ChatRequest) -> Reply:
    """Ratings chosen by a hash of the request; a refusal at turn 2 (the turn goes unscored)."""
    text = _text(request)
    if request.schema_name == "IEDRForm":
        return {i.key: {"level": 2, "evidence": "e", "reasoning": "r"} for i in EMPATHY_RUBRIC.iedr}
    if max((int(n) for n in _MARK.findall(text)), default=1) == UNSCORED_TURN:
        raise fault("fatal", "the judge refuses this window")
    pick = int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(_LEVELS)
    keys = [i.key for i in EMPATHY_RUBRIC.mdep]
    return {
        k: {"level": lv, "evidence": "scripted", "reasoning": "scripted"}
        for k, lv in zip(keys, _LEVELS[pick], strict=True)
    }


def user_down_after_turn_2(request: ChatRequest) -> Reply:
    """:func:`user` until turn 2's reply; then its endpoint fails (the dialogue ends as
    ``error``: a failed dialogue)."""
    if _MARK.search(_text(request)) and "[u2]" in _text(request):
        raise fault("fatal", "the user model is down")
    return user(request)
