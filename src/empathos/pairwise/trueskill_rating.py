"""EQ-Bench 3's TrueSkill ratings, computed as the benchmark's current code computes them
(its final solve; docs/pairwise.md).

Pure, through the ``trueskill`` package's public API and its default maths. The steps:

1. **Plus counts per order** (:mod:`empathos.pairwise.eqbench_plus`): each judged order
   gives each side its plus signs; an analysis task counts at most 1-0, 0-1 or 0-0.
2. **Rank window**: with a ladder (every model's current rating; for a loaded Elo file, its
   stored ``elo``), an order counts only when its two models are at most 16 places apart
   on the ladder sorted from lowest to highest (ties keep the ladder's order); a model off
   the ladder drops its orders, as there.
3. **One result per pair**: the orders of a pair (two models, scenario, iteration) are
   summed per model, the pair keyed by the two names sorted; the side with more plus
   signs wins, equal sums draw. The winner's margin is ``m = min(diff / 30, 1) / 2 + 0.5``
   and the fraction for the first-sorted model ``m`` when it won, ``1 - m`` when it lost
   (computed so, in floating point: it decides a game count now and then), 0.5 a draw.
4. **Margins as extra wins**: a draw is one drawn game; otherwise, with
   ``step = 0.5 / bins``, the winner wins ``ceil(|fraction - 0.5| / step)`` games (1 to
   ``bins``) in a row.
5. **TrueSkill**: mu 1200, sigma 350/3, beta 350/6, tau 0, draw probability 0; every model
   that plays starts at mu 1200 (one with no game keeps its ``start`` mu, default 1200); the
   pairs are played once, in the order each pair first appears, no shuffling
   (``rate_1vs1``, a failing update skipped). ``bins`` = 20 gives mu.
6. **Sigma**: a second solve from scratch with ``bins`` = 5 gives sigma; the interval is
   mu +- 1.96 sigma.
7. **Normalisation**: when both of the benchmark's anchor models are rated, the linear map
   that puts them at 1500 and 200 (``elo_norm``); otherwise the numbers stay raw, as there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from empathos.pairwise.eqbench_plus import downscale
from empathos.pairwise.leaderboard import BoardComparison
from empathos.pairwise.model import Judgement

__all__ = [
    "NORM_ANCHORS",
    "RANK_WINDOW",
    "TS_MU",
    "PairOf",
    "TsRating",
    "comparisons_of",
    "fraction",
    "in_window",
    "pair_games",
    "pair_plus",
    "rate_trueskill",
]

TS_MU = 1200.0
TS_SIGMA = 350.0 / 3.0
TS_BETA = 350.0 / 6.0
MAX_DIFF = 30.0
BINS = 20
BINS_CI = 5
RANK_WINDOW = 16
#: The benchmark's normalisation anchors: model -> its fixed normalised rating.
NORM_ANCHORS: tuple[tuple[str, float], ...] = (
    ("o3", 1500.0),
    ("meta-llama/llama-3.2-1b-instruct", 200.0),
)


@dataclass(frozen=True, slots=True)
class TsRating:
    """One model's TrueSkill result: raw mu and sigma, normalised mu and interval."""

    mu: float
    sigma: float
    norm: float
    norm_low: float
    norm_high: float


def comparisons_of(judgements: Iterable[Judgement], judge: str) -> list[BoardComparison]:
    """``judge``'s judged orders as plus counts per side (step 1), ``first`` as ``test``:
    the benchmark's count of the reply (``plus``) when stored, else the picks' margins."""
    out = []
    for j in judgements:
        if j.judge != judge or not j.picks:
            continue
        if j.plus is not None:
            first, second = j.plus
        else:
            first = sum(p.margin for p in j.picks.values() if p.winner == "first")
            second = sum(p.margin for p in j.picks.values() if p.winner == "second")
        first, second = downscale(j.scenario_id, first, second)
        out.append(BoardComparison(j.scenario_id, str(j.trial), j.first, j.second, first, second))
    return out


def in_window(
    comparisons: Sequence[BoardComparison], ladder: Mapping[str, float], window: int = RANK_WINDOW
) -> list[BoardComparison]:
    """The orders whose two models are at most ``window`` places apart on ``ladder`` (step 2)."""
    order = sorted(ladder, key=lambda m: ladder[m])
    pos = {m: i for i, m in enumerate(order)}
    return [
        c
        for c in comparisons
        if c.test in pos and c.other in pos and abs(pos[c.test] - pos[c.other]) <= window
    ]


def fraction(plus_a: float, plus_b: float) -> float:
    """The benchmark's fraction for the side with ``plus_a`` plus signs against ``plus_b``
    (step 3): ``m`` when it has more, ``1 - m`` when fewer, 0.5 when equal."""
    margin = min(abs(plus_a - plus_b) / MAX_DIFF, 1.0) / 2.0 + 0.5
    if plus_a == plus_b:
        return 0.5
    return max(0.0, min(1.0, margin if plus_a > plus_b else 1.0 - margin))


