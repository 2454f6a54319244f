"""From the verdicts of both orders to one outcome per pair; flip and first-position rates.

Pure: plain values in, plain values out. A pair is one scenario and trial judged for two
models; the judge sees it twice, once in each order. Each order is a **game** for the model
it picked, and a **strong** verdict (margin :data:`STRONG` or more: our judge's "far") is
:data:`STRONG_GAMES` games, as Arena-Hard counts its ``A>>B`` verdicts three times. A pair's
outcome is the share of its games ``a`` won (a fraction in [0, 1]) with a weight of half its
games, so a pair of two ordinary verdicts weighs 1: two ordinary wins are 1 (or 0), orders
that disagree with equal strength are 0.5 (a tie: the position, not the content, decided),
a strong win against an ordinary loss is 0.75. An order whose call failed leaves the pair
out (it is judged again on resume, never guessed).

Any rule may make outcomes: the fits take any score in [0, 1] per pair and any weight (EQ-Bench
3's plus-count fractions are scores with weight 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "STRONG",
    "STRONG_GAMES",
    "Outcome",
    "Verdict",
    "combine",
    "first_position_rates",
    "flip_rates",
]

Position = Literal["first", "second"]
#: The margin from which a verdict is strong (our judge's scale: 1 slightly, 2 clearly, 3 far).
STRONG = 3
#: Games a strong verdict counts for (Arena-Hard's weight for ``A>>B``).
STRONG_GAMES = 3


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

    @property
    def games(self) -> int:
        """The games this verdict counts for: :data:`STRONG_GAMES` when strong, else 1."""
        return STRONG_GAMES if self.margin >= STRONG else 1


@dataclass(frozen=True, slots=True)
class Outcome:
    """One pair's result: ``score`` is the share of the pair ``a`` won, in [0, 1] (1: ``a``
    won, 0: ``b`` did, 0.5: even); ``a`` < ``b`` by name. ``margin`` is the mean margin of
    the two orders (0 when they disagree), ``weight`` what the pair counts for in the fit
    (1 for two ordinary verdicts), ``flipped`` whether the two orders picked different
    dialogues (the position decided)."""

    scenario_id: str
    trial: int
    a: str
    b: str
    judge: str
    score: float
    margin: float
    weight: float = 1.0
    flipped: bool = False


def combine(verdicts: Iterable[Verdict]) -> list[Outcome]:
    """One outcome per (pair, judge) with both orders judged, in a stable order, by the
    module docstring's rule. A third verdict of the same order (a rerun) replaces the
    earlier one."""
    orders: dict[tuple[tuple[str, int, str, str], str], dict[str, Verdict]] = {}
    for v in verdicts:
        orders.setdefault((v.pair, v.judge), {})[v.first] = v
    out = []
    for (pair, judge), both in sorted(orders.items()):
        if len(both) != 2:
            continue
        scenario, trial, a, b = pair
        vs = list(both.values())
        games = sum(v.games for v in vs)
        won = sum(v.games for v in vs if v.winner_model == a)
        flipped = vs[0].winner_model != vs[1].winner_model
        margin = 0.0 if flipped else sum(v.margin for v in vs) / 2.0
        out.append(Outcome(scenario, trial, a, b, judge, won / games, margin, games / 2, flipped))
    return out


def flip_rates(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """Per judge, the share of its pairs whose two orders disagreed."""
    judges = sorted({o.judge for o in outcomes})
    rates = {}
    for judge in judges:
        mine = [o for o in outcomes if o.judge == judge]
        rates[judge] = sum(o.flipped for o in mine) / len(mine)
    return rates


def first_position_rates(verdicts: Sequence[Verdict]) -> dict[str, float]:
    """Per judge, the share of its judged orders that picked the dialogue shown first (0.5:
    no position bias; with close models the flip rate is mostly noise, this is not)."""
    judges = sorted({v.judge for v in verdicts})
    rates = {}
    for judge in judges:
        mine = [v for v in verdicts if v.judge == judge]
        rates[judge] = sum(v.winner == "first" for v in mine) / len(mine)
    return rates
