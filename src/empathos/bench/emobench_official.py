"""EmoBench as its own script (``src/main.py``, ``model.py``, ``data.py``, ``utils.py`` of
Sahandfer/EmoBench) asks and reads it: the ``official`` protocol. Pure (no I/O).

In our own words, what the script does and this module reproduces:

- **System message.** The instructions of the language (``prompts.yaml`` ``sys``), a new
  line, the answer-format statement (``response.yaml`` ``base``), then the task's answer
  fields (``response.yaml`` ``EU`` / ``EA``) inside a fenced ``json`` block, as braces
  indented by four spaces. For a model whose name (the last part of its id, dots as
  underscores) contains ``qwen`` in any case, the message starts with ``/no_think`` and a
  blank line (Qwen3 then answers without reasoning first).
- **User message.** The task's template (``prompts.yaml`` ``EU`` / ``EA``) with the scenario,
  the subject, the choices as lines ``A) ...``, ``B) ...`` (capital letters) and, for EA, the
  question type exactly as the data spells it.
- **One sample** at temperature 0.6 (the script's), choices in the data's order.
- **Strict reading.** When the reply holds a fenced ``json`` block, its content is read,
  else the whole reply; it must be strict JSON. The answer counts only when its field is
  exactly the right capital letter; a reply that is not strict JSON, a lowercase letter, a
  letter with text, the choice's text: all wrong. Nothing is repaired and nothing is asked
  again (the script's retry loop returns on its first failure).

Our lenient reader (:func:`empathos.bench.emobench.parse_answers`) still reads every reply,
only to count the answers that only it could read (``lenient_only``): it never changes a
score.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from typing import Any

from empathos.bench.emobench import EmoItem, EmoPrompts, parse_answers

__all__ = [
    "LETTERS",
    "OFFICIAL_TEMPERATURE",
    "answer_block",
    "fill",
    "is_qwen",
    "item_strict_answers",
    "lenient_only",
    "lettered",
    "official_messages",
    "official_system",
    "official_user",
    "strict_answers",
    "strict_json",
]

LETTERS = string.ascii_uppercase
#: The script's sampling temperature.
OFFICIAL_TEMPERATURE = 0.6
_FENCED = re.compile(r"```json\s*([\s\S]*?)```", re.DOTALL)
FIELDS = {"EU": ("answer_q1", "answer_q2"), "EA": ("answer",)}


def is_qwen(model_id: str) -> bool:
    """The script's test for a Qwen-family model (its name, dots as underscores)."""
    return "qwen" in model_id.split("/")[-1].replace(".", "_").lower()


def answer_block(statement: str, fields: str) -> str:
    """The answer-format part of the system message (the fenced json block)."""
    return f"\n{statement}\n```json\n    {{\n    {fields}\n    }}\n``` \n    "


def official_system(prompts: EmoPrompts, kind: str, model_id: str) -> str:
    """The system message of ``kind`` items for the model ``model_id``."""
    system = prompts.instructions + answer_block(prompts.answer_format, prompts.fields[kind])
    return "/no_think\n\n" + system if is_qwen(model_id) else system


def lettered(choices: Sequence[str]) -> str:
    """Choices as the script letters them: ``A) first`` ... one per line."""
    return "\n".join(f"{LETTERS[i]}) {c}" for i, c in enumerate(choices))


def fill(template: str, slots: dict[str, str]) -> str:
    """A template's ``{name}`` slots filled."""
    for name, value in slots.items():
        template = template.replace("{" + name + "}", value)
    return template


def official_user(item: EmoItem, template: str, orders: Sequence[Sequence[int]] = ()) -> str:
    """The user message of ``item`` (``orders``: each question's choice order, default the
    data's)."""
    choices = [
        [c[i] for i in orders[n]] if orders else list(c) for n, (c, _) in enumerate(item.questions)
    ]
    slots = {"scenario": item.scenario, "subject": item.subject, "q_type": item.q_type}
    if item.kind == "EU":
        slots["emo_choices"] = lettered(choices[0])
        slots["cause_choices"] = lettered(choices[1])
    else:
        slots["choices"] = lettered(choices[0])
    return fill(template, slots)


def official_messages(item: EmoItem, prompts: EmoPrompts, model_id: str) -> list[dict[str, str]]:
    """The system and user messages the script sends for ``item``."""
    return [
        {"role": "system", "content": official_system(prompts, item.kind, model_id)},
        {"role": "user", "content": official_user(item, prompts.templates[item.kind])},
    ]


def strict_json(reply: str) -> Any:
    """The reply's JSON as the script reads it (the fenced block's content when there is
    one), or None when that is not strict JSON."""
    try:
        if "```json" in reply:
            match = _FENCED.search(reply)
            if match is None:
                return None
            reply = match.group(0).replace("```json", "").replace("```", "")
        return json.loads(reply)
    except ValueError:
        return None


def strict_answers(
    fields: Sequence[str], n_choices: Sequence[int], reply: str
) -> tuple[int | None, ...]:
    """Per field, the index of the capital letter the reply gives exactly (None: anything
    else, which the script scores as wrong)."""
    data = strict_json(reply)
    out: list[int | None] = []
    for field, n in zip(fields, n_choices, strict=True):
        value = data.get(field) if isinstance(data, dict) else None
        index = LETTERS.find(value) if isinstance(value, str) and len(value) == 1 else -1
        out.append(index if 0 <= index < n else None)
    return tuple(out)


def item_strict_answers(item: EmoItem, reply: str) -> tuple[int | None, ...]:
    """The official reading of one reply to ``item`` (choices in the data's order)."""
    return strict_answers(FIELDS[item.kind], [len(c) for c, _ in item.questions], reply)


def lenient_only(item: EmoItem, reply: str, strict: Sequence[int | None]) -> int:
    """How many of the reply's answers only the lenient reader could read."""
    lenient = parse_answers(item, reply)
    return sum(s is None and x is not None for s, x in zip(strict, lenient, strict=True))
