"""Paired comparison of two models (or runs) on the scenarios and trials they share.

Dialogues pair by (scenario id, trial). Dialogues that ended as errors are left out, so a
pair needs a scored dialogue on both sides; a side with none, or two sides with no pair, is
an :class:`~empathos.errors.InputError` (one line, never a table of NaN). Per scenario, A wins
when its mean over the shared trials is better (higher, or lower for ``final_norm`` and
``turns``); the mean paired difference is A - B with a paired bootstrap interval and a
sign-flip permutation p-value (``empathos.scoring.stats``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rich.table import Table

from empathos.epm import INDEX_NAMES, EPMConfig, TerminationKind
from empathos.errors import InputError
from empathos.records import LoadedRecord
from empathos.report.data import dialogue_trials
from empathos.scoring.dialogues import GROUP_NAMES, dialogue_scores
from empathos.scoring.integrity import LabelBy, row_label
from empathos.scoring.stats import PairedSummary, cluster_index, paired_summary

__all__ = [
    "LOWER_IS_BETTER",
    "METRICS",
    "Comparison",
    "compare_records",
    "comparison_html",
    "comparison_table",
    "single_model",
]

METRICS: tuple[str, ...] = ("epmq", "success", *GROUP_NAMES, *INDEX_NAMES, "final_norm", "turns")
LOWER_IS_BETTER = frozenset({"final_norm", "turns"})


@dataclass(frozen=True, slots=True)
class Comparison:
    """The result of :func:`compare_records`."""

    name_a: str
    name_b: str
    metric: str
    summary: PairedSummary
    a_lacks: int
    b_lacks: int
    shared_scenarios: list[str]


def single_model(loaded: Sequence[LoadedRecord], where: str, label_by: LabelBy = "auto") -> str:
    """The one model of ``loaded``, named as ``empathos score --label`` names its row (an
    InputError when there are none or several)."""
    names = sorted({row_label(x, label_by) for x in loaded})
    if len(names) != 1:
        found = ", ".join(names) if names else "no readable records"
        raise InputError(f"compare needs one model per side; found {found}", file=where)
    return names[0]


def _values(
    loaded: Sequence[LoadedRecord], metric: str, config: EPMConfig
) -> dict[tuple[str, int], float]:
    items = sorted(loaded, key=lambda x: (x.record.scenario_id, str(x.path)))
    items = [x for x in items if x.record.termination.kind is not TerminationKind.ERROR]
    recs = [x.record for x in items]
    sc = dialogue_scores(recs, config)
    if metric == "epmq":
        vals = sc.epmq
    elif metric == "success":
        vals = np.asarray([float(r.success) for r in recs])
    elif metric in GROUP_NAMES:
        vals = sc.groups[:, GROUP_NAMES.index(metric)]
    elif metric in INDEX_NAMES:
        vals = sc.indices[:, INDEX_NAMES.index(metric)]
    elif metric == "final_norm":
        vals = np.asarray([r.trajectory[-1].p_norm for r in recs])
    else:
        vals = np.asarray([float(r.total_turns) for r in recs])
    trials = dialogue_trials(items)
    return {
        (x.record.scenario_id, t): float(v) for x, t, v in zip(items, trials, vals, strict=True)
    }


def compare_records(
    a: Sequence[LoadedRecord],
    b: Sequence[LoadedRecord],
    *,
    metric: str = "epmq",
    config: EPMConfig,
    names: tuple[str, str] = ("A", "B"),
    seed: int = 0,
) -> Comparison:
    """Pair A's and B's dialogues by (scenario, trial) and compare ``metric`` on the pairs."""
    if metric not in METRICS:
        raise InputError(
            f"unknown metric {metric!r} (known: {', '.join(METRICS)})", field="--metric"
        )
    va, vb = _values(a, metric, config), _values(b, metric, config)
    for name, side, values in ((names[0], a, va), (names[1], b, vb)):
        if not values:
            errors = sum(1 for x in side if x.record.termination.kind is TerminationKind.ERROR)
            raise InputError(
                f"{name} has no scored dialogue to compare: {errors} of "
                f"{len(side)} ended as errors (see their termination reasons)"
            )
    keys = sorted(set(va) & set(vb))
    if not keys:
        raise InputError(
            f"{names[0]} and {names[1]} share no scored dialogue (same scenario and trial): "
            "nothing to pair"
        )
    xa = np.asarray([va[k] for k in keys])
    xb = np.asarray([vb[k] for k in keys])
    if metric in LOWER_IS_BETTER:  # wins count "better"; the difference stays A - B
        s = paired_summary(-xa, -xb, cluster_index([k[0] for k in keys]), seed=seed)
        s = PairedSummary(
            s.scenarios, s.pairs, s.wins, s.losses, s.ties, -s.mean_a, -s.mean_b,
            -s.mean_diff, (-s.ci[1], -s.ci[0]) if s.ci else None, s.p_value,
        )  # fmt: skip
    else:
        s = paired_summary(xa, xb, cluster_index([k[0] for k in keys]), seed=seed)
    sa = {k[0] for k in va}
    sb = {k[0] for k in vb}
    return Comparison(
        name_a=names[0],
        name_b=names[1],
        metric=metric,
        summary=s,
        a_lacks=len(sb - sa),
        b_lacks=len(sa - sb),
        shared_scenarios=sorted({k[0] for k in keys}),
    )


def _num(x: float, spec: str) -> str:
    """``x`` formatted, or "-" when it is not a number (never "nan" in the table)."""
    return format(x, spec) if np.isfinite(x) else "-"


def _rows(c: Comparison) -> list[tuple[str, str]]:
    s = c.summary
    ci = f"[{_num(s.ci[0], '+.2f')}, {_num(s.ci[1], '+.2f')}]" if s.ci else "-"
    better = "lower" if c.metric in LOWER_IS_BETTER else "higher"
    return [
        ("metric", f"{c.metric} ({better} is better)"),
        ("shared scenarios / pairs", f"{s.scenarios} / {s.pairs}"),
        (f"mean {c.name_a}", _num(s.mean_a, ".2f")),
        (f"mean {c.name_b}", _num(s.mean_b, ".2f")),
        ("mean paired difference (A - B)", _num(s.mean_diff, "+.2f")),
        ("95% paired bootstrap interval", ci),
        ("permutation p-value (two-sided)", _num(s.p_value, ".4f")),
        ("scenarios won / lost / tied by A", f"{s.wins} / {s.losses} / {s.ties}"),
        (f"scenarios {c.name_a} lacks", str(c.a_lacks)),
        (f"scenarios {c.name_b} lacks", str(c.b_lacks)),
    ]


def comparison_table(c: Comparison) -> Table:
    """The comparison as a two-column rich table."""
    table = Table(title=f"{c.name_a} (A) vs {c.name_b} (B)", header_style="bold")
    table.add_column("")
    table.add_column("value", justify="right")
    for k, v in _rows(c):
        table.add_row(k, v)
    return table


def comparison_html(c: Comparison) -> str:
    """The comparison as a section of the HTML report."""
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in _rows(c)
    )
    title = html.escape(f"Comparison: {c.name_a} (A) vs {c.name_b} (B)")
    return (
        f'<section id="sec-compare"><h2>{title}</h2><table id="compare">{rows}</table>'
        '<p class="note">Pairs: dialogues of the same scenario and trial, scored on both '
        "sides. Interval: bootstrap over shared scenarios (and trials); p-value: sign flips "
        "of whole scenarios.</p></section>"
    )
