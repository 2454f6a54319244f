"""Plan and run the judging: which pairs, in both orders, resumable, a failure kept apart.

:func:`plan_orders` pairs the items of every scenario and trial that two models both have,
spends the budget (:func:`~empathos.pairwise.select.choose_pairs`, with strengths fitted on
the outcomes already stored) and lists the orders still to judge: both orders of each
chosen pair, and the missing order of a pair begun before. :func:`judge_orders` runs them
``concurrency`` at once and stores each judgement as it ends; a failed call is stored with
its error and counted, and the other calls go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from empathos.pairwise.anchored import fit_anchored
from empathos.pairwise.judge import Judge
from empathos.pairwise.model import Item, Judgement
from empathos.pairwise.outcomes import Outcome, combine
from empathos.pairwise.ratings import bounded
from empathos.pairwise.select import PairKey, choose_pairs
from empathos.pairwise.store import JudgementStore

__all__ = ["OrderPlan", "candidate_pairs", "judge_orders", "plan_orders"]


@dataclass(frozen=True)
class OrderPlan:
    """The orders to judge now (first, second), and what was done before."""

    orders: list[tuple[Item, Item]]
    pairs: list[PairKey]
    done_pairs: int
    candidates: int


def candidate_pairs(
    items: Sequence[Item],
) -> tuple[dict[tuple[str, int, str], Item], list[PairKey]]:
    """Items by (scenario, trial, model), and every pair two models both have."""
    by_key = {(i.scenario_id, i.trial, i.model): i for i in items}
    cases: dict[tuple[str, int], list[str]] = {}
    for s, t, m in sorted(by_key):
        cases.setdefault((s, t), []).append(m)
    pairs = [(s, t, a, b) for (s, t), ms in cases.items() for a, b in combinations(ms, 2)]
    return by_key, pairs


def _strengths(
    models: Sequence[str], outcomes: Sequence[Outcome], fixed: Mapping[str, float] | None
) -> dict[str, float]:
    """The strengths selection works with: fitted on the outcomes so far (a model the data
    do not bound yet placed one logit beyond the others, so its pairs stay worth judging);
    with ``fixed`` (a leaderboard's), those held and the others fitted around them (at the
    median of the fixed before any outcome)."""
    if fixed:
        return dict(zip(models, fit_anchored(outcomes, models, fixed), strict=True))
    if not outcomes:
        return {}
    return dict(zip(models, bounded(outcomes, models), strict=True))


def plan_orders(
    items: Sequence[Item],
    stored: Sequence[Judgement],
    judge: str,
    max_pairs: int | None,
    seed: int = 0,
    *,
    allow: Callable[[PairKey], bool] | None = None,
    fixed: Mapping[str, float] | None = None,
) -> OrderPlan:
    """The plan of the module docstring for ``judge``; with ``allow``, only the pairs it
    allows (new models against a leaderboard, dialogues against their degraded copies), and
    with ``fixed`` the strengths of some models held (see :func:`_strengths`)."""
    by_key, candidates = candidate_pairs(items)
    if allow is not None:
        candidates = [c for c in candidates if allow(c)]
    ok = [j for j in stored if j.judge == judge and j.picks is not None]
    done_orders = {j.order for j in ok}
    begun = {v.pair for j in ok if (v := j.verdict()) is not None}
    models = sorted({i.model for i in items})
    verdicts = [v for j in ok if (v := j.verdict()) is not None]
    outcomes = [o for o in combine(verdicts) if o.a in models and o.b in models]
    strengths = _strengths(models, outcomes, fixed)
    begun &= set(candidates)
    chosen = choose_pairs(candidates, begun, strengths, max_pairs, seed)
    orders = []
    for s, t, a, b in sorted(begun) + chosen:
        for x, y in ((a, b), (b, a)):
            if (s, t, x, y, judge) not in done_orders:
                orders.append((by_key[(s, t, x)], by_key[(s, t, y)]))
    return OrderPlan(orders, sorted(begun) + chosen, len(begun), len(candidates))


async def judge_orders(
    orders: Sequence[tuple[Item, Item]],
    judge: Judge,
    store: JudgementStore,
    concurrency: int = 4,
    on_done: Callable[[Judgement], None] | None = None,
) -> list[Judgement]:
    """Judge ``orders``, ``concurrency`` at once; each judgement stored as it ends."""
    gate = asyncio.Semaphore(concurrency)
    done: list[Judgement] = []

    async def one(first: Item, second: Item) -> None:
        async with gate:
            judgement = await judge(first, second)
        store.append(judgement)
        done.append(judgement)
        if on_done is not None:
            on_done(judgement)

    await asyncio.gather(*(one(f, s) for f, s in orders))
    return done
