"""An EmoBench copy of our own writing, in the benchmark's layout (data/*.jsonl and
src/configs/*.yaml), and what our scripted models answer to each item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_helpers import last_user

EMOTIONS = ["Joy", "Anger", "Fear", "Relief"]
CAUSES = ["The rain stopped", "A friend called", "The bus was late"]
ACTIONS = ["Wait quietly", "Ask for help", "Leave the room"]

# item -> (language, kind, label index per question, the base model's behaviour)
# behaviour: "right" (every question right), "emotion" (emotion right, cause wrong),
# "wrong" (all wrong), "junk" (no JSON), "fail" (the endpoint fails: HTTP 400).
ITEMS: dict[str, tuple[str, str, tuple[int, ...], str]] = {
    "e1": ("en", "EU", (1, 2), "right"),
    "e2": ("en", "EU", (0, 1), "emotion"),
    "e3": ("en", "EU", (3, 0), "junk"),
    "z1": ("zh", "EU", (2, 2), "right"),
    "z2": ("zh", "EU", (1, 0), "wrong"),
    "a1": ("en", "EA", (1,), "right"),
    "a2": ("en", "EA", (2,), "wrong"),
    "b1": ("zh", "EA", (0,), "right"),
    "b2": ("zh", "EA", (1,), "fail"),
}


def write_emobench(root: Path) -> Path:
    """The copy at ``root`` (a 'clone')."""
    (root / "data").mkdir(parents=True)
    (root / "src" / "configs").mkdir(parents=True)
    eu, ea = [], []
    for n, (name, (lang, kind, labels, _)) in enumerate(ITEMS.items(), 1):
        base = {"qid": str(n), "language": lang, "scenario": f"Case {name}: Kim waits.",
                "subject": "Kim"}  # fmt: skip
        if kind == "EU":
            eu.append({**base, "emotion_choices": EMOTIONS, "emotion_label": EMOTIONS[labels[0]],
                       "cause_choices": CAUSES, "cause_label": CAUSES[labels[1]]})  # fmt: skip
        else:
            ea.append({**base, "question type": "Action", "choices": ACTIONS,
                       "label": ACTIONS[labels[0]]})  # fmt: skip
    for name, rows in (("EU", eu), ("EA", ea)):
        text = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"
        (root / "data" / f"{name}.jsonl").write_text(text, encoding="utf-8")
    prompts = {
        "sys": {"en": "Pick the best option.", "zh": "Pick the best option (zh)."},
        "EU": {lang: "{scenario}\n\nFeeling of {subject}?\n{emo_choices}\n\nWhy?\n"
                     "{cause_choices}\n" for lang in ("en", "zh")},
        "EA": {lang: "{scenario}\nBest {q_type} for {subject}?\n{choices}"
               for lang in ("en", "zh")},
    }  # fmt: skip
    response = {
        "base": {"en": "Answer in JSON:", "zh": "Answer in JSON (zh):"},
        "EU": {lang: '"answer_q1": "<letter>",\n"answer_q2": "<letter>"' for lang in ("en", "zh")},
        "EA": {lang: '"answer": "<letter>"' for lang in ("en", "zh")},
    }
    import yaml

    for name, data in (("prompts.yaml", prompts), ("response.yaml", response)):
        (root / "src" / "configs" / name).write_text(yaml.safe_dump(data, allow_unicode=True))
    return root


def _item_of(body: dict[str, Any]) -> str:
    return last_user(body).split(":")[0].removeprefix("Case ")


def answer(body: dict[str, Any], *, all_right: bool = False) -> str | int:
    """The scripted model: answers each item as ITEMS says (``all_right``: every item right)."""
    name = _item_of(body)
    _, kind, labels, behaviour = ITEMS[name]
    behaviour = "right" if all_right else behaviour
    if behaviour == "fail":
        return 400
    if behaviour == "junk":
        return "I am not sure about this one."
    right = ["ABCD"[i] for i in labels]
    wrong = ["ABCD"[(i + 1) % 3] for i in labels]
    letters = right if behaviour == "right" else wrong
    if behaviour == "emotion":
        letters = [right[0], wrong[1]]
    if kind == "EA":
        return json.dumps({"answer": letters[0]})
    return json.dumps({"answer_q1": letters[0], "answer_q2": letters[1]})
