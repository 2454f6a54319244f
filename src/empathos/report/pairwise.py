"""The report's pairwise section: ratings with intervals, the win-rate heatmap, position bias.

Drawn from a pairwise results directory's ``ratings.json`` (``empathos compare
--pairwise``); the page gets it through ``write_report``'s ``sections`` (``empathos report
--pairwise DIR``).
"""

from __future__ import annotations

import html
from typing import Any

#: How a pair scored in a ratings.json written before it said so (the games rule).
_GAMES = "a pair scores the share of its games a model won; strong verdicts count three"

__all__ = ["pairwise_html"]


def _cell(rate: float | None) -> str:
    if rate is None:
        return '<td class="num">-</td>'
    # white at 50%, green above, red below
    g = int(255 - max(0.0, 0.5 - rate) * 2 * 120)
    r = int(255 - max(0.0, rate - 0.5) * 2 * 120)
    b = min(r, g)
    return f'<td class="num" style="background:rgb({r},{g},{b})">{rate:.0%}</td>'


def _heatmap(data: dict[str, Any]) -> str:
    models: list[str] = data["models"]
    wins, counts = data["wins"], data["counts"]
    head = "".join(f"<th>{html.escape(m)}</th>" for m in models)
    rows = []
    for i, m in enumerate(models):
        cells = "".join(
            _cell(wins[i][j] / counts[i][j] if i != j and counts[i][j] else None)
            for j in range(len(models))
        )
        rows.append(f"<tr><th>{html.escape(m)}</th>{cells}</tr>")
    return (
        '<table id="pairwise-heatmap"><caption>Win rate of the row against the column (ties '
        f"half)</caption><tr><th></th>{head}</tr>{''.join(rows)}</table>"
    )


def _share(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def _scale(data: dict[str, Any]) -> str:
    """How the ratings were made and on what scale (docs/pairwise.md)."""
    if data.get("rating") == "trueskill":
        return (
            "EQ-Bench 3's TrueSkill (mu; 95% interval mu +- 1.96 sigma), "
            f"{html.escape(str(data.get('anchor')))}."
        )
    if data.get("scale"):
        return (
            "Bradley-Terry, the leaderboard's models held at their published ratings and the "
            "new models fitted on that scale; 95% intervals by bootstrap over scenarios."
        )
    return (
        "Bradley-Terry on an Elo-like scale anchored on "
        f"{html.escape(str(data.get('anchor')))} = {data.get('anchor_rating') or 1000:.0f}; "
        "95% intervals by bootstrap over scenarios."
    )


def _interval(r: dict[str, Any]) -> str:
    """The interval cell: the bounds (an open one as -inf / +inf), or why there are none."""
    if not r.get("identified", True):
        return f"not identified: {html.escape(str(r.get('note')))}"
    if r.get("anchor"):
        return "anchor"
    lo, hi = r["elo_lower"], r["elo_upper"]
    return f"{'-inf' if lo is None else f'{lo:.0f}'} to {'+inf' if hi is None else f'{hi:.0f}'}"


def _rating(r: dict[str, Any]) -> str:
    return "-" if r["elo"] is None else f"{r['elo']:.0f}"


def _position(data: dict[str, Any]) -> str:
    """Flip rate and first-position win rate per judge."""
    first = data.get("first_position_rate", {})
    parts = [
        f"{html.escape(k)}: flip rate {v:.0%}"
        + (f", first position picked in {first[k]:.1%} of orders" if k in first else "")
        for k, v in data.get("flip_rate", {}).items()
    ]
    return "Position bias (50% first-position picks = none): " + ("; ".join(parts) or "n/a") + "."


def pairwise_html(data: dict[str, Any]) -> str:
    """The section of the HTML report."""
    rows = "".join(
        f"<tr><td>{html.escape(r['model'])}</td><td class='num'>{_rating(r)}</td>"
        f"<td class='num'>{_interval(r)}</td>"
        f"<td class='num'>{r['pairs']}</td><td class='num'>{_share(r['win_rate'])}</td></tr>"
        for r in data["ratings"]
    )
    notes = [
        f"Judge {html.escape(str(data['judge']))}, verdict on {html.escape(str(data['aspect']))}; "
        f"{data['pairs']} pairs over {data['scenarios']} scenarios, each judged in both orders "
        f"({html.escape(str(data.get('scoring', _GAMES)))}). {_scale(data)}",
        _position(data),
    ]
    coefs = data.get("style_coefs")
    if coefs:
        cells = ", ".join(f"{html.escape(k)} {c[0]:.3f}" for k, c in coefs.items())
        notes.append(f"Style control coefficients (standardised): {cells}.")
    what = html.escape(str(data.get("interval", "95% interval")))
    table = (
        '<table id="pairwise-ratings"><tr><th>model</th><th>rating</th>'
        f"<th>interval ({what})</th><th>pairs</th><th>win rate</th></tr>{rows}</table>"
    )
    body = table + _heatmap(data) if data["ratings"] else "<p>No rated pair yet.</p>"
    text = "".join(f'<p class="note">{n}</p>' for n in notes)
    return f'<section id="sec-pairwise"><h2>Pairwise ratings</h2>{body}{text}</section>'
