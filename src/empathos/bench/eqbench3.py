"""EQ-Bench 3's rubric pass: scenarios, the conversation's user turns, the judge's prompt and
answer, and the score as the benchmark aggregates it.

Pure (no I/O). The benchmark's method, in our own words, as its code runs it:

- **Scenarios** (``scenario_prompts.txt``): read by the benchmark's own parser
  (:mod:`empathos.pairwise.eqbench_scenarios`): only a ``####### Prompt<N>`` line opens a
  scripted user turn, so a scenario whose turns open otherwise is dropped silently, as
  there (scenario 409 of the current file: 45 scenarios run). Ids 401-420 are analysis
  tasks, 201-209 message drafting, the others role-plays.
- **The conversation.** Each scripted turn is sent in one growing conversation, filled into
  the task kind's master prompt (its ``{scenario_prompt}`` slot). Role-plays and drafting
  tasks end with the debrief prompt, answered in the same conversation. An analysis task is
  one turn: the master prompt around the scenario's whole text, and no debrief.
- **The judge** gets the rubric prompt of the task kind with ``{transcript}`` (``User:`` /
  ``Assistant:`` blocks separated by ``---``; a role-play's or drafting task's reply shown
  rebuilt from its three parsed sections, :mod:`empathos.pairwise.eqbench_sections`, so a
  reply that ignores the format shows empty sections; an analysis reply as written),
  ``{debrief}`` (the model's debrief, whole) and ``{output_format}`` (a JSON object: a
  detailed chain-of-thought reasoning first, then every criterion of the criteria file as
  ``0-20``), and every ``*`` and ``#`` taken out of the whole prompt, as the benchmark does.
- **The judge's answer** is read as the benchmark reads it: every key of its JSON object
  but the reasoning, a number as it is (out of 0-20 too), a text by the first unsigned
  number in it (``"Score: 15"`` is 15).
- **Scores.** A task's score is the mean of the scored criteria the judge rated, whether or
  not the criteria file lists them (for role-plays and drafting tasks the benchmark's ten,
  for analysis tasks the analysis criteria file's; ``overall_eq`` counts three times where
  scored); the run's rubric score is the mean of the task scores (0-20, rounded to 2
  decimals), shown times 5 (0-100). The other criteria (warmth, moralising, ...) are kept
  and reported but not scored. A judge answer with no scored criterion is no score: the
  item is an error, never a zero (the benchmark leaves such a task out of its mean too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import json_repair

from empathos.errors import InputError
from empathos.pairwise.eqbench_scenarios import scenario_headers, scenario_prompts
from empathos.pairwise.eqbench_sections import TaskKind, demarked, kind_of, parse_sections, rebuilt

__all__ = [
    "REASONING",
    "ROLEPLAY_ALLOWED",
    "Scenario",
    "TaskKind",
    "judge_prompt",
    "output_format",
    "parse_judge",
    "parse_scenarios",
    "rubric_score",
    "task_kind",
    "task_score",
    "transcript_text",
    "user_turns",
]

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
#: The judge's reasoning key, first in the output format and never read as a score.
REASONING = "chain_of_thought_reasoning"
_REASONING_ASK = "your detailed chain-of-thought reasoning on each criterion, before scoring"


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
    return kind_of(scenario_id)


def parse_scenarios(text: str) -> list[Scenario]:
    """The scenarios of a scenario file's text, as the benchmark's parser reads them (see
    :mod:`empathos.pairwise.eqbench_scenarios`); InputError: no scenario at all."""
    headers = scenario_headers(text)
    out = [
        Scenario(sid, *headers.get(sid, ("", "")), tuple(turns))
        for sid, turns in scenario_prompts(text).items()
    ]
    if not out:
        raise InputError("no scenario with a '####### Prompt1' turn")
    return out


def user_turns(scenario: Scenario, master: str) -> list[str]:
    """The user messages of the conversation: each scripted turn filled into the master
    prompt (an analysis task has one)."""
    return [master.replace("{scenario_prompt}", t) for t in scenario.turns]


def transcript_text(messages: Sequence[Mapping[str, str]], kind: TaskKind = "roleplay") -> str:
    """The conversation as the benchmark's rubric judge sees it: ``User:`` / ``Assistant:``
    blocks separated by ``---``, a role-play's or drafting task's replies rebuilt from their
    three parsed sections (an analysis task's as written)."""
    parts = []
    for m in messages:
        content = m["content"]
        if m["role"] != "user" and kind != "analysis":
            content = rebuilt(parse_sections(content, kind), kind, "rubric")
        parts.append(f"{'User' if m['role'] == 'user' else 'Assistant'}:\n{content}\n")
    return "---\n".join(parts)


def output_format(criteria: Sequence[str]) -> str:
    """The ``{output_format}`` slot: the reasoning first, then every criterion as 0-20."""
    lines = [f"  {json.dumps(REASONING)}: {json.dumps(_REASONING_ASK)}"]
    lines += [f"  {json.dumps(c)}: 0-20" for c in criteria]
    return "{\n" + ",\n".join(lines) + "\n}"


def judge_prompt(template: str, transcript: str, debrief: str, criteria: Sequence[str]) -> str:
    """The rubric prompt with its slots filled in one pass (the template's doubled braces
    read as single ones, as Python's format reads them), then every ``*`` and ``#`` out."""
    values = {
        "transcript": transcript,
        "debrief": debrief,
        "output_format": output_format(criteria),
    }

    def fill(m: re.Match[str]) -> str:
        return m.group(0)[0] if m.group(1) is None else values[m.group(1)]

    return demarked(re.sub(r"\{\{|\}\}|\{(transcript|debrief|output_format)\}", fill, template))


def parse_judge(reply: str) -> dict[str, float]:
    """Criterion -> score from the judge's JSON (repaired if broken), read as the benchmark
    reads it: every key but the reasoning; a number as it is, whatever its range (JSON
    true/false count as 1/0, Python's ints); a text by its first unsigned number."""
    try:
        data = json_repair.loads(reply)
    except Exception:  # a judge's reply is anything
        data = None
    if not isinstance(data, dict):
        return {}
    out: dict[str, float] = {}
    for name, value in data.items():
        if isinstance(value, int | float):
            out[str(name)] = float(value)
        elif name != REASONING:
            m = re.search(r"\b(\d+(\.\d+)?)\b", str(value))
            if m:
                out[str(name)] = float(m.group(1))
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
