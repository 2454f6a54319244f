"""EQ-Bench 3's rubric pass: scenarios, the conversation's user turns, the judge's prompt and
answer, and the score as the benchmark aggregates it.

Pure (no I/O). The benchmark's method, in our own words:

- **Scenarios** (``scenario_prompts.txt``): a line ``######## <id> | <category> | <title>``
  opens a scenario; each line starting ``####### `` opens its next scripted user turn, whose
  text runs to the next header. Ids 401-420 are analysis tasks, 201-209 message drafting,
  the others role-plays.
- **The conversation.** Each scripted turn is sent in one growing conversation, filled into
  the task kind's master prompt (its ``{scenario_prompt}`` slot). Role-plays and drafting
  tasks end with the debrief prompt, answered in the same conversation. An analysis task is
  one turn: the master prompt around the scenario's whole text, and no debrief.
- **The judge** gets the rubric prompt of the task kind with ``{transcript}`` (the turns as
  ``User:`` / ``Assistant:`` blocks), ``{debrief}`` (the model's debrief) and
  ``{output_format}`` (a JSON object of every criterion, written by us), and answers each
  criterion 0-20 in JSON.
- **Scores.** A task's score is the mean over its allowed criteria that the judge rated
  (``overall_eq`` counts three times); the run's rubric score is the mean of the task scores
  (0-20, rounded to 2 decimals), shown times 5 (0-100). The other criteria (warmth,
  moralising, ...) are kept and reported but not scored. A judge answer with no allowed
  criterion is no score: the item is an error, never a zero.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import json_repair

from empathos.errors import InputError

__all__ = [
    "ROLEPLAY_ALLOWED",
    "Scenario",
    "TaskKind",
    "judge_prompt",
    "parse_judge",
    "parse_scenarios",
    "rubric_score",
    "task_kind",
    "task_score",
    "transcript_text",
    "user_turns",
]

TaskKind = Literal["roleplay", "drafting", "analysis"]
#: The criteria that make a role-play's or drafting task's score (those the criteria file has).
ROLEPLAY_ALLOWED = (
    "demonstrated_empathy",
    "pragmatic_ei",
    "depth_of_insight",
    "social_dexterity",
    "emotional_reasoning",
    "message_tailoring",
    "theory_of_mind",
    "subtext_identification",
    "intellectual_grounding",
    "correctness",
)
OVERALL = "overall_eq"
OVERALL_WEIGHT = 3
_HEADER = re.compile(r"^######## +(\S+) *\|(.*?)\|(.*)$")
_TURN = "####### "


@dataclass(frozen=True, slots=True)
class Scenario:
    """One scenario: id, category, title and its scripted user turns."""

    id: str
    category: str
    title: str
    turns: tuple[str, ...]

    @property
    def kind(self) -> TaskKind:
        """The task kind its id gives."""
        return task_kind(self.id)


def task_kind(scenario_id: str) -> TaskKind:
    """401-420: analysis; 201-209: message drafting; otherwise a role-play."""
    number = int(scenario_id) if scenario_id.isdigit() else -1
    if 401 <= number <= 420:
        return "analysis"
    if 201 <= number <= 209:
        return "drafting"
    return "roleplay"


def parse_scenarios(text: str) -> list[Scenario]:
    """The scenarios of a scenario file's text; a malformed one is an InputError naming its
    line (the caller adds the file)."""
    found: list[tuple[tuple[str, str, str], list[list[str]], int]] = []
    for n, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            sid, category, title = (g.strip() for g in header.groups())
            found.append(((sid, category, title), [], n))
        elif line.startswith(_TURN):
            if not found:
                raise InputError("a turn before any scenario header", field=f"line {n}")
            found[-1][1].append([])
        elif found and found[-1][1]:
            found[-1][1][-1].append(line)
        elif found and line.strip():
            raise InputError("text before the scenario's first turn header", field=f"line {n}")
    out: list[Scenario] = []
    for (sid, category, title), turns, n in found:
        texts = tuple("\n".join(t).strip() for t in turns)
        if not texts or not all(texts):
            raise InputError(f"scenario {sid} has an empty or no turn", field=f"line {n}")
        out.append(Scenario(sid, category, title, texts))
    ids = [s.id for s in out]
    if len(set(ids)) != len(ids):
        raise InputError("a scenario id appears twice")
    return out


def user_turns(scenario: Scenario, master: str) -> list[str]:
    """The user messages of the conversation, each turn filled into the master prompt (an
    analysis task: one message, its turns joined)."""
    turns = ["\n\n".join(scenario.turns)] if scenario.kind == "analysis" else scenario.turns
    return [master.replace("{scenario_prompt}", t) for t in turns]


def transcript_text(messages: Sequence[Mapping[str, str]]) -> str:
    """The conversation as ``User:`` / ``Assistant:`` blocks separated by ``---``."""
    names = {"user": "User", "assistant": "Assistant"}
    return "\n\n---\n\n".join(
        f"{names.get(m['role'], m['role'])}:\n{m['content']}" for m in messages
    )


def judge_prompt(template: str, transcript: str, debrief: str, criteria: Sequence[str]) -> str:
    """The rubric prompt with its slots filled; ``{output_format}`` asks for every criterion."""
    shape = {"chain_of_thought_reasoning": "your notes on each criterion, briefly"}
    shape.update({c: "score 0-20" for c in criteria})
    return (
        template.replace("{transcript}", transcript)
        .replace("{debrief}", debrief)
        .replace("{output_format}", json.dumps(shape, indent=1))
    )


def parse_judge(reply: str, criteria: Sequence[str]) -> dict[str, float]:
    """Criterion -> score 0-20 from the judge's JSON (repaired if broken); criteria missing,
    out of range or not numbers are left out."""
    try:
        data = json_repair.loads(reply)
    except Exception:  # a judge's reply is anything
        data = None
    if not isinstance(data, dict):
        return {}
    out: dict[str, float] = {}
    for name in criteria:
        value = data.get(name)
        if isinstance(value, str):
            m = re.match(r"^\s*(-?\d+(?:\.\d+)?)", value)
            value = float(m.group(1)) if m else None
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 20:
            out[name] = float(value)
    return out


def task_score(scores: Mapping[str, float], allowed: Sequence[str]) -> float | None:
    """The mean of the allowed criteria the judge rated (``overall_eq`` weighted 3); None
    when the judge rated none of them."""
    total = weight = 0.0
    for name in allowed:
        if name in scores:
            w = OVERALL_WEIGHT if name == OVERALL else 1
            total += w * scores[name]
            weight += w
    return total / weight if weight else None


def rubric_score(task_scores: Sequence[float]) -> tuple[float, float] | None:
    """(rubric score 0-20 rounded to 2 decimals, that times 5 for 0-100); None: no task."""
    if not task_scores:
        return None
    mean = round(sum(task_scores) / len(task_scores), 2)
    return mean, round(mean * 5, 2)
