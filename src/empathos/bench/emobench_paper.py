"""EmoBench as the 2024 paper ran it: the ``paper`` protocol. Pure (no I/O); the model calls
are :func:`empathos.bench.play.play_emobench`'s.

Our reading of the paper's protocol, each step ours to word:

- **Choice orders.** Each item is asked in its data's order and in 3 more orders of its
  choices (per question), drawn from a generator seeded by the item's id: fixed, the same
  on every machine, and recorded in the item's record. The item's score per task is the
  mean over the 4 orders.
- **Separate questions.** An EU item's emotion question is asked alone (the template up to
  the emotion choices); then its cause question in the same conversation, after the
  model's answer to the emotion question (the majority letter, as a JSON answer), so the
  cause is conditioned on the chosen emotion. When no emotion answer could be read, the
  cause is not asked (wrong). An EA item is one question.
- **Majority of 5.** Each question is sampled 5 times (temperature 0.6, seeds 0-4); each
  reply is read strictly (:mod:`empathos.bench.emobench_official`); the most frequent
  letter wins (a tie: the letter that reached that count first); no readable letter at
  all: wrong.
- **Messages.** The system message is the official one (instructions, answer-format
  statement) with a single ``answer`` field; the user messages are the official template's
  parts with the choices lettered ``A)`` ... in the order asked.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from empathos.bench.emobench import EmoItem

__all__ = [
    "N_ORDERS",
    "N_SAMPLES",
    "SINGLE_FIELD",
    "choice_orders",
    "majority",
    "split_eu_template",
]

N_ORDERS = 4
N_SAMPLES = 5
#: Our description of the one answer field of a single question.
SINGLE_FIELD = '"answer": "<the letter of your choice>"'


def _orders(n: int, rng: random.Random) -> list[list[int]]:
    identity = list(range(n))
    out = [identity]
    tries = 0
    while len(out) < N_ORDERS:
        order = rng.sample(identity, n)
        tries += 1
        if order not in out or tries > 50:  # too few choices for distinct orders
            out.append(order)
    return out


def choice_orders(item: EmoItem, seed: int = 0) -> list[list[list[int]]]:
    """The item's 4 choice orders: per order, per question, the data's indices in the order
    shown (the first order is the data's own)."""
    per_question = [
        _orders(len(choices), random.Random(f"emobench-paper:{seed}:{item.id}:{q}"))
        for q, (choices, _) in enumerate(item.questions)
    ]
    return [[per_question[q][k] for q in range(len(item.questions))] for k in range(N_ORDERS)]


def majority(votes: Sequence[int | None]) -> int | None:
    """The most frequent readable vote (a tie: the one that reached the count first)."""
    readable = [v for v in votes if v is not None]
    if not readable:
        return None
    counts = Counter(readable)
    best = max(counts.values())
    seen: Counter[int] = Counter()
    for v in readable:
        seen[v] += 1
        if seen[v] == best and counts[v] == best:
            return v
    return None  # pragma: no cover - unreachable


def split_eu_template(template: str) -> tuple[str, str]:
    """The EU template as two questions: everything up to the emotion choices, and the
    cause question with its choices (paragraphs are blank-line separated)."""
    blocks = template.rstrip("\n").split("\n\n")
    emo = next((i for i, b in enumerate(blocks) if "{emo_choices}" in b), None)
    cause = next((i for i, b in enumerate(blocks) if "{cause_choices}" in b), None)
    if emo is None or cause is None or cause <= emo:
        raise ValueError("the EU template needs {emo_choices} before {cause_choices}")
    return "\n\n".join(blocks[: emo + 1]) + "\n", "\n\n".join(blocks[emo + 1 : cause + 1]) + "\n"
