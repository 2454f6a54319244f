"""EQ-Bench 3's leaderboard re-solved alone: the Elo file's stored comparisons rated by the
benchmark's own procedure (``compare --pairwise --leaderboard-elo FILE --rating trueskill``
with no run; docs/pairwise.md).

The benchmark's final solve on a loaded file: every stored comparison's plus counts
recomputed from the judge's reply (:mod:`empathos.pairwise.eqbench_plus`), failed ones
dropped, the rank window on the ladder of the file's own stored ratings, then its TrueSkill
(:mod:`empathos.pairwise.trueskill_rating`). Every model of the file is rated, a model
with no comparison at 1200.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from empathos.errors import ConfigError
from empathos.pairwise.leaderboard import read_board_elo
from empathos.pairwise.trueskill_rating import RANK_WINDOW, in_window, rate_trueskill

__all__ = ["format_board", "solve_board"]


def solve_board(path: Path, rating: str) -> dict[str, Any]:
    """The re-solve of the Elo file at ``path``, JSON-ready (ConfigError: ``rating`` is
    not trueskill, or the file is not an Elo file)."""
    if rating != "trueskill":
        raise ConfigError(
            "re-solving the leaderboard alone (no RUN) is EQ-Bench 3's TrueSkill: add "
            "--rating trueskill",
            field="--rating",
        )
    ratings, comparisons = read_board_elo(path)
    ladder = {m: r.elo for m, r in ratings.items()}
    ts = rate_trueskill(comparisons, ratings, ladder=ladder)
    rows: list[dict[str, Any]] = []
    for m, t in ts.items():
        published = ratings.get(m)
        rows.append({
            "model": m, "mu": t.mu, "sigma": t.sigma, "norm": t.norm,
            "norm_low": t.norm_low, "norm_high": t.norm_high,
            "published": None if published is None else {
                "elo": published.elo, "elo_norm": published.elo_norm,
                "sigma": published.sigma,
            },
        })  # fmt: skip
    rows.sort(key=lambda row: -row["norm"])
    return {
        "rating": "trueskill",
        "leaderboard_elo": str(path),
        "comparisons": len(comparisons),
        "comparisons_in_window": len(in_window(comparisons, ladder)),
        "rank_window": RANK_WINDOW,
        "normalised": any(abs(t.norm - t.mu) > 1e-9 for t in ts.values()),
        "ratings": rows,
    }


def format_board(result: dict[str, Any], fmt: str) -> str:
    """The re-solve as a table, ``json`` or ``csv``."""
    import json

    if fmt == "json":
        return json.dumps(result, indent=1, ensure_ascii=False)
    keys = ("model", "norm", "norm_low", "norm_high", "mu", "sigma")
    if fmt == "csv":
        body = [",".join(keys)]
        body += [",".join(str(r[k]) for k in keys) for r in result["ratings"]]
        return "\n".join(body)
    scale = "normalised (o3 1500, llama-3.2-1b 200)" if result["normalised"] else "raw mu"
    lines = [
        f"EQ-Bench 3's TrueSkill re-solve of {result['leaderboard_elo']}: "
        f"{result['comparisons']} stored comparison(s), {result['comparisons_in_window']} "
        f"within the rank window of {result['rank_window']}; rating {scale}",
        f"{'model':<44} {'rating':>8} {'95% interval':>17} {'mu':>8} {'sigma':>6} {'published':>9}",
    ]
    for r in result["ratings"]:
        pub = (r["published"] or {}).get("elo_norm")
        shown = "" if pub is None else f"{pub:.1f}"
        lines.append(
            f"{r['model'][:44]:<44} {r['norm']:>8.1f} "
            f"{r['norm_low']:>8.1f}..{r['norm_high']:<7.1f} "
            f"{r['mu']:>8.1f} {r['sigma']:>6.2f} {shown:>9}"
        )
    return "\n".join(lines)
