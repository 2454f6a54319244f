"""The study's outputs: the JSON document, its Markdown rendering and the terminal table.

The JSON (``validate.json``) holds everything needed to reproduce or extend the study: the
options, the seeds, the judges (names and settings, never keys), the pairs used with every
score, the table rows and the agreement results. ``validate.md`` is the same table as
Markdown; ``empathos report`` embeds it when it finds it next to the records.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["LABELS", "fmt", "markdown", "print_tables", "section_html"]

LABELS = {
    "persona_flip": "Persona Flip",
    "sycophancy": "Sycophancy",
    "epm": "EPM (delta_E)",
    "rubric": "rubric-only linear",
    "direct": "direct judge (1..10)",
}

_COLUMNS = ("n", "mean", "median", "Pr(d<0)", "95% CI", "tie rate", "p (signed-rank)", "verdict")


def fmt(x: object, digits: int = 2) -> str:
    """A number for a table: fixed digits, '-' for None/NaN."""
    if x is None:
        return "-"
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        return f"{x:.{digits}f}"
    return str(x)


def _missing(x: object) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _pct(x: object) -> str:
    return "-" if _missing(x) or not isinstance(x, int | float) else f"{100 * float(x):.1f}%"


def _cells(row: dict[str, Any]) -> list[str]:
    ci = "-" if _missing(row["ci_low"]) else f"[{fmt(row['ci_low'])}, {fmt(row['ci_high'])}]"
    p = row["p_value"]
    return [
        str(row["n"]),
        fmt(row["mean"]),
        fmt(row["median"]),
        _pct(row["pr_negative"]),
        ci,
        _pct(row["tie_rate"]),
        "-" if _missing(p) else f"{p:.3g}",
        str(row["verdict"]),
    ]


def _title(row: dict[str, Any]) -> tuple[str, str, str]:
    return LABELS[row["perturbation"]], str(row["subset"]), LABELS.get(row["scorer"], row["scorer"])


def _agreement_lines(agreement: Sequence[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for a in agreement:
        kappas = ", ".join(f"{k} {fmt(v)}" for k, v in a["kappa"].items())
        lines += [
            f"**{a['label']}** ({a['rater_a']} vs {a['rater_b']}; {len(a['dialogues'])} "
            f"dialogues, {a['points']} evaluations, {a['failed']} failed)",
            "",
            f"- {a['kappa_weights']}-weighted kappa per indicator: {kappas}",
            f"- delta_E sign agreement: {_pct(a['sign_agreement'])}",
            f"- Spearman of per-dialogue EPM-Q: {fmt(a['epmq_spearman'])}",
            f"- leaderboard order: {' > '.join(a['leaderboard_order_a']) or '-'} vs "
            f"{' > '.join(a['leaderboard_order_b']) or '-'} "
            f"(Kendall tau {fmt(a['leaderboard_kendall'])})",
            "",
        ]
    return lines


def markdown(doc: dict[str, Any]) -> str:
    """The study as Markdown: warnings, the table, agreement, and what was sampled."""
    s = doc["sample"]
    lines = [
        "## Judge validation",
        "",
        f"Judge: `{doc['judge']['name']}` ({doc['judge']['kind']}). "
        f"{s['points']} evaluation points from {s['dialogues_available']} dialogues "
        f"(seed {doc['options']['seed']}); {s['pairs_failed']} pairs left out for failed calls.",
        "",
    ]
    for w in doc["warnings"]:
        lines.append(f"> **Warning:** {w}")
        lines.append("")
    lines.append(f"**Summary:** {doc['conclusion']}")
    lines.append("")
    head = ("perturbation", "subset", "scorer", *_COLUMNS)
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for row in doc["table"]:
        lines.append("| " + " | ".join([*_title(row), *_cells(row)]) + " |")
    lines += [
        "",
        "d = perturbed - original score of the same evaluation point; a good scorer gives "
        "d < 0 for both perturbations. Paper (EMPA, its judge): Persona Flip 251 pairs, mean "
        "delta_E -1.22, 72.5% decreased, 3.2% ties; Sycophancy 98 pairs, mean -4.36, 81.6% "
        "decreased; rubric-only ties 44.2% of flips; the direct judge rewards sycophancy "
        "(+1.65). See docs/validate.md.",
        "",
    ]
    if doc["agreement"]:
        lines += ["### Judge agreement", ""]
        lines += _agreement_lines(doc["agreement"])
    return "\n".join(lines) + "\n"


def print_tables(doc: dict[str, Any], console: Console) -> None:
    """The table, the warnings, the agreement and the conclusion, for the terminal."""
    for w in doc["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {w}")
    table = Table(title=f"Judge validation: {doc['judge']['name']}")
    short = {"epm": "EPM dE", "rubric": "rubric", "direct": "direct"}
    for col in ("perturbation", "subset", "scorer", *_COLUMNS):
        table.add_column(col, justify="right" if col in _COLUMNS[:-1] else "left")
    for row in doc["table"]:
        pert, subset, _ = _title(row)
        table.add_row(pert, subset, short.get(row["scorer"], row["scorer"]), *_cells(row))
    console.print(table)
    for line in _agreement_lines(doc["agreement"]):
        if line:
            console.print(line.replace("**", ""))
    console.print(f"[bold]{doc['conclusion']}[/bold]")


def section_html(doc: dict[str, Any]) -> str:
    """The table, warnings and agreement as a section of the HTML report (``empathos
    report``'s ``sections``)."""
    esc = html.escape
    warn = "".join(f'<p class="note"><b>Warning:</b> {esc(w)}</p>' for w in doc["warnings"])
    head = "".join(f"<th>{esc(c)}</th>" for c in ("perturbation", "subset", "scorer", *_COLUMNS))
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in (*_title(r), *_cells(r))) + "</tr>"
        for r in doc["table"]
    )
    agree = "".join(
        f"<p>{esc(line.replace('**', ''))}</p>"
        for line in _agreement_lines(doc["agreement"])
        if line
    )
    return (
        f'<section id="sec-validate"><h2>Judge validation: {esc(doc["judge"]["name"])}</h2>'
        f"{warn}<p><b>{esc(doc['conclusion'])}</b></p>"
        f'<table id="validate"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        f'{agree}<p class="note">d = perturbed - original score of one evaluation point; '
        "interval: bootstrap over scenarios; p: Wilcoxon signed-rank. See docs/validate.md."
        "</p></section>"
    )
