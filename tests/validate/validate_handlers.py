"""Scripted judges of known behaviour for the validation tests (``file.py:function``).

Every reply the test records hold addresses one axis through a keyword (``understand`` for
C, ``feel`` for A, ``you can`` for P); the judges below read that keyword from the rated
reply (the last supporter line of the window) and, depending on the judge, the persona's
priorities from the condensed profile.
"""

from __future__ import annotations

import hashlib
import random
import re

from empathos.llm import ChatRequest, auto_reply
from empathos.llm.scripted import Reply
from empathos.prompts import rated_reply

KEYWORDS = {"C": "understand", "A": "feel", "P": "you can"}
REPLIES = {
    "C": "I understand: the real problem is that the plan fell apart, not that you failed.",
    "A": "I feel how heavy this is for you; that sadness makes complete sense.",
    "P": "You can take one small step tonight, and you have done harder things before.",
}
#: The same three replies in Chinese (the records of the Chinese scenarios hold these).
REPLIES_ZH = {
    "C": "我理解：真正的问题是计划落空了，而不是你失败了。",
    "A": "我能感受到这件事对你有多沉重，这份难过完全说得通。",
    "P": "今晚你可以先迈出一小步，你以前做过更难的事。",
}
#: Words that make the affect-fooled judge see progress, whatever the reply does.
AFFECT_WORDS = ("feel", "sorry", "understand", "heart", "love", "warm", "moved", "touch",
                "感受", "理解", "陪你", "爱", "温暖", "感动", "拥抱", "触动")  # fmt: skip
_PROG = {"high": 2, "medium": 1, "low": 0}


def _prompt(request: ChatRequest) -> str:
    return "\n".join(m.content for m in request.messages)


def _reply(text: str) -> str:
    """The rated reply: the last supporter line (MDEP: the window is the end of the
    conversation, named by its turns) or the reply block."""
    if "# The window to rate" in text:
        lines = [ln for ln in text.splitlines() if ln.startswith("supporter")]
        return lines[-1] if lines else ""
    if "The reply to rate" in text:
        return text.split("The reply to rate", 1)[1].split("Give one overall rating", 1)[0]
    return ""


def _priorities(text: str) -> dict[str, str]:
    m = re.search(r"Priorities: C (\w+); A (\w+); P (\w+)", text)
    if m is None:
        return {"C": "medium", "A": "medium", "P": "medium"}
    return dict(zip("CAP", m.groups(), strict=True))


def _addressed(reply: str) -> list[str]:
    low = reply.lower()
    return [axis for axis, word in KEYWORDS.items() if word in low]


def _form(prog: dict[str, int], neg: dict[str, int]) -> dict[str, object]:
    out: dict[str, object] = {}
    for axis in "CAP":
        out[f"{axis}.Prog"] = {"level": prog.get(axis, 0), "evidence": "0", "reasoning": "r"}
        out[f"{axis}.Neg"] = {"level": neg.get(axis, 0), "evidence": "0", "reasoning": "r"}
    return out


def _mdep(text: str, *, persona: bool) -> dict[str, object]:
    reply = _reply(text)
    pri = _priorities(text)
    prog: dict[str, int] = {}
    neg: dict[str, int] = {}
    for axis in _addressed(reply):
        if persona:
            prog[axis] = _PROG[pri[axis]]
            if pri[axis] == "low":
                neg[axis] = -1
        else:
            prog[axis] = 1
    return _form(prog, neg)


def _direct_by_substance(text: str) -> dict[str, object]:
    return {"rating": 7 if _addressed(_reply(text)) else 3, "reason": "substance"}


def persona_sensitive(request: ChatRequest) -> Reply:
    """Credits the addressed axis by the persona's priority (high 2, medium 1, low 0 and -1
    harm): a flipped persona turns a well-aimed reply into a miss."""
    text = _prompt(request)
    if request.schema_name == "MDEPForm":
        return _mdep(text, persona=True)
    if request.schema_name == "DirectRating":
        return _direct_by_substance(text)
    return auto_reply(request)


def persona_blind(request: ChatRequest) -> Reply:
    """Credits the addressed axis with level 1 whoever the person is."""
    text = _prompt(request)
    if request.schema_name == "MDEPForm":
        return _mdep(text, persona=False)
    if request.schema_name == "DirectRating":
        return _direct_by_substance(text)
    return auto_reply(request)


def surface_intensity(request: ChatRequest) -> Reply:
    """Rubric ratings by substance (as persona_sensitive), but a direct rating that grows
    with exclamation marks and capitals: it rewards surface intensity when asked directly."""
    text = _prompt(request)
    if request.schema_name == "MDEPForm":
        return _mdep(text, persona=True)
    if request.schema_name == "DirectRating":
        reply = _reply(text)
        loud = reply.count("!") + sum(1 for w in reply.split() if len(w) > 1 and w.isupper())
        return {"rating": min(10, 4 + 2 * loud), "reason": "intensity"}
    return auto_reply(request)


def random_judge(request: ChatRequest) -> Reply:
    """Uniformly random levels, fixed per prompt (so the cache and reruns agree)."""
    text = _prompt(request)
    rng = random.Random(hashlib.sha256(text.encode()).hexdigest())
    if request.schema_name == "MDEPForm":
        prog = {a: rng.choice([0, 1, 2]) for a in "CAP"}
        neg = {a: rng.choice([0, -1, -2]) for a in "CAP"}
        return _form(prog, neg)
    if request.schema_name == "DirectRating":
        return {"rating": rng.randint(1, 10), "reason": "dice"}
    return auto_reply(request)


def credit_mover(request: ChatRequest) -> Reply:
    """Any reply with substance earns level 2 on whichever axis the persona ranks highest
    (high, else the first medium): a flip moves the credit to another axis without changing
    its total."""
    text = _prompt(request)
    if request.schema_name == "MDEPForm":
        pri = _priorities(text)
        top = [a for a in "CAP" if pri[a] == "high"] or [a for a in "CAP" if pri[a] == "medium"]
        prog = {top[0]: 2} if top and _addressed(_reply(text)) else {}
        return _form(prog, {})
    return auto_reply(request)


def affect_words(request: ChatRequest) -> Reply:
    """Fooled by affect words: progress on every axis whenever the rated reply (found by the
    library's own helper, in either language) holds one of AFFECT_WORDS, nothing otherwise.
    Performative warmth is exactly what such a judge rewards."""
    if request.schema_name == "MDEPForm":
        reply = rated_reply(_prompt(request)).lower()
        level = 1 if any(w in reply for w in AFFECT_WORDS) else 0
        return _form(dict.fromkeys("CAP", level), {})
    if request.schema_name == "DirectRating":
        return {"rating": 5, "reason": "constant"}
    return auto_reply(request)
