"""EQ-Bench (v2): parse a model's emotion ratings and score them against the reference.

Pure functions over plain values (no I/O). The method is the benchmark's published one,
written here in our own words:

- **The answer.** The model rates four named emotions 0-10, as ``Name: number`` lines. In
  the revise format the answer holds a ``First pass scores:`` block, a critique, and a
  ``Revised scores:`` block; each block's ratings are the ``word: digits`` pairs inside it
  (a later pair of the same name wins). Without the revise format every pair of the whole
  reply is a first-pass rating.
- **A question's score** (0-10; below 0 for answers worse than chance): each of the four
  reference emotions must be rated (exactly those four names), else the answer is
  unparseable. For each emotion the distance ``d = |rating - reference|`` becomes a penalty:
  0 when ``d == 0``; ``6.5 / (1 + exp(-1.2 (d - 4)))`` (an S-curve, forgiving small misses)
  when ``0 < d <= 5``; ``d`` itself beyond 5. The score is ``10 - 0.7477 * sum(penalties)``;
  the constant makes random answers score about 0.
- **The benchmark score** (0-100): the mean first-pass question score over the parseable
  questions, times 10. Unparseable questions are left out of the mean and counted in the
  parse rate (parseable / all questions); a published result file simply omits them. The
  revised ratings are scored the same way and reported beside it (the published score of a
  revise-format run is its first-pass score: that is what reproduces the published files).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "ADJUST",
    "EqbenchScore",
    "ItemResult",
    "Ratings",
    "Reference",
    "eqbench_score",
    "parse_ratings",
    "penalty",
    "question_score",
    "score_reply",
]

#: Scales the summed penalties so that answering at random scores about 0.
ADJUST = 0.7477
_PAIR = re.compile(r"(\w+):\s+(\d+)")
_FIRST = re.compile(r"First pass scores:(.*?)Revised scores:", re.DOTALL)
_REVISED = re.compile(r"Revised scores:(.*)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Reference:
    """A question's reference: the four emotion names and their intensities (0-10)."""

    emotions: tuple[tuple[str, float], ...]

    @property
    def names(self) -> frozenset[str]:
        """The four emotion names."""
        return frozenset(name for name, _ in self.emotions)


@dataclass(frozen=True, slots=True)
class Ratings:
    """The ratings parsed from one reply: first pass and (revise format) revised, name ->
    rating; empty when absent."""

    first_pass: dict[str, int]
    revised: dict[str, int]


def _pairs(text: str) -> dict[str, int]:
    return {name: int(value) for name, value in _PAIR.findall(text)}


def parse_ratings(text: str, *, revise: bool) -> Ratings:
    """The ratings of a reply (see the module docstring for the format)."""
    if not revise:
        return Ratings(first_pass=_pairs(text), revised={})
    first = _FIRST.search(text)
    revised = _REVISED.search(text)
    return Ratings(
        first_pass=_pairs(first.group(1)) if first else {},
        revised=_pairs(revised.group(1)) if revised else {},
    )


def penalty(distance: float) -> float:
    """The penalty of one emotion's distance from the reference (0-10 -> 0-10)."""
    if distance == 0:
        return 0.0
    if distance <= 5:
        return 6.5 / (1.0 + math.exp(-1.2 * (distance - 4.0)))
    return distance


def question_score(reference: Reference, ratings: Mapping[str, int]) -> float | None:
    """A question's score, or None when the ratings are not exactly the reference's four
    emotions (an unparseable answer)."""
    if len(ratings) != len(reference.emotions) or set(ratings) != reference.names:
        return None
    total = sum(penalty(abs(ratings[name] - value)) for name, value in reference.emotions)
    return 10.0 - ADJUST * total


@dataclass(frozen=True, slots=True)
class ItemResult:
    """One question's outcome: the parsed ratings and the scores (None: unparseable)."""

    first_pass: float | None
    revised: float | None
    ratings: Ratings


def score_reply(reference: Reference, reply: str, *, revise: bool) -> ItemResult:
    """Parse and score one reply."""
    ratings = parse_ratings(reply, revise=revise)
    revised = question_score(reference, ratings.revised) if ratings.revised else None
    return ItemResult(question_score(reference, ratings.first_pass), revised, ratings)


@dataclass(frozen=True, slots=True)
class EqbenchScore:
    """A run's EQ-Bench v2 result."""

    score: float | None
    """The benchmark score (0-100): mean first-pass question score x 10; None: none parsed."""
    revised_score: float | None
    """The same over the revised ratings (questions without them count their first pass);
    None when no reply had revised ratings."""
    parseable: int
    total: int

    @property
    def parse_rate(self) -> float:
        """Parseable questions / all questions (0 when there are none)."""
        return self.parseable / self.total if self.total else 0.0


def eqbench_score(items: Sequence[ItemResult | None], total: int) -> EqbenchScore:
    """Aggregate question results; ``None`` items (no reply: an error, a missing question)
    and unparseable ones are left out of the means and counted against the parse rate;
    ``total`` is the number of questions of the benchmark."""
    parsed = [i for i in items if i is not None and i.first_pass is not None]
    if not parsed:
        return EqbenchScore(None, None, 0, total)
    first = [i.first_pass for i in parsed if i.first_pass is not None]
    any_revised = any(i.revised is not None for i in parsed)
    revised = [
        i.revised if i.revised is not None else f for i, f in zip(parsed, first, strict=True)
    ]
    return EqbenchScore(
        score=10.0 * sum(first) / len(first),
        revised_score=10.0 * sum(revised) / len(revised) if any_revised else None,
        parseable=len(parsed),
        total=total,
    )
