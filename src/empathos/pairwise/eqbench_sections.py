"""How EQ-Bench 3 shows a reply to its judges: the reply's three sections, parsed, cut and
rebuilt (docs/pairwise.md and docs/bench.md, "as the benchmark runs it").

Pure. The benchmark's master prompts ask a role-play reply for three headed sections
(thinking & feeling; their thinking & feeling; the response) and a drafting reply for three
others (perspective-taking; draft brainstorming; the draft). Its judges never see the raw
reply: the benchmark parses the sections and shows them rebuilt, so a reply that ignores
the format shows empty sections. The rules, as its code applies them:

- **Parsing** (case-insensitive): a section starts at its heading line (``#``, optional
  spaces, the heading, then a line break) and runs to the next ``#`` anywhere, or to the
  end; the last section (the response, the draft) runs to the next ``--`` instead. Each
  is stripped. An analysis task's reply is one raw text.
- **Cutting** (pairwise pass only): each section at its own limit (2,200 characters for
  the first, 1,600 for the other two), an analysis reply at 6,000, a debrief at 4,000, a
  reply the benchmark holds no parsed sections of at 4,000 (shown raw); a cut text ends in
  ``... [truncated]``.
- **Rebuilding**: the three headings and sections, then ``--``; the rubric pass joins them
  with a line break and a blank line before the 2nd and 3rd headings and the ``--``, the
  pairwise pass with blank lines. A ``<think>...</think>`` block is dropped from an
  analysis reply and a debrief before the pairwise judge sees them (a role-play's sections
  are parsed from the raw reply, as the benchmark stores them), and every ``*`` and ``#``
  is taken out of the text shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

__all__ = [
    "ANALYSIS_LIMIT",
    "DEBRIEF_LIMIT",
    "SECTION_LIMITS",
    "Layout",
    "TaskKind",
    "cut",
    "demarked",
    "kind_of",
    "pairwise_history",
    "parse_sections",
    "rebuilt",
    "shown_reply",
    "without_think",
]

TaskKind = Literal["roleplay", "drafting", "analysis"]
Layout = Literal["rubric", "pairwise"]
CUT_MARK = "... [truncated]"
DEBRIEF_LIMIT = 4000
ANALYSIS_LIMIT = 6000
RAW_LIMIT = 4000
_APOS = "['\u2019]"
#: Per kind: (section key, heading pattern, the heading shown, its character limit).
_SECTIONS: dict[str, tuple[tuple[str, str, str, int], ...]] = {
    "roleplay": (
        ("thinking_feeling", rf"I{_APOS}m thinking & feeling", "I'm thinking & feeling", 2200),
        (
            "their_thinking_feeling",
            rf"They{_APOS}re thinking & feeling",
            "They're thinking & feeling",
            1600,
        ),
        ("response", "My response", "My response", 1600),
    ),
    "drafting": (
        ("perspective_taking", "Perspective[- ]taking", "Perspective-taking", 2200),
        ("draft_brainstorming", "Draft brainstorming", "Draft brainstorming", 1600),
        ("draft", "Draft", "Draft", 1600),
    ),
}
#: Section key -> its character limit in the pairwise pass.
SECTION_LIMITS: dict[str, int] = {k: n for v in _SECTIONS.values() for k, _, _, n in v}


def kind_of(scenario_id: str) -> TaskKind:
    """401-420: analysis; 201-209: message drafting; otherwise a role-play."""
    number = int(scenario_id) if scenario_id.isdigit() else -1
    if 401 <= number <= 420:
        return "analysis"
    if 201 <= number <= 209:
        return "drafting"
    return "roleplay"


def parse_sections(reply: str, kind: TaskKind) -> dict[str, str]:
    """The reply's sections by key ('' where its heading is missing); {} for analysis."""
    out: dict[str, str] = {}
    specs = _SECTIONS.get(kind, ())
    for n, (key, heading, _, _) in enumerate(specs):
        stop = "--" if n == len(specs) - 1 else "#"
        m = re.search(
            rf"#\s*{heading}\s*\n(.*?)(?={stop}|\Z)", reply, flags=re.IGNORECASE | re.DOTALL
        )
        out[key] = m.group(1).strip() if m else ""
    return out


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, marked when cut."""
    return text if len(text) <= limit else text[:limit] + CUT_MARK


def rebuilt(
    sections: Mapping[str, str], kind: TaskKind, layout: Layout, limits: bool = False
) -> str:
    """The sections under their headings, then ``--`` (``limits``: each cut first)."""
    parts: list[str] = []
    for n, (key, _, shown, limit) in enumerate(_SECTIONS[kind]):
        text = sections.get(key, "")
        text = cut(text, limit) if limits and text else text
        lead = "\n" if layout == "rubric" and n else ""
        parts += [f"{lead}# {shown}", text]
    parts.append("\n--" if layout == "rubric" else "--")
    return ("\n" if layout == "rubric" else "\n\n").join(parts)


def without_think(text: str) -> str:
    """The text after a ``<think>...</think>`` block (unchanged without one)."""
    if "<think>" in text and "</think>" in text:
        return text[text.find("</think>") + len("</think>") :].strip()
    return text


def demarked(text: str) -> str:
    """The text without ``*`` and ``#`` (what the benchmark shows its judges)."""
    return text.replace("*", "").replace("#", "")


def shown_reply(content: str, kind: TaskKind, sectioned: bool = True) -> str:
    """One reply as the benchmark's pairwise judge sees it: rebuilt from its cut sections
    when ``sectioned`` (a role-play or drafting task the benchmark parsed), else without
    its think block and cut at 4,000 characters (its fallback); an analysis reply without
    its think block, cut at 6,000; ``*`` and ``#`` taken out."""
    if kind == "analysis":
        content = cut(without_think(content), ANALYSIS_LIMIT)
    elif sectioned:  # parsed from the raw reply, as stored there
        content = rebuilt(parse_sections(content, kind), kind, "pairwise", limits=True)
    else:
        content = cut(without_think(content), RAW_LIMIT)
    return demarked(content)


def pairwise_history(
    messages: Sequence[tuple[str, str]], kind: TaskKind, sectioned: bool = True
) -> str:
    """A conversation ((role, content) pairs) as the benchmark's pairwise judge sees it:
    ``Role:`` blocks ended by ``---``, each reply as :func:`shown_reply` shows it."""
    blocks = []
    for role, content in messages:
        shown = shown_reply(content, kind, sectioned) if role == "assistant" else demarked(content)
        blocks.append(f"{role.capitalize()}:\n{shown}\n---")
    return "\n".join(blocks)
