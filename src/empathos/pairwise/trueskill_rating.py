"""EQ-Bench 3's TrueSkill ratings, computed as the benchmark computes them (docs/pairwise.md).

Pure, through the ``trueskill`` package's public API. The steps, as the benchmark's solver
takes them:

1. **Plus counts per order**: each judged order gives each side the plus signs of every
   criterion it won (our judgements keep each criterion's winner and plus count). For an
   analysis task (numeric id 400 or above) an order counts at most 1-0, 0-1 or 0-0.
2. **One result per pair**: the orders of a pair (scenario, iteration, two models) are
   summed per model; the side with more plus signs wins, equal sums are a draw, and the
   fraction for the winner is ``0.5 + min(diff / 30, 1) / 2``.
3. **Margins as extra wins**: a draw is one drawn game; a win is
   ``ceil((fraction - 0.5) / (0.5 / bins))`` games won (1 to ``bins``), ``bins`` = 20.
4. **TrueSkill** with mu 1200, sigma 350/3, beta 350/6, tau 0, draw probability 0; the
   games played one after another (``rate_1vs1``), every model that played starting at mu
   1200; averaged over 10 orders of the pairs (shuffled with seeds 0..9).
5. **Sigma and interval**: sigma from a second solve with ``bins`` = 3; the interval is
   mu +- 1.96 sigma.
6. **Normalisation**: when both of the benchmark's anchor models are rated, a linear map
   puts them at 1500 and 200 (``elo_norm``); otherwise the numbers stay raw, as there.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from empathos.pairwise.leaderboard import BoardComparison
from empathos.pairwise.model import Judgement

__all__ = [
    "NORM_ANCHORS",
    "TS_MU",
    "TsRating",
    "comparisons_of",
    "pair_games",
    "rate_trueskill",
]

TS_MU = 1200.0
TS_SIGMA = 350.0 / 3.0
TS_BETA = 350.0 / 6.0
MAX_DIFF = 30.0
BINS = 20
BINS_CI = 3
SHUFFLES = 10
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


def _analysis(scenario_id: str) -> bool:
    return scenario_id.isdigit() and int(scenario_id) >= 400


def comparisons_of(judgements: Iterable[Judgement], judge: str) -> list[BoardComparison]:
    """``judge``'s judged orders as plus counts per side (step 1), ``first`` as ``test``."""
    out = []
    for j in judgements:
        if j.judge != judge or not j.picks:
            continue
        first = sum(p.margin for p in j.picks.values() if p.winner == "first")
        second = sum(p.margin for p in j.picks.values() if p.winner == "second")
        if _analysis(j.scenario_id):
            first, second = (int(first > second), int(second > first))
        out.append(BoardComparison(j.scenario_id, str(j.trial), j.first, j.second, first, second))
    return out


def _games(frac: float, bins: int) -> tuple[int, int]:
    """(wins of the first, wins of the second); (1, 1) is one drawn game (step 3)."""
    step = 0.5 / bins
    if abs(frac - 0.5) < 1e-9:
        return 1, 1
    if frac > 0.5:
        return max(1, min(bins, math.ceil((frac - 0.5) / step))), 0
    return 0, max(1, min(bins, math.ceil((0.5 - frac) / step)))


def pair_games(comparisons: Iterable[BoardComparison]) -> list[tuple[str, str, float]]:
    """One (model, model, fraction for the first) per pair, in order of first appearance
    (step 2)."""
    groups: dict[tuple[str, str, str, str], list[float]] = {}
    for c in comparisons:
        a, b = sorted((c.test, c.other))
        plus = groups.setdefault((a, b, c.scenario_id, c.iteration), [0.0, 0.0])
        plus[0] += c.plus_test if c.test == a else c.plus_other
        plus[1] += c.plus_other if c.test == a else c.plus_test
    out = []
    for (a, b, _, _), (pa, pb) in groups.items():
        half = min(abs(pa - pb) / MAX_DIFF, 1.0) / 2.0
        out.append((a, b, 0.5 if pa == pb else 0.5 + half if pa > pb else 0.5 - half))
    return out


def _solve(
    games: Sequence[tuple[str, str, float]],
    models: Sequence[str],
    start: Mapping[str, float],
    bins: int,
    fresh: bool = True,
) -> tuple[dict[str, float], dict[str, float]]:
    """Mean mu and sigma over the shuffled orders (steps 3 and 4)."""
    import trueskill  # here: only this rating needs it

    active = {m for a, b, _ in games for m in (a, b)}
    mu = dict.fromkeys(models, 0.0)
    sigma = dict.fromkeys(models, 0.0)
    for k in range(SHUFFLES):
        order = list(games)
        random.Random(k).shuffle(order)
        env = trueskill.TrueSkill(
            mu=TS_MU, sigma=TS_SIGMA, beta=TS_BETA, tau=0.0, draw_probability=0.0
        )
        r = {
            m: env.create_rating(mu=TS_MU if fresh and m in active else start.get(m, TS_MU))
            for m in models
        }
        for a, b, frac in order:
            wins_a, wins_b = _games(frac, bins)
            try:
                if (wins_a, wins_b) == (1, 1):
                    r[a], r[b] = trueskill.rate_1vs1(r[a], r[b], drawn=True, env=env)
                    continue
                for _ in range(wins_a):
                    r[a], r[b] = trueskill.rate_1vs1(r[a], r[b], env=env)
                for _ in range(wins_b):
                    r[b], r[a] = trueskill.rate_1vs1(r[b], r[a], env=env)
            except (ValueError, FloatingPointError):  # the benchmark skips such a game
                continue
        for m in models:
            mu[m] += r[m].mu / SHUFFLES
            sigma[m] += r[m].sigma / SHUFFLES
    return mu, sigma


def _normalizer(mu: Mapping[str, float]) -> tuple[float, float]:
    """(scale, shift) of the normalisation (step 6); (1, 0) without both anchors."""
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
) -> dict[str, TsRating]:
    """The TrueSkill ratings of every model in ``comparisons`` and ``models``. A model
    starts at ``start``'s mu (default 1200); with ``fresh`` (the benchmark's final solve)
    every model that plays starts at 1200 whatever ``start`` says."""
    games = pair_games(comparisons)
    every = sorted({m for a, b, _ in games for m in (a, b)} | set(models))
    mu, _ = _solve(games, every, start or {}, BINS, fresh)
    _, sigma = _solve(games, every, start or {}, BINS_CI, fresh)
    scale, shift = _normalizer(mu)
    return {
        m: TsRating(
            mu[m], sigma[m], mu[m] * scale + shift,
            (mu[m] - 1.96 * sigma[m]) * scale + shift, (mu[m] + 1.96 * sigma[m]) * scale + shift,
        )
        for m in every
    }  # fmt: skip
