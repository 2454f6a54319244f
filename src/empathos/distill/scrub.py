"""Filter and scrub a conversation before any model sees it.

**Scrub.** Personal data is replaced by typed placeholders (``[NAME]``, ``[PHONE]``,
``[EMAIL]``, ``[ADDRESS]``, ``[URL]``, ``[ID]``). When Microsoft Presidio
(``presidio_analyzer``) is installed and its engine starts, its findings are replaced first;
the pattern pass below always runs after it, so the guarantees listed here hold either way:

- names: from speaker tags, self-introductions ("my name is", "I'm", "call me", "this is";
  "我叫", "我的名字是/叫", "叫我") and greetings that address someone ("Hi Anna,"); each
  name found is then replaced everywhere in the conversation (full name and each part);
- e-mail addresses and URLs;
- ID-like numbers (SSN-style ``123-45-6789``, 18-character Chinese ID numbers, letter-prefixed
  numbers such as ``AB1234567``, any other run of six or more digits);
- phone numbers (seven or more digits, with optional ``+``, spaces, dots, dashes, brackets);
- street addresses ("12 Elm Street", "4B Harbour Road"; "...路/街/大道/巷/弄 N号" with
  building and room numbers).

Patterns miss what they do not describe (a name never introduced, a town named in passing);
review a sample (``empathos distill review``) before publishing a set.

**Filter.** Empty lines and lines that are only pleasantries are dropped; a conversation with
fewer than two seeker lines or under 80 characters of seeker text is skipped.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from empathos.distill.formats import Conversation, ConversationTurn

__all__ = [
    "MIN_SEEKER_CHARS",
    "MIN_SEEKER_TURNS",
    "PLACEHOLDERS",
    "ScrubResult",
    "filter_conversation",
    "find_names",
    "presidio_available",
    "scrub_conversation",
    "scrub_text",
]

MIN_SEEKER_TURNS = 2
MIN_SEEKER_CHARS = 80
PLACEHOLDERS = ("[NAME]", "[PHONE]", "[EMAIL]", "[ADDRESS]", "[URL]", "[ID]")

_NAME_WORD = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"
_EN_INTRO = re.compile(
    rf"(?i:\bmy name is|\bmy name's|\bi'm|\bi am|\bcall me|\bthis is|\bname's)\s+"
    rf"({_NAME_WORD}(?:\s+{_NAME_WORD})?)"
)
_EN_GREETING = re.compile(
    rf"(?:^|[.!?]\s+)(?i:hi|hello|hey|dear|thanks|thank you|sorry)\s*,?\s+({_NAME_WORD})\b"
)
_ZH_END = r"(?=[，。,.!！?？、\s]|今年|是|在|从|和|$)"
_ZH_INTRO = re.compile(
    rf"(?:我叫|我的名字是|我的名字叫|叫我|我是)([\u4e00-\u9fff]{{2,3}}?){_ZH_END}"
)
# Capitalised words that follow "I'm" / "this is" but are not names.
_NOT_NAMES = frozenset(
    [
        "A",
        "An",
        "The",
        "I",
        "It",
        "So",
        "Not",
        "Just",
        "Really",
        "Very",
        "Still",
        "Here",
        "There",
        "Sorry",
        "Fine",
        "Okay",
        "Ok",
        "Tired",
        "Afraid",
        "Scared",
        "Sad",
        "Happy",
        "Glad",
        "Worried",
        "Angry",
        "Lost",
        "Done",
        "Alone",
        "Back",
        "Home",
        "Everyone",
        "Nobody",
        "Someone",
        "English",
        "Chinese",
        "American",
        "British",
        "French",
        "German",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Good",
        "Bad",
        "Sure",
        "Well",
        "Yes",
        "No",
        "Hello",
        "Hi",
        "Hey",
        "Thanks",
        "Thank",
        "Dear",
        "All",
        "Again",
        "Going",
        "Feeling",
        "Trying",
        "Stuck",
        "Okay",
        "Honestly",
        "Actually",
        "Maybe",
        "Probably",
        "Always",
        "Never",
    ]
)
# Chinese words that follow 我是 but are not names.
_ZH_NOT_NAMES = frozenset(
    [
        "一个",
        "一名",
        "学生",
        "老师",
        "医生",
        "护士",
        "妈妈",
        "爸爸",
        "女儿",
        "儿子",
        "真的",
        "不是",
        "觉得",
        "怎么",
        "什么",
        "已经",
        "这样",
        "那样",
        "一位",
        "有点",
        "今年",
        "从小",
        "很多",
        "不想",
        "没有",
        "自己",
    ]
)

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"'，。]+")
_IDS = (
    re.compile(r"(?<![0-9A-Za-z])\d{3}-\d{2}-\d{4}(?![0-9A-Za-z])"),
    re.compile(r"(?<![0-9A-Za-z])\d{17}[\dXx](?![0-9A-Za-z])"),
    re.compile(r"(?<![0-9A-Za-z])[A-Z]{1,3}\d{6,}(?![0-9A-Za-z])"),
)
_PHONE = re.compile(r"(?<![0-9A-Za-z+])\+?\(?\d[\d\s().\-]{5,}\d(?![0-9A-Za-z])")
_LONG_DIGITS = re.compile(r"(?<![0-9A-Za-z])\d{6,}(?![0-9A-Za-z])")
_STREET = (
    r"Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Boulevard|Blvd|Court|Ct|Way|Place|Pl|"
    r"Terrace|Close|Crescent|Square|Sq"
)
_ADDRESS_EN = re.compile(
    rf"\b\d{{1,5}}[A-Za-z]?,?\s+(?:{_NAME_WORD}\s+){{1,3}}(?:{_STREET})\b\.?"
    r"(?:,?\s+(?:Apt|Apartment|Flat|Unit|Suite)\.?\s*\w+)?"
)
_ADDRESS_ZH = re.compile(
    r"[\u4e00-\u9fff]{1,12}(?:路|街|大道|巷|弄)\d+号(?:\d+(?:栋|幢|号楼))?(?:\d+(?:单元|室|号))*"
)
_PLEASANTRY = re.compile(
    r"^\W*(?i:hi|hello|hey|thanks|thank you|ok|okay|bye|goodbye|you're welcome|"
    r"你好|您好|谢谢|好的|嗯|再见|拜拜)\W*$"
)


@dataclass(frozen=True)
class ScrubResult:
    """A scrubbed conversation and what was replaced (counts by placeholder; never values)."""

    conversation: Conversation
    counts: dict[str, int] = field(default_factory=dict)
    method: str = "patterns"


def presidio_available() -> bool:
    """True when Microsoft Presidio's analyzer is installed (it is used first when it is)."""
    return importlib.util.find_spec("presidio_analyzer") is not None


