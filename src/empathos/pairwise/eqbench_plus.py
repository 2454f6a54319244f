"""EQ-Bench 3's plus-count rule: how one judged order of its pairwise prompt becomes plus
signs for each side (docs/pairwise.md, "EQ-Bench 3's Elo pass").

Pure. The rule, as the benchmark's code applies it to every comparison, stored or new:

- every value of the judge's JSON object except the reasoning key counts, when it is text:
  each ``+`` in it is one plus sign, for the respondent whose code appears in it (the first
  code when both appear; no code: nobody);
- the side with more plus signs wins the order, equal counts tie;
- an analysis task (a numeric scenario id of 400 or more) counts at most one plus sign:
  1-0, 0-1 or 0-0 (the benchmark's newer "analysis downscaling").

The benchmark's stored comparisons name the respondents ``A0493`` (shown first) and
``A0488``; its ``order`` field says which of them was the model under test.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CODES", "REASONING_KEY", "downscale", "plus_counts", "stored_plus"]

#: The respondent codes of the benchmark's pairwise prompt (first shown, second shown).
CODES = ("A0493", "A0488")
#: The key of the judge's free-text reasoning, never counted.
REASONING_KEY = "chain_of_thought_reasoning"
ANALYSIS_FROM = 400


def plus_counts(reply: Mapping[str, Any], codes: tuple[str, str] = CODES) -> tuple[int, int]:
    """(plus signs of the first-shown respondent, of the second) in one judge reply."""
    first = second = 0
    for key, value in reply.items():
        if key == REASONING_KEY or not isinstance(value, str):
            continue
        if codes[0] in value:
            first += value.count("+")
        elif codes[1] in value:
            second += value.count("+")
    return first, second


def _is_analysis(scenario_id: str) -> bool:
    try:
        return int(scenario_id) >= ANALYSIS_FROM
    except ValueError:
        return False


def downscale(scenario_id: str, plus_a: float, plus_b: float) -> tuple[float, float]:
    """The counts of an order, an analysis task's cut to 1-0 / 0-1 / 0-0."""
    if not _is_analysis(scenario_id):
        return plus_a, plus_b
    if plus_a == plus_b:
        return 0, 0
    return (1, 0) if plus_a > plus_b else (0, 1)


def stored_plus(comparison: Mapping[str, Any]) -> tuple[float, float] | None:
    """(plus for test, plus for other) of a stored comparison of the benchmark's Elo file,
    recomputed from its ``judge_response`` (None: it holds none, the stored numbers stand)."""
    reply = comparison.get("judge_response")
    if not isinstance(reply, dict):
        return None
    a, b = plus_counts(reply)
    order = comparison.get("order")
    test_first = isinstance(order, str) and order.startswith(f"{CODES[0]}:test")
    test, other = (a, b) if test_first else (b, a)
    return downscale(str(comparison.get("scenario_id")), test, other)
