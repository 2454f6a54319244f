"""From the verdicts of both orders to one outcome per pair, and the position-flip rate.

Pure: plain values in, plain values out. A pair is one scenario and trial judged for two
models; the judge sees it twice, once in each order. Both orders naming the same dialogue
make a win; orders that disagree (each picks the dialogue in the same position) make a tie,
the judge having shown that position, not content, decided; an order whose call failed
leaves the pair out (it is judged again on resume, never guessed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Outcome", "Verdict", "combine", "flip_rates"]

Position = Literal["first", "second"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One judged order: ``first`` was shown first; ``winner`` is the position picked."""

    scenario_id: str
    trial: int
    first: str
    second: str
    judge: str
    winner: Position
    margin: int = 1

    @property
    def pair(self) -> tuple[str, int, str, str]:
        """The pair this order belongs to: (scenario, trial, model, model), models sorted."""
        a, b = sorted((self.first, self.second))
        return (self.scenario_id, self.trial, a, b)

    @property
    def winner_model(self) -> str:
        """The model whose dialogue was picked."""
        return self.first if self.winner == "first" else self.second


@dataclass(frozen=True, slots=True)
class Outcome:
    """One pair's result: ``score`` is 1 when ``a`` won both orders, 0 when ``b`` did, 0.5
    for a tie (the orders disagreed). ``a`` < ``b`` by name. ``margin`` is the mean margin
    of the two orders (0 for a tie)."""

    scenario_id: str
    trial: int
    a: str
    b: str
    judge: str
    score: float
    margin: float

    @property
    def flipped(self) -> bool:
        """The orders disagreed: the position decided."""
        return self.score == 0.5


def combine(verdicts: Iterable[Verdict]) -> list[Outcome]:
    """One outcome per (pair, judge) with both orders judged, in a stable order. A third
    verdict of the same order (a rerun) replaces the earlier one."""
    orders: dict[tuple[tuple[str, int, str, str], str], dict[str, Verdict]] = {}
    for v in verdicts:
        orders.setdefault((v.pair, v.judge), {})[v.first] = v
    out = []
    for (pair, judge), both in sorted(orders.items()):
        if len(both) != 2:
            continue
        scenario, trial, a, b = pair
        wins = [v.winner_model for v in both.values()]
        if wins[0] != wins[1]:
            out.append(Outcome(scenario, trial, a, b, judge, 0.5, 0.0))
            continue
        margin = sum(v.margin for v in both.values()) / 2.0
        out.append(Outcome(scenario, trial, a, b, judge, 1.0 if wins[0] == a else 0.0, margin))
    return out


def flip_rates(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """Per judge, the share of its pairs whose two orders disagreed."""
    judges = sorted({o.judge for o in outcomes})
    rates = {}
    for judge in judges:
        mine = [o for o in outcomes if o.judge == judge]
        rates[judge] = sum(o.flipped for o in mine) / len(mine)
    return rates
