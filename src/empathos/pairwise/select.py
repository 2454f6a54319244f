"""Matchup selection under a budget: the informative pairs first, not all of them.

Pure. Pairs grow with the square of the models; a budget of ``max_pairs`` pairs (each
judged in both orders: two calls) is spent greedily, one pair at a time, on the model pair
with the highest ``p (1 - p) / (1 + n)``: ``p`` the win probability the current strengths
give (close ratings: near 1/2, the most to learn), ``n`` the pairs that model pair has had
so far (few comparisons first). The budget counts the pairs already judged; within a model
pair the scenarios are taken in a seeded shuffle, so a small budget spreads over scenarios.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping, Sequence

__all__ = ["PairKey", "choose_pairs"]

#: (scenario id, trial, model, model), the two models sorted by name.
PairKey = tuple[str, int, str, str]


def _gain(strengths: Mapping[str, float], a: str, b: str, n: int) -> float:
    p = 1.0 / (1.0 + math.exp(-(strengths.get(a, 0.0) - strengths.get(b, 0.0))))
    return p * (1.0 - p) / (1.0 + n)


def choose_pairs(
    candidates: Sequence[PairKey],
    done: Collection[PairKey],
    strengths: Mapping[str, float],
    max_pairs: int | None,
    seed: int = 0,
) -> list[PairKey]:
    """The pairs to judge next: every candidate not done when ``max_pairs`` is None, else at
    most ``max_pairs - len(done)`` of them, chosen as the module docstring says."""
    todo = [c for c in candidates if c not in done]
    if max_pairs is None:
        return todo
    queues: dict[tuple[str, str], list[PairKey]] = {}
    rng = random.Random(seed)
    for c in sorted(todo):
        queues.setdefault((c[2], c[3]), []).append(c)
    for q in queues.values():
        rng.shuffle(q)
    seen: dict[tuple[str, str], int] = {}
    for d in done:
        seen[(d[2], d[3])] = seen.get((d[2], d[3]), 0) + 1
    chosen: list[PairKey] = []
    while len(chosen) + len(done) < max_pairs:
        open_ = [k for k, q in queues.items() if q]
        if not open_:
            break
        best = max(open_, key=lambda k: (_gain(strengths, k[0], k[1], seen.get(k, 0)), k))
        chosen.append(queues[best].pop())
        seen[best] = seen.get(best, 0) + 1
    return chosen
