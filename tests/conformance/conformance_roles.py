"""The scripted roles of the conformance suite (named as ``handler: file.py:function``) and its
fixed policy.

Every reply is a deterministic function of what the role is shown, keyed on the marks the
lines carry, so the same dialogue gives the same calls through every door:

- the policy's reply at turn n is :func:`policy_reply` (``[pN] ...``);
- the person's line at turn n (n >= 2; turn 1 is the scenario's topic) is ``[uN] ...`` with a
  digest of the policy's last reply in it, so a door that changed a reply changes the
  person's next line;
- the judge rates the newest reply at levels picked by a digest of its text (IEDR: level 2
  everywhere), so a changed reply changes the ratings, the EPM and every number after; on
  turn :data:`UNSCORED_TURN` its call fails (a transient fault: HTTP 503 on the loopback
  server), so the turn goes unscored and the dialogue goes on, within the sandbox's
  ``judge_failures_limit``: every door records that one failed call as an unscored turn;
- the director continues.
"""

from __future__ import annotations

import hashlib
import re

from empathos.llm import ChatRequest
from empathos.llm.scripted import Reply, ToolReply, fault
from empathos.rubric import EMPATHY_RUBRIC

_POLICY = re.compile(r"\[p(\d+)\][^\n]*")
_USER = re.compile(r"\[u(\d+)\]")
UNSCORED_TURN = 2
JUDGE_DOWN = "the judge is down for this one call"
_LEVELS = [(2, 0, 2, 0, 2, 0), (1, 0, 1, 0, 0, 0), (0, 0, 1, -1, 2, 0), (2, 0, 0, 0, 1, 0)]


def policy_reply(turn: int) -> str:
    """The fixed policy: its reply at ``turn`` (1-based)."""
    topics = ("what happened", "how that felt", "what you need now", "what comes next")
    return f"[p{turn}] I hear you. Tell me more about {topics[(turn - 1) % len(topics)]}."


def _text(request: ChatRequest) -> str:
    return "\n".join(m.content for m in request.messages)


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def policy(request: ChatRequest) -> Reply:
    """The policy as a chat endpoint: turn = the number of the person's lines it was sent."""
    return policy_reply(sum(m.role == "user" for m in request.messages))


def user(request: ChatRequest) -> Reply:
    text = _text(request)
    turn = max((int(n) for n in _USER.findall(text)), default=1) + 1
    replies = [m.group(0).strip() for m in _POLICY.finditer(text)]
    last = replies[-1] if replies else ""
    return f"[u{turn}] About that ({_digest(last) % 1000}), it still weighs on me."


def judge(request: ChatRequest) -> Reply:
    if request.schema_name == "IEDRForm":
        return {i.key: {"level": 2, "evidence": "e", "reasoning": "r"} for i in EMPATHY_RUBRIC.iedr}
    replies = [m.group(0).strip() for m in _POLICY.finditer(_text(request))]
    if replies and replies[-1].startswith(f"[p{UNSCORED_TURN}]"):
        raise fault("transient", JUDGE_DOWN)
    levels = _LEVELS[_digest(replies[-1] if replies else "") % 4]
    keys = [i.key for i in EMPATHY_RUBRIC.mdep]
    return {
        k: {"level": lv, "evidence": "scripted", "reasoning": "scripted"}
        for k, lv in zip(keys, levels, strict=True)
    }


def director(request: ChatRequest) -> Reply:
    return ToolReply("continue", {"reason": "steady", "focus": ""})