def _latin(name: str) -> bool:
    return all(ch.isascii() for ch in name)


def find_names(conv: Conversation) -> set[str]:
    """Names in speaker tags, self-introductions and greetings (full names and their parts)."""
    found: set[str] = set(conv.speaker_names())
    for turn in conv.turns:
        for m in _EN_INTRO.finditer(turn.text):
            words = [w for w in m.group(1).split() if w not in _NOT_NAMES]
            if words and words[0] == m.group(1).split()[0]:
                found.add(" ".join(words))
        for m in _EN_GREETING.finditer(turn.text):
            if m.group(1) not in _NOT_NAMES:
                found.add(m.group(1))
        for m in _ZH_INTRO.finditer(turn.text):
            if m.group(1) not in _ZH_NOT_NAMES:
                found.add(m.group(1))
    parts = {p for n in found if _latin(n) for p in n.split() if len(p) > 1}
    return {n.strip() for n in found | parts if n.strip()}


def _sub(pattern: re.Pattern[str], tag: str, text: str, counts: Counter[str]) -> str:
    def repl(_: re.Match[str]) -> str:
        counts[tag] += 1
        return tag

    return pattern.sub(repl, text)


def _phone(text: str, counts: Counter[str]) -> str:
    def repl(m: re.Match[str]) -> str:
        if sum(ch.isdigit() for ch in m.group(0)) < 7:
            return m.group(0)
        counts["[PHONE]"] += 1
        return "[PHONE]"

    return _PHONE.sub(repl, text)


