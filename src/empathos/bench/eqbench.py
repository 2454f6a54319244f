"""EQ-Bench (v2): parse a model's emotion ratings and score them against the reference.

Pure functions over plain values (no I/O). The method is the benchmark's own (its current
``lib/scoring.py`` and ``lib/eq_bench_utils.py``), written here in our own words:

- **The answer.** The model rates four named emotions 0-10, as ``Name: number`` pairs. The
  reply's ``*`` and ``#`` characters (markdown) are dropped first. In the revise format the
  answer holds a ``First pass scores:`` block, a critique, and a ``Revised scores:`` block;
  each block's ratings are the ``word: digits`` pairs inside it (a later pair of the same
  name wins). Without the revise format every pair of the whole reply is a first-pass
  rating. :func:`reply_format` tells the two apart for one reply.
- **A question's score** (0-10; below 0 for answers worse than chance): exactly four pairs
  must be given, naming the reference's four emotions (letter case ignored), else the answer
  is unparseable. Ratings that are all zero are rejected too (the benchmark's run treats
  them as unparseable and asks again). For each emotion the distance
  ``d = |rating - reference|`` becomes a penalty: 0 when ``d == 0``;
  ``6.5 / (1 + exp(-1.2 (d - 4)))`` when ``0 < d <= 5``; ``d`` itself beyond 5. The score is
  ``10 - 0.7477 * sum(penalties)``; the constant makes random answers score about 0.
- **The benchmark score** (0-100), per iteration: the mean first-pass score over the
  questions whose first pass parsed, and the mean revised score over those whose revision
  parsed, each x 10 (0 when none parsed). The final score is the revised one when it is at
  least the first pass AND at least 95% as many revisions as first passes parsed; else the
  first pass. Its parse count goes with it. Iterations are averaged. A run whose final
  parse count is below 83.33% of the questions is a failed run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "ADJUST",
    "ATTEMPT_TEMPERATURES",
    "MIN_PARSE_RATE",
    "EqbenchScore",
    "ItemResult",
    "Ratings",
    "Reference",
    "eqbench_score",
    "mean_of_iterations",
    "parse_ratings",
    "penalty",
    "question_score",
    "reply_format",
    "score_reply",
    "without_revision",
]

#: Scales the summed penalties so that answering at random scores about 0.
ADJUST = 0.7477
#: A run with fewer parsed questions than this share of all questions fails.
MIN_PARSE_RATE = 0.8333
#: The benchmark asks an unparseable question again: 3 attempts, from 0.01 up by 0.15.
ATTEMPT_TEMPERATURES = (0.01, 0.16, 0.31)
#: The revised rating set counts when it parsed this many times the first pass's count.
REVISED_SHARE = 0.95
_PAIR = re.compile(r"(\w+):\s+(\d+)")
_FIRST = re.compile(r"First pass scores:(.*?)Revised scores:", re.DOTALL)
_REVISED = re.compile(r"Revised scores:(.*?)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Reference:
    """A question's reference: the four emotion names and their intensities (0-10)."""

    emotions: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class Ratings:
    """The ratings parsed from one reply: first pass and (revise format) revised, name ->
    rating; empty when absent."""

    first_pass: dict[str, int]
    revised: dict[str, int]


def _pairs(text: str) -> dict[str, int]:
    return {name: int(value) for name, value in _PAIR.findall(text)}


def _plain(text: str) -> str:
    return text.replace("*", "").replace("#", "")


def reply_format(text: str) -> bool:
    """True when the reply is in the revise format (it has a ``Revised scores:`` block)."""
    return "Revised scores:" in _plain(text)


def parse_ratings(text: str, *, revise: bool) -> Ratings:
    """The ratings of a reply (see the module docstring for the format)."""
    text = _plain(text)
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
    emotions (letter case ignored) or are all zero (an unparseable answer)."""
    names = {name.lower(): value for name, value in reference.emotions}
    given = {name.lower(): value for name, value in ratings.items()}
    if len(ratings) != len(reference.emotions) or set(given) != set(names):
        return None
    if sum(given.values()) <= 0:
        return None
    total = sum(penalty(abs(given[name] - value)) for name, value in names.items())
    return 10.0 - ADJUST * total


@dataclass(frozen=True, slots=True)
class ItemResult:
    """One question's outcome: the parsed ratings and the scores (None: unparseable)."""

    first_pass: float | None
    revised: float | None
    ratings: Ratings

    def complete(self, *, revise: bool) -> bool:
        """Parsed as the benchmark needs it (the revision too, in the revise format): an
        incomplete answer is asked again."""
        return self.first_pass is not None and (not revise or self.revised is not None)


