"""What ``empathos compare --pairwise`` shows: ratings, win matrix, position bias, cost.

:func:`summarize` turns the stored judgements of one judge into one JSON-ready dict (the
``ratings.json`` of a results directory, the ``--format json`` output, and what the report's
pairwise section draws). Every interval says what it is (``interval``), and a model whose
rating the data do not bound has ``identified`` false, a ``note`` saying why, and no number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from empathos.pairwise.anchored import (
    BOARD_SCALE,
    Held,
    board_outcomes,
    board_scale,
    rate_anchored,
)
from empathos.pairwise.leaderboard import Leaderboard
from empathos.pairwise.model import Item, Judgement
from empathos.pairwise.outcomes import Outcome, combine, first_position_rates, flip_rates
from empathos.pairwise.ratings import Ratings, rate, status_note, win_matrix
from empathos.pairwise.style import STYLE, StyleKey, style_of
from empathos.pairwise.transcript import seen_replies
from empathos.pairwise.trueskill_rating import TsRating, comparisons_of, rate_trueskill

__all__ = [
    "BOOTSTRAP",
    "GAMES_SCORING",
    "RATINGS_METHODS",
    "OutcomeRule",
    "board_strengths",
    "default_rule",
    "style_table",
    "summarize",
    "usage_of",
]

#: The rating methods: ours (Bradley-Terry) and EQ-Bench 3's (TrueSkill).
RATINGS_METHODS = ("bradley-terry", "trueskill")
#: What a Bradley-Terry interval is.
BOOTSTRAP = "95% percentile bootstrap over scenarios"
#: Judgements and aspect -> outcomes (default: both orders combined, strong verdicts x3);
#: a rule's ``scoring`` attribute, when it has one, says how a pair scores.
OutcomeRule = Callable[[Sequence[Judgement], str], list[Outcome]]
#: How a pair scores under the default rule.
GAMES_SCORING = "a pair scores the share of its games a model won; strong verdicts count three"


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
    """A JSON number: None for NaN (not identified) and for an open (infinite) bound."""
    return None if not math.isfinite(x) else round(float(x), 6)


def _rank(row: dict[str, Any]) -> tuple[int, float]:
    """Rows strongest first: separated above, the identified by rating, below, unlinked."""
    above = {"won every comparison", "separated above the anchor"}
    below = {"lost every comparison", "separated below the anchor"}
    if row["identified"]:
        return (1, -(row["strength"] or 0.0))
    if row["note"] in above:
        return (0, 0.0)
    return (2, 0.0) if row["note"] in below else (3, 0.0)


def _rows(r: Ratings, fixed: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """One row per model (``fixed``: rated by the leaderboard, held)."""
    rows: list[dict[str, Any]] = []
    for i, m in enumerate(r.models):
        note = None if m in fixed else status_note(float(r.status[i]), r.wins, r.counts, i)
        games = r.counts[i].sum()
        rows.append({
            "model": m, "fixed": m in fixed, "identified": note is None, "note": note,
            "anchor": m == r.anchor, "elo": _num(r.elo[i]), "elo_lower": _num(r.elo_lower[i]),
            "elo_upper": _num(r.elo_upper[i]), "strength": _num(r.strengths[i]),
            "lower": _num(r.lower[i]), "upper": _num(r.upper[i]), "pairs": int(r.pairs[i].sum()),
            "win_rate": _num(r.wins[i].sum() / games) if games else None,
        })  # fmt: skip
    rows.sort(key=_rank)
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
            "model": m, "fixed": False, "identified": True, "note": None, "anchor": False,
            "elo": _num(t.norm), "elo_lower": _num(t.norm_low), "elo_upper": _num(t.norm_high),
            "strength": _num(t.mu), "sigma": _num(t.sigma), "lower": _num(t.mu - 1.96 * t.sigma),
            "upper": _num(t.mu + 1.96 * t.sigma), "pairs": int(n),
            "win_rate": _num(wins[pos[m]].sum() / n) if n else None,
        })  # fmt: skip
    rows.sort(key=lambda row: -(row["elo"] or 0.0))
    return {
        "rating": "trueskill",
        "interval": "TrueSkill mu +- 1.96 sigma",
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


def default_rule(judgements: Sequence[Judgement], aspect: str) -> list[Outcome]:
    """Both orders combined, strong verdicts counted three times (outcomes.combine)."""
    return combine([v for j in judgements if (v := j.verdict(aspect)) is not None])


def _held(board: Leaderboard | None) -> tuple[dict[str, Held], list[Outcome]]:
    """The leaderboard's models to hold and its judged orders; none held when its orders
    cannot fit the scale (:func:`~empathos.pairwise.anchored.board_scale`): the leaderboard
    then only provides opponents."""
    if board is None or not board.ratings:
        return {}, []
    theirs = board_outcomes(board.comparisons)
    k = board_scale(theirs, {m: b.elo for m, b in board.ratings.items()})
    if not math.isfinite(k) or k <= 0:
        return {}, []
    return {m: Held(b.elo, b.sigma, b.ci) for m, b in board.ratings.items()}, theirs


def board_strengths(board: Leaderboard) -> dict[str, float]:
    """The leaderboard models' strengths that selection holds: rating x the scale fitted on
    its judged orders (:data:`BOARD_SCALE` when it holds none to fit)."""
    ratings = {m: b.elo for m, b in board.ratings.items()}
    k = board_scale(board_outcomes(board.comparisons), ratings) if board.comparisons else 0.0
    k = k if math.isfinite(k) and k > 0 else BOARD_SCALE
    return {m: r * k for m, r in ratings.items()}


def style_table(
    items: Sequence[Item], seen: Callable[[Item], str] | None = None
) -> dict[StyleKey, tuple[float, ...]]:
    """Each dialogue's style counts over its replies as the judge saw them (``seen``: the
    judge's own view; default: our truncation rule), for style control."""
    look = seen or seen_replies
    return {(i.scenario_id, i.trial, i.model): style_of(look(i)) for i in items}


