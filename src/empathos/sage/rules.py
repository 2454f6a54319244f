"""SAGE ("Sentient Agent as a Judge", Tencent/digitalhuman, folder ``SAGE/``): the emotion
dynamics, the simulator's prompts filled and its answers read, the stop rules, and the
Sentient numbers of result files.

Pure (no I/O). The benchmark's method, in our own words (docs/bench.md, "SAGE"):

- A simulated user with a hidden profile starts at emotion 40 and opens with the profile's
  first line. After each reply of the model under test, one call (the *analyser*) reasons
  about the reply and ends with ``Change:`` and an integer, clamped to -10..10, that moves the
  emotion (capped at 100, not floored); a second call (the *reply prompt*, given the analysis
  and the new emotion band) writes the user's next turn after ``Response:``.
- The dialogue stops after a user turn that says goodbye (``再见`` or ``拜拜``), or whose
  emotion is 100 or more (a success) or below 10 (a failure); otherwise after the 10th user
  turn and the reply to it.
- Bands: 100 or more ``Emotion-S``, 70 ``-A``, 40 ``-B``, 10 ``-C``, below 10 ``-F``.
- A model's **score** is the mean final emotion over the dialogues, rounded half up to one
  decimal; **successes** count ``Emotion-S`` dialogues, **failures** ``Emotion-F`` ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

__all__ = [
    "CHANGE_LIMIT",
    "EMOTION_CAP",
    "FAIL_BELOW",
    "GOODBYES",
    "MAX_USER_TURNS",
    "START_EMOTION",
    "SentientScore",
    "SimulatorPrompts",
    "analyser_prompt",
    "emotion_band",
    "ended",
    "half_up",
    "move_emotion",
    "npc_messages",
    "parse_analysis",
    "parse_user_reply",
    "rank_correlation",
    "reply_prompt",
    "sentient_score",
]

START_EMOTION = 40
EMOTION_CAP = 100
FAIL_BELOW = 10
CHANGE_LIMIT = 10
MAX_USER_TURNS = 10
GOODBYES = ("再见", "拜拜")
#: Each band's lower bound, highest first (below the last: ``Emotion-F``).
_BANDS = (("Emotion-S", 100), ("Emotion-A", 70), ("Emotion-B", 40), ("Emotion-C", 10))
_INT = re.compile(r"[+-]?\d+")


@dataclass(frozen=True, slots=True)
class SimulatorPrompts:
    """What the user's copy of SAGE gives the simulator and the model under test (read from
    its code at run time, never shipped).

    ``analysis_parts``: how the analysis is put into the reply prompt, in order: text pieces
    and ``{"key": name}`` references to the analysis' fields."""

    target: str
    analyser: str
    reply: str
    npc_system: str
    speakers: Mapping[str, str]
    analysis_parts: tuple[str | Mapping[str, str], ...]


def emotion_band(point: int) -> str:
    """The emotion's band (``Emotion-S`` ... ``Emotion-F``)."""
    for name, low in _BANDS:
        if point >= low:
            return name
    return "Emotion-F"


def move_emotion(point: int, change: int) -> int:
    """The emotion after a change (clamped to -10..10); capped at 100, not floored."""
    change = max(-CHANGE_LIMIT, min(CHANGE_LIMIT, change))
    return min(point + change, EMOTION_CAP)


def ended(user_text: str, point: int) -> bool:
    """The dialogue stops after this user turn (goodbye, success or failure)."""
    return any(g in user_text for g in GOODBYES) or point >= EMOTION_CAP or point < FAIL_BELOW


def _history_json(history: Sequence[Mapping[str, Any]], speakers: Mapping[str, str]) -> str:
    rows = [{"role": speakers[m["role"]], "content": m["content"]} for m in history]
    return json.dumps(rows, ensure_ascii=False, indent=2)


def analyser_prompt(
    prompts: SimulatorPrompts, profile: Mapping[str, Any], point: int,
    history: Sequence[Mapping[str, Any]],
) -> str:  # fmt: skip
    """The analyser's prompt: the emotion, the persona, the scene, the conversation goal and
    the whole dialogue so far (as the released code fills them, in its order)."""
    text = (
        prompts.analyser.replace("{{emotion}}", str(point))
        .replace("{{simulator_role}}", profile["player"])
        .replace("{{simulator_scene}}", profile["scene"])
        .replace("{{target}}", prompts.target)
    )
    return text.replace("{{dialog_history}}", _history_json(history, prompts.speakers))


