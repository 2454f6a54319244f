"""Scripted reply handlers that run configs name as ``run_handlers.py:function``."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

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


#: Names a file; while it exists, :func:`slow` holds the cases after the first two back.
GATE_ENV = "RUN_HANDLERS_GATE"
# Words of the opening lines of the first two cases of the run-control tests (en-01, en-02).
_FIRST_CASES = ("sourdough", "wired and empty")


def slow(request: ChatRequest) -> Reply:
    """The default scripted reply, 50 ms late (so a run can be interrupted part-way).

    While the file named by ``$RUN_HANDLERS_GATE`` exists, a request of any case but the first
    two is 0.5 s late: a test that waits for two records and then signals the run has the
    rest of the run (tens of seconds) to land its signal, however loaded the machine."""
    time.sleep(0.05)
    gate = os.environ.get(GATE_ENV)
    held = gate is not None and Path(gate).exists()
    text = " ".join(m.content.lower() for m in request.messages)
    if held and not any(word in text for word in _FIRST_CASES):
        time.sleep(0.45)
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


def _levels(text: str, choices: tuple[int, ...], n: int) -> list[int]:
    digest = hashlib.sha256(text.encode()).digest()
    return [choices[b % len(choices)] for b in digest[:n]]


def judge_by_prompt(request: ChatRequest) -> Reply:
    """A judge whose levels follow its whole prompt (a hash of every message): the same prompt
    always gets the same ratings, and a prompt that differs in anything gets others."""
    text = "\n".join(m.content for m in request.messages)
    if request.schema_name == "MDEPForm":
        prog = _levels("prog" + text, (0, 1, 2), 3)
        neg = _levels("neg" + text, (0, 0, -1, -2), 3)
        return {
            f"{axis}.{kind}": {"level": lv, "evidence": "e", "reasoning": "by prompt"}
            for axis, p, n in zip("CAP", prog, neg, strict=True)
            for kind, lv in (("Prog", p), ("Neg", n))
        }
    if request.schema_name == "IEDRForm":
        keys = ("C.1", "C.2", "C.3", "A.1", "A.2", "A.3", "P.1", "P.2", "P.3")
        levels = _levels("iedr" + text, (1, 2, 3), 9)
        pairs = zip(keys, levels, strict=True)
        return {k: {"level": lv, "evidence": "e", "reasoning": "r"} for k, lv in pairs}
    return auto_reply(request)


def judge_deep(request: ChatRequest) -> Reply:
    """A judge of known behaviour: every reply deep progress on every axis, no harm (v_t =
    (+3, +3, +3) each evaluation), and every IEDR indicator at level 2."""
    if request.schema_name == "MDEPForm":
        return {
            f"{axis}.{kind}": {
                "level": 2 if kind == "Prog" else 0,
                "evidence": "e",
                "reasoning": "r",
            }
            for axis in "CAP"
            for kind in ("Prog", "Neg")
        }
    if request.schema_name == "IEDRForm":
        keys = ("C.1", "C.2", "C.3", "A.1", "A.2", "A.3", "P.1", "P.2", "P.3")
        return {k: {"level": 2, "evidence": "e", "reasoning": "r"} for k in keys}
    return auto_reply(request)


def judge_slow_but_sourdough(request: ChatRequest) -> Reply:
    """A judge that answers the sourdough case at once and every other case 2 s late (a
    re-judging interrupted after its first record is part-way through the second)."""
    if not any(SECRET_WORD in m.content.lower() for m in request.messages):
        time.sleep(2.0)
    return auto_reply(request)