def score_reply(reference: Reference, reply: str, *, revise: bool) -> ItemResult:
    """Parse and score one reply."""
    ratings = parse_ratings(reply, revise=revise)
    revised = question_score(reference, ratings.revised) if revise else None
    return ItemResult(question_score(reference, ratings.first_pass), revised, ratings)


@dataclass(frozen=True, slots=True)
class EqbenchScore:
    """A run's EQ-Bench v2 result (see the module docstring for the rule)."""

    score: float | None
    """The final score (0-100) by the benchmark's rule; None: nothing parsed."""
    first_pass: float | None
    revised_score: float | None
    """The revised ratings' score; None when no revision parsed."""
    parseable: float
    """The final score's parse count (mean over iterations)."""
    total: int
    first_parseable: float = 0
    revised_parseable: float = 0
    uses_revised: bool = False

    @property
    def parse_rate(self) -> float:
        """Parseable questions / all questions (0 when there are none)."""
        return self.parseable / self.total if self.total else 0.0

    @property
    def failed(self) -> bool:
        """Below the benchmark's minimum parse rate: the benchmark calls the run failed."""
        return self.parse_rate < MIN_PARSE_RATE


def _mean10(values: Sequence[float]) -> float:
    return 10.0 * sum(values) / len(values) if values else 0.0


def eqbench_score(items: Sequence[ItemResult | None], total: int) -> EqbenchScore:
    """One iteration's result; ``None`` items (no reply: an error, a missing question) and
    unparseable ones are left out of the means; ``total`` is the number of questions."""
    firsts = [i.first_pass for i in items if i is not None and i.first_pass is not None]
    revised = [i.revised for i in items if i is not None and i.revised is not None]
    first_score, revised_score = _mean10(firsts), _mean10(revised)
    use_revised = revised_score >= first_score and len(revised) >= REVISED_SHARE * len(firsts)
    final, parsed = (revised_score, len(revised)) if use_revised else (first_score, len(firsts))
    return EqbenchScore(
        score=final if firsts or revised else None,
        first_pass=first_score if firsts else None,
        revised_score=revised_score if revised else None,
        parseable=parsed,
        total=total,
        first_parseable=len(firsts),
        revised_parseable=len(revised),
        uses_revised=use_revised and bool(revised),
    )


def _avg(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def mean_of_iterations(scores: Sequence[EqbenchScore]) -> EqbenchScore:
    """Several iterations' results as the benchmark averages them: the final scores (0 for
    an iteration with none) and parse counts over all iterations."""
    if len(scores) == 1:
        return scores[0]
    n = len(scores)
    finals = [s.score if s.score is not None else 0.0 for s in scores]
    return EqbenchScore(
        score=sum(finals) / n if any(s.score is not None for s in scores) else None,
        first_pass=_avg([s.first_pass for s in scores]),
        revised_score=_avg([s.revised_score for s in scores]),
        parseable=sum(s.parseable for s in scores) / n,
        total=scores[0].total,
        first_parseable=sum(s.first_parseable for s in scores) / n,
        revised_parseable=sum(s.revised_parseable for s in scores) / n,
        uses_revised=any(s.uses_revised for s in scores),
    )


#: Where the question prompt's revise-format parts start and end (format facts of the
#: benchmark's prompt, which the user's copy holds).
_CRITIQUE_ASK = re.compile(r" Then critique [^\n]*? revised scores\.")
_FIRST_HEADER = "First pass scores:\n"
_CRITIQUE_LINE = "\nCritique:"
_END_LINE = "[End of answer]"


def without_revision(prompt: str) -> str:
    """The question prompt (the revise format, as the benchmark's file holds it) without its
    critique-and-revise parts, as the benchmark sends it by default since v2.1: the request
    to critique and revise, the first-pass heading and everything from the critique line up
    to the end-of-answer line go; an answer cue follows. A prompt without those parts (not
    the benchmark's) is sent as it is."""
    start, end = prompt.find(_CRITIQUE_LINE) + 1, prompt.find(_END_LINE)
    if start <= 0 or end < start:
        return prompt
    cut = prompt[:start] + "\n" + prompt[end:]
    cut = _CRITIQUE_ASK.sub("", cut, count=1).replace(_FIRST_HEADER, "")
    return cut + "\nYour answer:\n"
