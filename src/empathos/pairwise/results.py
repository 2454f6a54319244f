"""What ``empathos compare --pairwise`` shows: ratings, win matrix, flip rates, cost.

:func:`summarize` turns the stored judgements of one judge into one JSON-ready dict (the
``ratings.json`` of a results directory, the ``--format json`` output, and what the report's
pairwise section draws).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from empathos.pairwise.anchored import BOARD_SCALE, rate_anchored
from empathos.pairwise.leaderboard import Leaderboard
from empathos.pairwise.model import Item, Judgement
from empathos.pairwise.outcomes import Outcome, combine, flip_rates
from empathos.pairwise.ratings import Ratings, rate, win_matrix
from empathos.pairwise.trueskill_rating import TsRating, comparisons_of, rate_trueskill

__all__ = ["RATINGS_METHODS", "summarize", "usage_of"]

#: The rating methods: ours (Bradley-Terry) and EQ-Bench 3's (TrueSkill).
RATINGS_METHODS = ("bradley-terry", "trueskill")


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


def _rows(r: Ratings, fixed: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """One row per model, strongest first (``fixed``: rated by the leaderboard, held)."""
    rows: list[dict[str, Any]] = [
        {
            "model": m,
            "fixed": m in fixed,
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


def _trueskill(
    judgements: Sequence[Judgement],
    judge: str,
    outcomes: Sequence[Outcome],
    models: Sequence[str],
    board: Leaderboard | None,
) -> dict[str, Any]:
    """EQ-Bench 3's TrueSkill over the judge's orders (and the leaderboard's, when its Elo
    file holds them; else its models start at their published mu)."""
    mine = comparisons_of(judgements, judge)
    theirs = board.comparisons if board is not None else []
    start = {m: b.elo for m, b in board.ratings.items()} if board is not None else {}
    ts = rate_trueskill([*theirs, *mine], models, start, fresh=bool(theirs) or not start)
    wins, counts = win_matrix(outcomes, models)
    pos = {m: i for i, m in enumerate(models)}
    rows: list[dict[str, Any]] = []
    for m, t in ts.items():
        n = counts[pos[m]].sum() if m in pos else 0.0
        rows.append({
            "model": m, "fixed": False, "elo": _num(t.norm), "elo_lower": _num(t.norm_low),
            "elo_upper": _num(t.norm_high), "strength": _num(t.mu), "sigma": _num(t.sigma),
            "lower": _num(t.mu - 1.96 * t.sigma), "upper": _num(t.mu + 1.96 * t.sigma),
            "pairs": int(n), "win_rate": _num(wins[pos[m]].sum() / n) if n else None,
        })  # fmt: skip
    rows.sort(key=lambda row: -(row["elo"] or 0.0))
    return {
        "rating": "trueskill",
        "models": list(models),
        "anchor": "EQ-Bench 3's normalisation" if _normalised(ts) else "raw mu",
        "anchor_rating": None,
        "leaderboard_comparisons": len(theirs),
        "ratings": rows,
        "wins": wins.tolist(),
        "counts": counts.tolist(),
    }


def _normalised(ts: dict[str, TsRating]) -> bool:
    return any(abs(t.norm - t.mu) > 1e-9 for t in ts.values())


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
    board: Leaderboard | None = None,
    rating: str = "bradley-terry",
) -> dict[str, Any]:
    """Ratings of the models of ``items`` from ``judge``'s verdicts on ``aspect``: by
    Bradley-Terry (with a ``board`` that publishes ratings, its models held at them, the
    others fitted on its scale), or by EQ-Bench 3's TrueSkill (``rating``)."""
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
    if rating == "trueskill":
        return {**base, **_trueskill(judgements, judge, outcomes, models, board)}
    if anchor is not None and anchor not in models:
        anchor = None
    held = {m: (b.elo, b.ci) for m, b in (board.ratings if board else {}).items()}
    if held:
        r = rate_anchored(outcomes, models, held, n_boot=n_boot, seed=seed)
    else:
        r = rate(
            outcomes, models, anchor=anchor, anchor_rating=anchor_rating,
            lengths=lengths if length else None, n_boot=n_boot, seed=seed,
        )  # fmt: skip
    rows = _rows(r, frozenset(m for m in held if m in models))
    return {
        **base,
        "rating": "bradley-terry",
        "scale": BOARD_SCALE if held else None,
        "models": models,
        "anchor": r.anchor,
        "anchor_rating": None if held else anchor_rating,
        "bootstrap": n_boot,
        "length_coef": r.length_coef,
        "length_interval": list(r.length_interval) if r.length_interval else None,
        "ratings": rows,
        "wins": r.wins.tolist(),
        "counts": r.counts.tolist(),
    }
