"""Leaderboard rendering: a rich table, JSON and CSV."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from rich.table import Table

from empathos.epm import INDEX_NAMES
from empathos.scoring.leaderboard import LeaderboardRow
from empathos.scoring.usage import Usage

__all__ = [
    "COLUMN_LEGEND",
    "leaderboard_csv",
    "leaderboard_json",
    "leaderboard_table",
    "legend_text",
    "plural",
    "usage_line",
]

_GROUPS = ("outcome", "efficiency", "stability")

#: Every column of the rich table and what it holds (printed by ``empathos score --help``).
COLUMN_LEGEND: tuple[tuple[str, str], ...] = (
    ("model", "the row's group: the tested model (--label), or the case with --by case"),
    ("n", "dialogues scored: errors are not scored and not counted here"),
    ("err", "dialogues that ended as errors (infrastructure, never a model failure)"),
    ("succ", "dialogues whose termination is a success"),
    ("rate", "succ / n"),
    ("EPM-Q", "the composite: 0.4 Outcome + 0.2 Efficiency + 0.4 Stability"),
    ("Outcome", "mean of RDI, E_tot, S_net"),
    ("Effic.", "Efficiency: mean of Rho, S_proj, Tau"),
    ("Stab.", "Stability: mean of R_pos, Align, Pen"),
    ("RDI", "relative distance improvement: how much closer to the goal region it ended"),
    ("E_tot", "total effective energy, relative to the initial distance"),
    ("S_net", "net score: sum of the judge's levels, relative to the initial distance"),
    ("Rho", "energy per turn"),
    ("S_proj", "mean energy increment per evaluation"),
    ("Tau", "path straightness (tortuosity index); blind to direction"),
    ("R_pos", "share of evaluations that moved toward the goal"),
    ("Align", "mean alignment of the moves with the ideal direction"),
    ("Pen", "penalty index: high when negative levels were rare"),
    (
        "Tau\u00b1",
        "signed tortuosity: Tau, but 0 when the dialogue ended farther from the goal than "
        "it started (not part of EPM-Q)",
    ),
)


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``n`` and the noun, singular for 1: ``1 model``, ``2 models`` (``nouns``: an irregular
    plural)."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"


def legend_text() -> str:
    """The column legend, one ``column: meaning`` per line."""
    width = max(len(name) for name, _ in COLUMN_LEGEND)
    return "\n".join(f"{name:<{width}}  {text}" for name, text in COLUMN_LEGEND)


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def leaderboard_table(rows: Sequence[LeaderboardRow], *, group_label: str = "model") -> Table:
    """A rich table: group, dialogues scored, errors, successes, rate, EPM-Q, groups, nine
    indices and Tau± (columns explained by :data:`COLUMN_LEGEND`)."""
    title = "EPM-Q leaderboard"
    warnings = sorted({w for r in rows for w in r.warnings})
    if warnings:
        title += "".join(f"\nNOT MEANINGFUL: {w}" for w in warnings)
    table = Table(
        title=title,
        header_style="bold",
        caption="n: dialogues scored; err: ended as errors (not scored); "
        "Tau±: Tau, 0 when it ended farther from the goal. Every column: empathos score --help",
    )
    table.add_column(group_label)
    for name, _ in COLUMN_LEGEND[1:]:
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(
            r.model,
            str(r.n),
            str(r.extra.get("errors", 0)),
            str(r.successes),
            "-" if r.success_rate is None else f"{r.success_rate:.0%}",
            _fmt(r.epmq),
            *(_fmt(getattr(r, g)) for g in _GROUPS),
            *(_fmt(r.indices.get(k)) for k in INDEX_NAMES),
            _fmt(r.extra.get("tau_signed")),
        )
    return table


def leaderboard_json(rows: Sequence[LeaderboardRow], *, group_label: str = "model") -> str:
    """JSON list of objects with keys model (or case), n, successes, ..., indices, extra."""
    out = []
    for r in rows:
        item = r.model_dump(mode="json")
        if group_label != "model":
            item = {group_label: item.pop("model"), **item}
        out.append(item)
    return json.dumps(out, indent=2, ensure_ascii=False)


def leaderboard_csv(rows: Sequence[LeaderboardRow], *, group_label: str = "model") -> str:
    """CSV with one row per group; indices and extras flattened into columns."""
    buf = io.StringIO()
    head = [group_label, "n", "successes", "success_rate", "epmq", *_GROUPS, *INDEX_NAMES]
    head += ["tau_signed", "errors", "unscored_evaluations"]
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(head)
    for r in rows:
        writer.writerow(
            [r.model, r.n, r.successes, r.success_rate, r.epmq]
            + [getattr(r, g) for g in _GROUPS]
            + [r.indices.get(k) for k in INDEX_NAMES]
            + [
                r.extra.get("tau_signed"),
                r.extra.get("errors"),
                r.extra.get("unscored_evaluations"),
            ]
        )
    return buf.getvalue()


def usage_line(usage: Usage, unit: str = "dialogue") -> str:
    """One line: the tokens and cost of a set of dialogues (or bench items: ``unit``), per
    dialogue (item) and in all."""
    mean = usage.per_dialogue
    if mean is None or not usage.total.calls:
        return "usage: no model calls recorded"
    cached = f" ({usage.cached_share:.0%} cached)" if usage.cached_share is not None else ""
    line = (
        f"usage per {unit} ({usage.dialogues}): {mean.calls:.1f} calls, "
        f"{mean.input_tokens:,.0f} prompt tokens{cached}, {mean.output_tokens:,.0f} completion "
        "tokens"
    )
    if mean.cost_usd is None or usage.total.cost_usd is None:
        return line + "; cost: no price (a run config's prices table gives one)"
    return line + f"; cost ${mean.cost_usd:.4f} per {unit}, ${usage.total.cost_usd:.4f} in all"