def _analysis_text(prompts: SimulatorPrompts, analysis: Mapping[str, Any]) -> str:
    out = []
    for part in prompts.analysis_parts:
        out.append(part if isinstance(part, str) else str(analysis.get(part["key"], "")))
    return "".join(out)


def reply_prompt(
    prompts: SimulatorPrompts, profile: Mapping[str, Any], band: str,
    history: Sequence[Mapping[str, Any]], analysis: Mapping[str, Any],
) -> str:  # fmt: skip
    """The reply prompt: the analysis, the goal, the band, the persona, the scene, the
    dialogue before the last exchange and the last exchange apart."""
    text = (
        prompts.reply.replace("{{planning}}", _analysis_text(prompts, analysis))
        .replace("{{target}}", prompts.target)
        .replace("{{emotion}}", band)
        .replace("{{player_type}}", profile["player"])
        .replace("{{player_topic}}", profile["scene"])
    )
    return text.replace(
        "{{dialog_history}}", _history_json(history[:-2], prompts.speakers)
    ).replace("{{new_history}}", _history_json(history[-2:], prompts.speakers))


def _section(text: str, start: str, end: str | None) -> str:
    part = text.split(start)[-1]
    if end is not None:
        part = part.split(end)[0]
    return part.strip("\n").strip("[").strip("]")


def parse_analysis(reply: str) -> dict[str, Any] | None:
    """The analyser's answer as the released code reads it (full-width colons and ``*``
    dropped; each section up to the next one's header), ``change`` the first integer after
    ``Change:`` clamped to -10..10; None when there is no integer there."""
    text = reply.replace("：", ":").replace("*", "")
    found = _INT.findall(_section(text, "Change:", None))
    if not found:
        return None
    return {
        "activity": _section(text, "Activity:", "Analyse:\n"),
        "TargetCompletion": _section(text, "TargetCompletion:", "Activity:\n"),
        "content": _section(text, "Content:", "TargetCompletion:\n"),
        "analyse": _section(text, "Analyse:", "Change:\n"),
        "change": max(-CHANGE_LIMIT, min(CHANGE_LIMIT, int(found[0]))),
    }


def parse_user_reply(reply: str) -> tuple[str, str]:
    """(thinking, the user's turn): the text after the last ``Response:`` is the turn."""
    thinking = reply.split("Response:")[0].split("Thinking:\n")[-1].strip("\n").strip("[")
    turn = reply.split("Response:")[-1].strip("\n").strip("[").strip("]").strip("“").strip("”")
    return thinking.strip("]"), turn


def npc_messages(system: str, history: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """What the model under test gets: the system prompt, then the dialogue's turns."""
    out = [{"role": "system", "content": system}]
    for m in history:
        out.append(
            {"role": "user" if m["role"] == "user" else "assistant", "content": m["content"]}
        )
    return out


def half_up(value: float, places: int = 1) -> float:
    """``value`` rounded half up (68.15 -> 68.2, where ``round`` gives 68.1 or 68.2)."""
    quantum = Decimal(1).scaleb(-places)
    return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))


@dataclass(frozen=True, slots=True)
class SentientScore:
    """A model's Sentient numbers over its dialogues."""

    score: float | None
    mean: float | None
    successes: int
    failures: int
    dialogues: int


def sentient_score(results: Sequence[Mapping[str, Any]]) -> SentientScore:
    """Score (mean final emotion, half up to 0.1), successes and failures of result records
    (SAGE's layout: ``emo_point``, ``emo_state``)."""
    points = [int(r["emo_point"]) for r in results]
    mean = sum(points) / len(points) if points else None
    return SentientScore(
        None if mean is None else half_up(mean),
        mean,
        sum(r["emo_state"] == "Emotion-S" for r in results),
        sum(r["emo_state"] == "Emotion-F" for r in results),
        len(points),
    )


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def rank_correlation(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rank correlation (ties share their mean rank); None under 3 pairs or when
    either side has no spread."""
    if len(a) != len(b) or len(a) < 3:
        return None
    ra, rb = _ranks(a), _ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return None if va == 0 or vb == 0 else cov / (va * vb) ** 0.5
