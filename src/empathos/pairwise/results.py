"""What ``empathos compare --pairwise`` shows: ratings, win matrix, flip rates, cost.

:func:`summarize` turns the stored judgements of one judge into one JSON-ready dict (the
``ratings.json`` of a results directory, the ``--format json`` output, and what the report's
pairwise section draws).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from empathos.pairwise.model import Item, Judgement
from empathos.pairwise.outcomes import combine, flip_rates
from empathos.pairwise.ratings import Ratings, rate

__all__ = ["summarize", "usage_of"]


def usage_of(judgements: Sequence[Judgement]) -> dict[str, Any]:
    """Calls, tokens, cache hits and cost of the stored judgements (every call counts: a
    failed one was paid for); cost None when no call was priced."""
    calls = [j.call for j in judgements if j.call is not None]
    costs = [c.cost_usd for c in calls if c.cost_usd is not None]
    return {
        "calls": len(calls),
        "failed": sum(j.picks is None for j in judgements),
        "cache_hits": sum(bool(c.cache_hit) for c in calls),
        "input_tokens": sum(c.input_tokens for c in calls),
        "output_tokens": sum(c.output_tokens for c in calls),
        "cost_usd": sum(costs) if costs else None,
    }


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(float(x), 6)


def _rows(r: Ratings) -> list[dict[str, Any]]:
    """One row per model, strongest first."""
    rows: list[dict[str, Any]] = [
        {
            "model": m,
            "elo": _num(r.elo[i]),
            "elo_lower": _num(r.elo_lower[i]),
            "elo_upper": _num(r.elo_upper[i]),
            "strength": _num(r.strengths[i]),
            "lower": _num(r.lower[i]),
            "upper": _num(r.upper[i]),
            "pairs": int(r.counts[i].sum()),
            "win_rate": _num(r.wins[i].sum() / r.counts[i].sum()),
        }
        for i, m in enumerate(r.models)
    ]
    rows.sort(key=lambda row: -(row["strength"] or 0.0))
    return rows


def summarize(
    judgements: Sequence[Judgement],
    items: Sequence[Item],
    judge: str,
    *,
    aspect: str = "overall",
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    length: bool = False,
    n_boot: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """Ratings of the models of ``items`` from ``judge``'s verdicts on ``aspect``."""
    verdicts = [v for j in judgements if (v := j.verdict(aspect)) is not None]
    every = combine(verdicts)
    outcomes = [o for o in every if o.judge == judge]
    models = sorted({o.a for o in outcomes} | {o.b for o in outcomes})
    lengths = {(i.scenario_id, i.trial, i.model): float(i.reply_chars) for i in items}
    base: dict[str, Any] = {
        "judge": judge,
        "aspect": aspect,
        "pairs": len(outcomes),
        "scenarios": len({o.scenario_id for o in outcomes}),
        "flip_rate": flip_rates(every),
        "usage": usage_of([j for j in judgements if j.judge == judge]),
    }
    if len(models) < 2:
        return {**base, "models": models, "ratings": [], "wins": [], "counts": []}
    if anchor is not None and anchor not in models:
        anchor = None
    r = rate(
        outcomes, models, anchor=anchor, anchor_rating=anchor_rating,
        lengths=lengths if length else None, n_boot=n_boot, seed=seed,
    )  # fmt: skip
    rows = _rows(r)
    return {
        **base,
        "models": models,
        "anchor": r.anchor,
        "anchor_rating": anchor_rating,
        "bootstrap": n_boot,
        "length_coef": r.length_coef,
        "length_interval": list(r.length_interval) if r.length_interval else None,
        "ratings": rows,
        "wins": r.wins.tolist(),
        "counts": r.counts.tolist(),
    }
