"""Scripted reply handlers of the empa-release run tests."""

from __future__ import annotations

from pathlib import Path

from empathos.llm import ChatRequest, auto_reply, fault
from empathos.llm.scripted import Reply


def outage_while_flagged(request: ChatRequest) -> Reply:
    """An outage for the sourdough case while ``outage.flag`` exists in the working dir."""
    text = " ".join(m.content.lower() for m in request.messages)
    if "sourdough" in text and Path("outage.flag").exists():
        raise fault("fatal", "scripted outage for the sourdough case")
    return auto_reply(request)


def user_times_out(request: ChatRequest) -> Reply:
    """The sourdough case's user (the release's actor) raises a plain TimeoutError, not a
    model error: an upstream library timing out under the handler."""
    text = " ".join(m.content.lower() for m in request.messages)
    if "sourdough" in text:
        raise TimeoutError("upstream took too long")
    return auto_reply(request)