def scrub_text(
    text: str, names: set[str] | frozenset[str] = frozenset()
) -> tuple[str, Counter[str]]:
    """``text`` with personal data replaced by placeholders, and the counts of each kind."""
    counts: Counter[str] = Counter()
    text = _sub(_EMAIL, "[EMAIL]", text, counts)
    text = _sub(_URL, "[URL]", text, counts)
    for pattern in _IDS:
        text = _sub(pattern, "[ID]", text, counts)
    text = _sub(_ADDRESS_EN, "[ADDRESS]", text, counts)
    text = _sub(_ADDRESS_ZH, "[ADDRESS]", text, counts)
    text = _phone(text, counts)
    text = _sub(_LONG_DIGITS, "[ID]", text, counts)
    for name in sorted(names, key=len, reverse=True):
        if _latin(name):
            pattern = re.compile(rf"(?<![A-Za-z]){re.escape(name)}(?![a-z])")
        else:
            pattern = re.compile(re.escape(name))
        text = _sub(pattern, "[NAME]", text, counts)
    return text, counts


_ENTITY_TAGS = {
    "PERSON": "[NAME]",
    "PHONE_NUMBER": "[PHONE]",
    "EMAIL_ADDRESS": "[EMAIL]",
    "URL": "[URL]",
    "LOCATION": "[ADDRESS]",
    "US_SSN": "[ID]",
    "CREDIT_CARD": "[ID]",
    "IBAN_CODE": "[ID]",
}
_presidio_engine: Any = None


def _presidio(text: str, language: str, counts: Counter[str]) -> str:  # pragma: no cover
    """Presidio's findings replaced (English only: its default engine has no Chinese model)."""
    global _presidio_engine
    if language != "en":
        return text
    if _presidio_engine is None:
        module = importlib.import_module("presidio_analyzer")
        _presidio_engine = module.AnalyzerEngine()
    results = _presidio_engine.analyze(text=text, language="en", entities=list(_ENTITY_TAGS))
    for r in sorted(results, key=lambda r: r.start, reverse=True):
        tag = _ENTITY_TAGS.get(r.entity_type, "[ID]")
        counts[tag] += 1
        text = text[: r.start] + tag + text[r.end :]
    return text


def scrub_conversation(conv: Conversation, *, use_presidio: bool | None = None) -> ScrubResult:
    """The conversation with every turn scrubbed and speaker names removed."""
    names = find_names(conv)
    counts: Counter[str] = Counter()
    method = "patterns"
    want = presidio_available() if use_presidio is None else use_presidio
    turns = []
    for turn in conv.turns:
        text = turn.text
        if want:  # pragma: no cover - presidio is not installed in CI
            try:
                text = _presidio(text, conv.language, counts)
                method = "presidio+patterns"
            except Exception:  # its engine needs a spaCy model that may be missing
                want = False
        text, found = scrub_text(text, names)
        counts.update(found)
        turns.append(ConversationTurn(speaker=turn.speaker, text=text))
    labels = {k: scrub_text(v, names)[0] for k, v in conv.labels.items()}
    clean = conv.model_copy(update={"turns": turns, "labels": labels})
    return ScrubResult(conversation=clean, counts=dict(counts), method=method)


def filter_conversation(conv: Conversation) -> tuple[Conversation, str | None]:
    """Drop empty and pleasantry-only lines; the reason to skip the conversation, if any."""
    kept = [t for t in conv.turns if t.text.strip() and not _PLEASANTRY.match(t.text.strip())]
    clean = conv.model_copy(update={"turns": kept})
    seeker = [t.text for t in kept if t.speaker == "seeker"]
    if len(seeker) < MIN_SEEKER_TURNS:
        return clean, f"too short: {len(seeker)} seeker line(s) (need {MIN_SEEKER_TURNS})"
    if sum(len(s) for s in seeker) < MIN_SEEKER_CHARS:
        return clean, f"too short: under {MIN_SEEKER_CHARS} characters from the seeker"
    return clean, None
