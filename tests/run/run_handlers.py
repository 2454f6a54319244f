"""Scripted reply handlers that run configs name as ``run_handlers.py:function``."""

from __future__ import annotations

import time

from empathos.llm import ChatRequest, auto_reply, fault
from empathos.llm.scripted import Reply

SECRET_WORD = "sourdough"  # appears in the opening line of the bundled case en-01-sourdough


def fail_on_sourdough(request: ChatRequest) -> Reply:
    """An endpoint outage for one case: any request that mentions its topic fails (fatal)."""
    if any(SECRET_WORD in m.content.lower() for m in request.messages):
        raise fault("fatal", "scripted outage for the sourdough case")
    return auto_reply(request)


def slow(request: ChatRequest) -> Reply:
    """The default scripted reply, 50 ms late (so a run can be interrupted part-way)."""
    time.sleep(0.05)
    return auto_reply(request)
