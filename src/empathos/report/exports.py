"""The report's leaderboard as Markdown, LaTeX and CSV, with the 95% intervals."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

from empathos.epm import INDEX_NAMES
from empathos.report.data import ModelSummary, ReportData

__all__ = ["COLUMNS", "leaderboard_csv_ci", "leaderboard_latex", "leaderboard_markdown"]

#: (column key, header): keys of :class:`LeaderboardRow` numbers, in table order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("success_rate", "Success"),
    ("turns_to_success", "Turns to succ."),
    ("epmq", "EPM-Q"),
    ("outcome", "Outcome"),
    ("efficiency", "Efficiency"),
    ("stability", "Stability"),
    *((k, k) for k in INDEX_NAMES),
)


def _value(m: ModelSummary, key: str) -> float | None:
    r = m.row
    if key == "turns_to_success":
        tts = r.extra.get("turns_to_success")
        return float(tts["mean"]) if tts else None
    if key in INDEX_NAMES:
        return r.indices.get(key)
    value: float | None = getattr(r, key)
    return value


def _text(m: ModelSummary, key: str, ci_fmt: Callable[[float, float], str]) -> str:
    v = _value(m, key)
    if v is None:
        return "-"
    scale = 100.0 if key == "success_rate" else 1.0
    ci = m.ci.get(key)
    band = ci_fmt(scale * ci[0], scale * ci[1]) if ci else ""
    return f"{scale * v:.2f}{band}"


def leaderboard_markdown(data: ReportData) -> str:
    """A Markdown table: value [low, high] per cell (success in %)."""
    head = ["model", "n", "errors", *(h for _, h in COLUMNS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in data.models:
        cells = [m.row.model, str(m.row.n), str(m.row.extra.get("errors", 0))]
        cells += [_text(m, k, lambda a, b: f" [{a:.2f}, {b:.2f}]") for k, _ in COLUMNS]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _tex(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"),
                 ("#", r"\#"), ("$", r"\$"), ("{", r"\{"), ("}", r"\}")):  # fmt: skip
        s = s.replace(a, b) if a != "\\" else s.replace(a, "\x00")
    return s.replace("\x00", r"\textbackslash{}")


def leaderboard_latex(data: ReportData) -> str:
    """A LaTeX tabular (booktabs): value with its interval as a subscript-size line."""
    head = ["Model", "$n$", "Err.", *(_tex(h) for _, h in COLUMNS)]
    out = [r"\begin{tabular}{l" + "r" * (len(head) - 1) + "}", r"\toprule"]
    out.append(" & ".join(head) + r" \\")
    out.append(r"\midrule")
    for m in data.models:
        cells = [_tex(m.row.model), str(m.row.n), str(m.row.extra.get("errors", 0))]
        cells += [
            _text(m, k, lambda a, b: rf"\,{{\scriptsize[{a:.2f}, {b:.2f}]}}") for k, _ in COLUMNS
        ]
        out.append(" & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(out) + "\n"


def leaderboard_csv_ci(data: ReportData) -> str:
    """CSV: per column its value and the interval bounds (``<key>``, ``<key>_lo``, ``<key>_hi``;
    success as a fraction)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["model", "n", "scenarios", "trials", "errors"]
    for k, _ in COLUMNS:
        head += [k, f"{k}_lo", f"{k}_hi"]
    w.writerow(head)
    for m in data.models:
        row: list[object] = [m.row.model, m.row.n, m.scenarios, m.trials, m.row.extra.get("errors")]
        for k, _ in COLUMNS:
            ci = m.ci.get(k)
            row += [_value(m, k), ci[0] if ci else None, ci[1] if ci else None]
        w.writerow(row)
    return buf.getvalue()
