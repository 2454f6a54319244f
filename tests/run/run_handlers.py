"""Scripted reply handlers that run configs name as ``run_handlers.py:function``."""

from __future__ import annotations

import time

from empathos.llm import ChatRequest, auto_reply, fault
from empathos.llm.scripted import Reply
from empathos.sandbox.state import EMPTY_REPLY_TEXT

SECRET_WORD = "sourdough"  # appears in the opening line of the bundled case en-01-sourdough
IEDR_KEYS = ("C.1", "C.2", "C.3", "A.1", "A.2", "A.3", "P.1", "P.2", "P.3")


def judge(request: ChatRequest) -> Reply:
    """A scripted judge for cases without a stored P_0: every IEDR indicator at level 2
    (auto_reply's level 0 would be a degenerate start, refused); auto_reply otherwise."""
    if request.schema_name == "IEDRForm":
        return {k: {"level": 2, "evidence": "e", "reasoning": "scripted"} for k in IEDR_KEYS}
    return auto_reply(request)


def fail_on_sourdough(request: ChatRequest) -> Reply:
    """An endpoint outage for one case: any request that mentions its topic fails (fatal)."""
    if any(SECRET_WORD in m.content.lower() for m in request.messages):
        raise fault("fatal", "scripted outage for the sourdough case")
    return auto_reply(request)


def slow(request: ChatRequest) -> Reply:
    """The default scripted reply, 50 ms late (so a run can be interrupted part-way)."""
    time.sleep(0.05)
    return auto_reply(request)


def crash(request: ChatRequest) -> Reply:
    """A bug, not an endpoint failure: an exception that is no EmpathosError."""
    raise RuntimeError("scripted bug in the model under test's handler")


def crash_on_sourdough(request: ChatRequest) -> Reply:
    """The bug of :func:`crash` for one case only; the others get the default reply."""
    if any(SECRET_WORD in m.content.lower() for m in request.messages):
        return crash(request)
    return auto_reply(request)


def always_fails(request: ChatRequest) -> Reply:
    """An endpoint that is down for every request (fatal: no retry)."""
    raise fault("fatal", "scripted outage of every request")


def judge_needs_no_reply_mark(request: ChatRequest) -> Reply:
    """A judge that rates a window only when it shows the empty reply as such."""
    text = "\n".join(m.content for m in request.messages)
    if request.schema_name == "MDEPForm" and EMPTY_REPLY_TEXT["en"] not in text:
        raise fault("fatal", "the judge was not shown the empty reply")
    return judge(request)
