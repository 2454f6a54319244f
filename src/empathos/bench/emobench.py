"""EmoBench: multiple-choice items, the prompts filled from the benchmark's own templates, the
answer parsed and scored, accuracy per task and language with a bootstrap interval.

Pure (no I/O). The benchmark's method, in our own words:

- **Tasks.** An EU item (emotional understanding) asks two questions: which emotion the
  subject feels (``emotion_choices``, ``emotion_label``) and why (``cause_choices``,
  ``cause_label``); it is scored on three tasks: ``EU emotion``, ``EU cause`` and ``EU both``
  (both right). An EA item (emotional application) asks for the most effective action or
  response (``choices``, ``label``): task ``EA``.
- **Prompts and the scored reading** are the protocol's: :mod:`empathos.bench.emobench_official`
  (the benchmark's own script: strict JSON, exact capital letters) or
  :mod:`empathos.bench.emobench_paper` (the 2024 paper's protocol).
- **The lenient reader** here (:func:`parse_answers`: JSON repaired, any letter case, a
  letter with text, the choice's own text) is a diagnostic only: it counts the answers
  only it could read, and never changes a score. An unparseable answer counts as wrong
  (the benchmark's accuracy is over all items) and is reported with its number. An
  endpoint failure is no answer at all: left out of the accuracy and counted as an error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import json_repair
import numpy as np

from empathos.scoring.stats import bootstrap_means, cluster_bootstrap_weights

__all__ = [
    "TASKS",
    "Accuracy",
    "EmoItem",
    "EmoPrompts",
    "Scored",
    "accuracy_table",
    "item_scores",
    "parse_answers",
]

Kind = Literal["EU", "EA"]
#: The tasks, in the order the benchmark reports them.
TASKS = ("EU emotion", "EU cause", "EU both", "EA")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_FIELDS: dict[Kind, tuple[str, ...]] = {"EU": ("answer_q1", "answer_q2"), "EA": ("answer",)}


@dataclass(frozen=True, slots=True)
class EmoItem:
    """One EmoBench item. ``questions`` holds (choices, label) per question: EU has two
    (emotion, cause), EA one."""

    kind: Kind
    qid: str
    language: str
    scenario: str
    subject: str
    questions: tuple[tuple[tuple[str, ...], str], ...]
    q_type: str = ""

    @property
    def id(self) -> str:
        """``EU-en-12``: unique across the benchmark."""
        return f"{self.kind}-{self.language}-{self.qid}"


@dataclass(frozen=True, slots=True)
class EmoPrompts:
    """The benchmark's prompt texts for one language: instructions, the answer-format line,
    and per kind the task template and the JSON fields' description."""

    instructions: str
    answer_format: str
    templates: Mapping[str, str]
    fields: Mapping[str, str]


def _letter(value: object, choices: Sequence[str]) -> int | None:
    text = str(value).strip()
    for i, choice in enumerate(choices):  # a model that answers with the choice's text
        if text.casefold() == choice.strip().casefold():
            return i
    m = re.match(r"^[\s(\[]*([A-Za-z])(?![A-Za-z])", text)
    if m is None:
        return None
    index = _LETTERS.find(m.group(1).lower())
    return index if 0 <= index < len(choices) else None


def parse_answers(item: EmoItem, reply: str) -> tuple[int | None, ...]:
    """The lenient reader's choice index per question (None: unparseable); a diagnostic,
    never the score."""
    try:
        data = json_repair.loads(reply)
    except Exception:  # json_repair raises little, but a model's reply is anything
        data = None
    if not isinstance(data, dict):
        data = {}
    return tuple(
        _letter(data[field], choices) if field in data else None
        for field, (choices, _) in zip(_FIELDS[item.kind], item.questions, strict=True)
    )


def item_scores(item: EmoItem, answers: Sequence[int | None]) -> dict[str, float]:
    """Task -> 1.0 (right) or 0.0 (wrong or unparseable) for one answered item."""
    right = [
        a is not None and choices[a] == label
        for a, (choices, label) in zip(answers, item.questions, strict=True)
    ]
    if item.kind == "EA":
        return {"EA": float(right[0])}
    return {
        "EU emotion": float(right[0]),
        "EU cause": float(right[1]),
        "EU both": float(right[0] and right[1]),
    }


@dataclass(frozen=True, slots=True)
class Accuracy:
    """One task's accuracy over a group of items, with its 95% bootstrap interval."""

    task: str
    language: str
    n: int
    correct: float
    """Right answers (the paper protocol: each item's mean over its choice orders)."""
    unparseable: int
    errors: int
    low: float | None
    high: float | None

    @property
    def accuracy(self) -> float | None:
        """Correct / answered items (None when none was answered)."""
        return self.correct / self.n if self.n else None


@dataclass(frozen=True, slots=True)
class Scored:
    """One item's outcome for :func:`accuracy_table`: its kind and language, its scores
    (None: an endpoint error) and whether its answer was unparseable."""

    kind: str
    language: str
    scores: Mapping[str, float] | None
    unparseable: bool


def _group(task: str, language: str, rows: Sequence[Scored], seed: int) -> Accuracy:
    answered = [r for r in rows if r.scores is not None]
    values = np.asarray([r.scores[task] for r in answered if r.scores], dtype=np.float64)
    low = high = None
    if values.size >= 2:
        weights = cluster_bootstrap_weights(np.arange(values.size, dtype=np.int64), seed=seed)
        lo, hi = bootstrap_means(values[:, None], weights)[:, 0]
        low, high = float(lo), float(hi)
    return Accuracy(
        task=task,
        language=language,
        n=int(values.size),
        correct=float(values.sum()),
        unparseable=sum(r.unparseable for r in answered),
        errors=len(rows) - len(answered),
        low=low,
        high=high,
    )


def accuracy_table(rows: Sequence[Scored], *, seed: int = 0) -> list[Accuracy]:
    """Accuracy per task and language, then per task over all languages ("all")."""
    out: list[Accuracy] = []
    languages = sorted({r.language for r in rows})
    for task in TASKS:
        kind = "EA" if task == "EA" else "EU"
        of_task = [r for r in rows if r.kind == kind]
        if not of_task:
            continue
        for language in [*languages, "all"]:
            group = [r for r in of_task if language in ("all", r.language)]
            if group and not (language == "all" and len(languages) == 1):
                out.append(_group(task, language, group, seed))
    return out
