"""The report's pairwise section: ratings with intervals, the win-rate heatmap, flip rate.

Drawn from a pairwise results directory's ``ratings.json`` (``empathos compare
--pairwise``); the page gets it through ``write_report``'s ``sections`` (``empathos report
--pairwise DIR``).
"""

from __future__ import annotations

import html
from typing import Any

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


def pairwise_html(data: dict[str, Any]) -> str:
    """The section of the HTML report."""
    rows = "".join(
        f"<tr><td>{html.escape(r['model'])}</td><td class='num'>{r['elo']:.0f}</td>"
        f"<td class='num'>{r['elo_lower']:.0f} to {r['elo_upper']:.0f}</td>"
        f"<td class='num'>{r['pairs']}</td><td class='num'>{_share(r['win_rate'])}</td></tr>"
        for r in data["ratings"]
    )
    flips = ", ".join(f"{html.escape(k)}: {v:.0%}" for k, v in data.get("flip_rate", {}).items())
    notes = [
        f"Judge {html.escape(str(data['judge']))}, verdict on {html.escape(str(data['aspect']))}; "
        f"{data['pairs']} pairs over {data['scenarios']} scenarios, each judged in both orders "
        f"(orders that disagree count as a tie). {_scale(data)}",
        f"Position flip rate: {flips or 'n/a'}.",
    ]
    if data.get("length_coef") is not None:
        notes.append(f"Length coefficient (style control): {data['length_coef']:.3f}.")
    table = (
        '<table id="pairwise-ratings"><tr><th>model</th><th>rating</th><th>95% interval</th>'
        f"<th>pairs</th><th>win rate</th></tr>{rows}</table>"
    )
    body = table + _heatmap(data) if data["ratings"] else "<p>No rated pair yet.</p>"
    text = "".join(f'<p class="note">{n}</p>' for n in notes)
    return f'<section id="sec-pairwise"><h2>Pairwise ratings</h2>{body}{text}</section>'
