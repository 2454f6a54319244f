"""EQ-Bench 3's scenario file read by the benchmark's own rules (``scenario_prompts.txt``).

Pure. As the benchmark's parser reads it, line by line, each line stripped first:

- a line of eight ``#`` (then optional spaces) opens a scenario; its id is the first word
  after them (the ``| category | title`` that follows is not part of it);
- a line of seven ``#``, optional spaces, ``Prompt`` and a number opens the scenario's next
  scripted user turn; only such a line does: a scenario whose turns open otherwise (say
  ``####### 1``) collects no turn, and a scenario with no turn is dropped silently;
- while a turn is open every other line is its text (kept unstripped on the left, even a
  line of seven ``#`` that is not a ``Prompt`` header); lines outside a turn are ignored;
- a turn's text is its lines joined and stripped; an empty one is dropped; a scenario id
  seen twice keeps its first place and its last turns.
"""

from __future__ import annotations

import re

__all__ = ["scenario_headers", "scenario_prompts"]

_SCENARIO = re.compile(r"^#{8}\s*(\S+)")
_PROMPT = re.compile(r"^#{7}\s*Prompt(\d+)")


def scenario_prompts(text: str) -> dict[str, list[str]]:
    """Scenario id -> its scripted user turns, in file order (see the module docstring)."""
    out: dict[str, list[str]] = {}
    sid: str | None = None
    turns: list[str] = []
    lines: list[str] | None = None  # the open turn's lines

    def close_turn() -> None:
        if lines:
            body = "\n".join(lines).strip()
            if body:
                turns.append(body)

    for raw in text.splitlines():
        line = raw.strip()
        if (m := _SCENARIO.match(line)) is not None:
            close_turn()
            if sid is not None and turns:
                out[sid] = turns
            sid, turns, lines = m.group(1), [], None
        elif _PROMPT.match(line):
            if sid is None:
                continue
            close_turn()
            lines = []
        elif sid is not None and lines is not None:
            lines.append(raw)
    close_turn()
    if sid is not None and turns:
        out[sid] = turns
    return out


def scenario_headers(text: str) -> dict[str, tuple[str, str]]:
    """Scenario id -> (category, title) of its header line (``''`` where it has none)."""
    out: dict[str, tuple[str, str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if (m := _SCENARIO.match(line)) is not None:
            rest = line[m.end() :].split("|")
            category = rest[1].strip() if len(rest) > 1 else ""
            title = "|".join(rest[2:]).strip() if len(rest) > 2 else ""
            out[m.group(1)] = (category, title)
    return out