def _bradley_terry(
    outcomes: Sequence[Outcome],
    models: Sequence[str],
    board: Leaderboard | None,
    style: Mapping[StyleKey, Sequence[float]] | None,
    opts: dict[str, Any],
) -> dict[str, Any]:
    held, theirs = _held(board)
    anchor = opts["anchor"] if opts["anchor"] in models else None
    scale = None
    if held and any(m in held for m in models):  # else no verdict touches the board yet
        r, scale = rate_anchored(outcomes, models, held, theirs, n_boot=opts["n_boot"],
                                 seed=opts["seed"])  # fmt: skip
    else:
        r = rate(
            outcomes, models, anchor=anchor, anchor_rating=opts["anchor_rating"], style=style,
            n_boot=opts["n_boot"], seed=opts["seed"],
        )  # fmt: skip
    rows = _rows(r, frozenset(m for m in held if m in models))
    coefs = None
    if r.coefs is not None and r.coef_bounds is not None:
        lo, hi = r.coef_bounds
        coefs = {n: [float(r.coefs[i]), float(lo[i]), float(hi[i])] for i, n in enumerate(STYLE)}
    return {
        "rating": "bradley-terry",
        "interval": BOOTSTRAP + (" (the leaderboard's uncertainty included)" if held else ""),
        "scale": scale,
        "models": list(models),
        "anchor": r.anchor,
        "anchor_rating": None if held else opts["anchor_rating"],
        "bootstrap": opts["n_boot"],
        "style_coefs": coefs,
        "length_coef": r.length_coef,
        "length_interval": list(r.length_interval) if r.length_interval else None,
        "ratings": rows,
        "wins": r.wins.tolist(),
        "counts": r.counts.tolist(),
        "not_identified": sum(not row["identified"] for row in rows),
        "leaderboard_note": _board_note(board, held),
    }


def _board_note(board: Leaderboard | None, held: Mapping[str, Held]) -> str | None:
    if board is None or held or not board.ratings:
        return None
    return (
        "the leaderboard's judged orders cannot fit the conversion from its ratings to "
        "logits, so its ratings are not held: plain Bradley-Terry over this judge's verdicts"
    )


def summarize(
    judgements: Sequence[Judgement],
    items: Sequence[Item],
    judge: str,
    *,
    aspect: str = "overall",
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    style: Mapping[StyleKey, Sequence[float]] | None = None,
    n_boot: int = 200,
    seed: int = 0,
    board: Leaderboard | None = None,
    rating: str = "bradley-terry",
    rule: OutcomeRule = default_rule,
) -> dict[str, Any]:
    """Ratings of the models of ``items`` from ``judge``'s verdicts on ``aspect`` (outcomes
    by ``rule``): by Bradley-Terry (with ``style``, (scenario, trial, model) -> the style
    counts the judge saw, style-controlled; with a ``board`` whose Elo file holds judged
    orders, its models held at their ratings and the others fitted on its scale), or by
    EQ-Bench 3's TrueSkill (``rating``)."""
    verdicts = [v for j in judgements if (v := j.verdict(aspect)) is not None]
    every = rule(judgements, aspect)
    outcomes = [o for o in every if o.judge == judge]
    models = sorted({o.a for o in outcomes} | {o.b for o in outcomes})
    done = {(o.scenario_id, o.trial, o.a, o.b, o.judge) for o in every}
    paired = [v for v in verdicts if (*v.pair, v.judge) in done]
    base: dict[str, Any] = {
        "judge": judge,
        "aspect": aspect,
        "scoring": getattr(rule, "scoring", GAMES_SCORING),
        "pairs": len(outcomes),
        "scenarios": len({o.scenario_id for o in outcomes}),
        "flip_rate": flip_rates(every),
        "first_position_rate": first_position_rates(paired),
        "usage": usage_of([j for j in judgements if j.judge == judge]),
    }
    if len(models) < 2:
        return {**base, "models": models, "ratings": [], "wins": [], "counts": []}
    if rating == "trueskill":
        return {**base, **_trueskill(judgements, judge, outcomes, models, board)}
    opts = {"anchor": anchor, "anchor_rating": anchor_rating, "n_boot": n_boot, "seed": seed}
    return {**base, **_bradley_terry(outcomes, models, board, style, opts)}