#: A pair of the benchmark: (model, model) sorted by name, scenario, iteration.
PairOf = tuple[str, str, str, str]


def pair_plus(comparisons: Iterable[BoardComparison]) -> dict[PairOf, tuple[float, float]]:
    """The plus signs of each pair's orders summed per model (first-sorted model first), in
    order of first appearance (step 3); a model against itself left out."""
    groups: dict[PairOf, list[float]] = {}
    for c in comparisons:
        a, b = sorted((c.test, c.other))
        plus = groups.setdefault((a, b, c.scenario_id, c.iteration), [0.0, 0.0])
        plus[0] += c.plus_test if c.test == a else c.plus_other
        plus[1] += c.plus_other if c.test == a else c.plus_test
    return {k: (pa, pb) for k, (pa, pb) in groups.items() if k[0] != k[1]}


def pair_games(comparisons: Iterable[BoardComparison]) -> list[tuple[str, str, float]]:
    """One (model, model, fraction for the first) per pair, in order of first appearance
    (step 3)."""
    return [(a, b, fraction(pa, pb)) for (a, b, _, _), (pa, pb) in pair_plus(comparisons).items()]


def _games(frac: float, bins: int) -> tuple[int, int]:
    """(wins of the first, wins of the second); (1, 1) is one drawn game (step 4)."""
    frac = max(0.0, min(1.0, frac))
    step = 0.5 / bins
    if abs(frac - 0.5) < 1e-9:
        return 1, 1
    if frac > 0.5:
        return max(1, min(bins, math.ceil((frac - 0.5) / step))), 0
    return 0, max(1, min(bins, math.ceil((0.5 - frac) / step)))


def _solve(
    games: Sequence[tuple[str, str, float]], models: Sequence[str], start: Mapping[str, float],
    bins: int, fresh: bool = True,
) -> tuple[dict[str, float], dict[str, float]]:  # fmt: skip
    """mu and sigma of one ordered pass (steps 4 and 5)."""
    import trueskill  # here: only this rating needs it

    env = trueskill.TrueSkill(mu=TS_MU, sigma=TS_SIGMA, beta=TS_BETA, tau=0.0, draw_probability=0.0)
    active = {m for a, b, _ in games for m in (a, b)}
    r = {
        m: env.create_rating(
            mu=TS_MU if fresh and m in active else start.get(m, TS_MU), sigma=TS_SIGMA
        )
        for m in models
    }
    for a, b, frac in games:
        wins_a, wins_b = _games(frac, bins)
        try:
            if (wins_a, wins_b) == (1, 1):
                r[a], r[b] = trueskill.rate_1vs1(r[a], r[b], drawn=True, env=env)
                continue
            for _ in range(wins_a):
                r[a], r[b] = trueskill.rate_1vs1(r[a], r[b], env=env)
            for _ in range(wins_b):
                r[b], r[a] = trueskill.rate_1vs1(r[b], r[a], env=env)
        except (ValueError, FloatingPointError, ArithmeticError):  # skipped there too
            continue
    return {m: r[m].mu for m in models}, {m: r[m].sigma for m in models}


def _normalizer(mu: Mapping[str, float]) -> tuple[float, float]:
    """(scale, shift) of the normalisation (step 7); (1, 0) without both anchors."""
    (a, target_a), (b, target_b) = NORM_ANCHORS
    if a not in mu or b not in mu:
        return 1.0, 0.0
    gap = mu[a] - mu[b]
    scale = 1.0 if abs(gap) < 1e-6 else (target_a - target_b) / gap
    return scale, target_a - scale * mu[a]


def rate_trueskill(
    comparisons: Sequence[BoardComparison],
    models: Iterable[str] = (),
    start: Mapping[str, float] | None = None,
    fresh: bool = True,
    ladder: Mapping[str, float] | None = None,
) -> dict[str, TsRating]:
    """The TrueSkill ratings of every model in ``comparisons`` and ``models`` (see the
    module docstring). ``ladder``: the rank window's ratings; None: the mu of a solve
    without the window (where the benchmark's rating loop leaves its ladder before the
    final solve). A model starts at ``start``'s mu (default 1200); with ``fresh`` (the
    benchmark's final solve) every model that plays starts at 1200 whatever ``start`` says."""
    every = sorted({m for c in comparisons for m in (c.test, c.other)} | set(models))
    base = start or {}
    if ladder is None:
        ladder, _ = _solve(pair_games(comparisons), every, base, BINS, fresh)
    games = pair_games(in_window(comparisons, ladder))
    mu, _ = _solve(games, every, base, BINS, fresh)
    _, sigma = _solve(games, every, base, BINS_CI, fresh)
    scale, shift = _normalizer(mu)
    return {
        m: TsRating(
            mu[m], sigma[m], mu[m] * scale + shift,
            (mu[m] - 1.96 * sigma[m]) * scale + shift, (mu[m] + 1.96 * sigma[m]) * scale + shift,
        )
        for m in every
    }  # fmt: skip
