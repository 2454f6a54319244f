"""Leaderboard rendering: a rich table, JSON and CSV."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from rich.table import Table

from empathos.epm import INDEX_NAMES
from empathos.scoring.leaderboard import LeaderboardRow

__all__ = ["leaderboard_csv", "leaderboard_json", "leaderboard_table"]

_GROUPS = ("outcome", "efficiency", "stability")


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def leaderboard_table(rows: Sequence[LeaderboardRow], *, group_label: str = "model") -> Table:
    """A rich table: group, dialogues, successes, rate, EPM-Q, groups, nine indices."""
    title = "EPM-Q leaderboard"
    warnings = sorted({w for r in rows for w in r.warnings})
    if warnings:
        title += "".join(f"\nNOT MEANINGFUL: {w}" for w in warnings)
    table = Table(title=title, header_style="bold")
    table.add_column(group_label)
    for name in ("n", "succ", "rate", "EPM-Q", "Outcome", "Effic.", "Stab.", *INDEX_NAMES):
        table.add_column(name, justify="right")
    table.add_column("Tau±", justify="right")
    for r in rows:
        table.add_row(
            r.model,
            str(r.n),
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
