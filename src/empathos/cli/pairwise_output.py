"""How ``compare --pairwise`` prints its results: a table, JSON or CSV (docs/pairwise.md).

Every interval is labelled with what it is (the results' ``interval``); a model whose rating
the data do not bound shows "not identified" and why, never a number; an open bound shows
as -inf / +inf; the win matrix has its column headers.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

__all__ = ["check_lines", "format_results"]

_FIELDS = [
    "model", "elo", "elo_lower", "elo_upper", "strength", "lower", "upper", "pairs",
    "win_rate", "identified", "note",
]  # fmt: skip


def _csv(result: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=_FIELDS, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for row in result["ratings"]:
        w.writerow(row)
    return buf.getvalue()


def _bound(x: float | None, side: str) -> str:
    return f"{x:.0f}" if x is not None else side + "inf"


def _rating_cells(r: dict[str, Any]) -> str:
    """The rating and its interval, or why there is none."""
    if not r.get("identified", True):
        return f"{'--':>7} {'not identified: ' + str(r['note']):<42}"
    if r.get("anchor"):
        return f"{r['elo']:>7.0f} {'(anchor)':<42}"
    interval = f"{_bound(r['elo_lower'], '-')}..{_bound(r['elo_upper'], '+')}"
    return f"{r['elo']:>7.0f} {interval:<42}"


def _matrix(result: dict[str, Any]) -> list[str]:
    models = result["models"]
    width = max(6, min(12, max(len(m) for m in models)))
    head = " ".join(f"{m[:width]:>{width}}" for m in models)
    scoring = result.get("scoring", "ties half, strong verdicts x3")
    lines = [f"win matrix (row's score against column; {scoring}):"]
    lines.append(f"  {'':<30} {head}")
    for i, m in enumerate(models):
        cells = " ".join(f"{w:>{width}.1f}" for w in result["wins"][i])
        lines.append(f"  {m[:30]:<30} {cells}")
    return lines


def _position_line(result: dict[str, Any]) -> str:
    judges = sorted(result["flip_rate"])
    first = result.get("first_position_rate", {})
    parts = [
        f"{j}: flip rate {result['flip_rate'][j]:.0%} (orders disagree), first position "
        f"picked {first[j]:.1%} of orders (50% = no position bias)"
        if j in first
        else f"{j}: flip rate {result['flip_rate'][j]:.0%}"
        for j in judges
    ]
    return "position bias: " + ("; ".join(parts) or "n/a")


def _style_line(result: dict[str, Any]) -> str | None:
    coefs = result.get("style_coefs")
    if not coefs:
        return None
    cells = ", ".join(f"{k} {c:.3f} [{lo:.3f}, {hi:.3f}]" for k, (c, lo, hi) in coefs.items())
    return f"style coefficients (standardised, on what the judge saw; 95% bootstrap): {cells}"


def _table(result: dict[str, Any]) -> str:
    what = result.get("interval", "95% interval")
    lines = [
        f"pairwise ratings ({result['aspect']}; judge {result['judge']}; {result['pairs']} pairs "
        f"over {result['scenarios']} scenarios; both orders; interval: {what})"
    ]
    lines.append(f"{'model':<32} {'rating':>7} {'interval':<42} {'pairs':>6} {'win rate':>8}")
    for r in result["ratings"]:
        rate = "" if r["win_rate"] is None else f"{r['win_rate']:>8.0%}"
        held = "  (leaderboard, held)" if r.get("fixed") else ""
        lines.append(f"{r['model'][:32]:<32} {_rating_cells(r)} {r['pairs']:>6} {rate:>8}{held}")
    if result["ratings"]:
        lines.append(_scale_line(result))
        lines += _matrix(result)
    lines.append(_position_line(result))
    style = _style_line(result)
    if style:
        lines.append(style)
    if "degraded_check" in result:
        lines.append(check_lines(result["degraded_check"]))
    u = result["usage"]
    cost = "no price" if u["cost_usd"] is None else f"${u['cost_usd']:.4f}"
    lines.append(
        f"judge calls: {u['calls']} ({u['cache_hits']} from the cache, {u['failed']} failed); "
        f"{u['input_tokens']:,} prompt / {u['output_tokens']:,} completion tokens; cost {cost}"
    )
    return "\n".join(lines)


def _scale_line(result: dict[str, Any]) -> str:
    if result.get("rating") == "trueskill":
        n = result.get("leaderboard_comparisons", 0)
        return (
            f"EQ-Bench 3's TrueSkill (rating: mu, {result['anchor']}; interval mu +- 1.96 "
            f"sigma; {n} leaderboard order(s) in the solve)"
        )
    if result.get("leaderboard_note"):
        return f"note: {result['leaderboard_note']}; anchor: {result['anchor']} = " + (
            f"{result['anchor_rating']:.0f}"
        )
    if result.get("scale"):
        return (
            "scale: the leaderboard's ratings, held; the new models fitted on it "
            f"({result['scale']:.5f} logit per point, fitted on its own judged orders)"
        )
    return f"anchor: {result['anchor']} = {result['anchor_rating']:.0f}"


def format_results(result: dict[str, Any], fmt: str) -> str:
    """The results as ``table``, ``json`` or ``csv``."""
    if fmt == "json":
        return json.dumps(result, indent=1, ensure_ascii=False)
    if fmt == "csv":
        return _csv(result)
    return _table(result)


def check_lines(check: dict[str, Any]) -> str:
    """The check as the table's last lines."""
    if not check["pairs"]:
        return "degraded check: no pair judged in both orders; FAIL"
    lo, hi = check["interval"]
    verdict = "PASS" if check["passed"] else "FAIL"
    return (
        f"degraded check: the degraded copy lost {check['degraded_lost']:.0%} of "
        f"{check['pairs']} pairs (95% interval over scenarios {lo:.0%}..{hi:.0%}); flip rate "
        f"{check['flip_rate']:.0%}; {verdict} (threshold {check['threshold']:.0%})"
    )
