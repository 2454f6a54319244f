"""EMPA beside SAGE: for the models run on both, their ranks side by side and Spearman's rank
correlation between EMPA's EPM-Q and SAGE's score.

EMPA: the leaderboard of EMPA records (run directories, record files) by model, on an EPM
preset. SAGE: the Sentient score of result files (SAGE's own, or a ``bench sage`` run's
``sage/``). Models are matched by name, compared without case and without anything but
letters and digits (``Qwen/Qwen2.5-7B`` and ``qwen2.5-7b`` are one model).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from empathos.epm import EPMConfig
from empathos.errors import InputError
from empathos.records import load_records
from empathos.sage.copy import scored_results
from empathos.sage.rules import rank_correlation
from empathos.scoring.leaderboard import leaderboard

__all__ = [
    "SideBySide",
    "empa_scores",
    "match_name",
    "ranks_html",
    "report_section",
    "sage_scores",
    "side_by_side",
]


def match_name(name: str) -> str:
    """The name two sides are matched on: lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass(frozen=True, slots=True)
class SideBySide:
    """The models on both sides: (model, EPM-Q, EMPA rank, SAGE score, SAGE rank) rows,
    ranked among those models (1: best), and Spearman's rho (None under 3 models)."""

    rows: list[tuple[str, float, float, float, float]]
    rho: float | None
    only_empa: list[str]
    only_sage: list[str]


def _ranks_desc(values: Sequence[float]) -> list[float]:
    out = []
    for v in values:
        higher = sum(x > v for x in values)
        ties = sum(x == v for x in values)
        out.append(higher + (ties + 1) / 2)
    return out


def side_by_side(empa: Mapping[str, float], sage: Mapping[str, float]) -> SideBySide:
    """Pair the two sides' models by :func:`match_name` (pure)."""
    e = {match_name(k): (k, v) for k, v in empa.items()}
    s = {match_name(k): (k, v) for k, v in sage.items()}
    shared = sorted(set(e) & set(s))
    ev, sv = [e[k][1] for k in shared], [s[k][1] for k in shared]
    er, sr = _ranks_desc(ev), _ranks_desc(sv)
    rows = sorted(
        ((e[k][0], ev[i], er[i], sv[i], sr[i]) for i, k in enumerate(shared)),
        key=lambda r: (r[2], r[0]),
    )
    return SideBySide(
        rows,
        rank_correlation(ev, sv),
        sorted(e[k][0] for k in set(e) - set(s)),
        sorted(s[k][0] for k in set(s) - set(e)),
    )


def empa_scores(paths: Sequence[Path], preset: str = "reference") -> dict[str, float]:
    """Model -> EPM-Q of the EMPA records at ``paths`` (models without a score left out)."""
    records, errors = load_records(list(paths))
    if errors:
        raise errors[0]
    if not records:
        raise InputError("no EMPA record found", file=paths[0] if paths else None)
    rows = leaderboard(records, EPMConfig.preset(preset), by="model")
    return {r.model: r.epmq for r in rows if r.epmq is not None}


def sage_scores(paths: Sequence[Path]) -> dict[str, float]:
    """Model -> SAGE score of the result files at ``paths``."""
    out = {}
    for path in paths:
        for _, model, s in scored_results(path):  # as `bench sage score` reads them
            if s.score is not None:
                out[model] = float(s.score)
    return out


def ranks_html(view: SideBySide) -> str:
    """The report's section "EMPA beside SAGE" (the table of :func:`side_by_side`)."""
    import html

    head = "".join(f"<th>{h}</th>" for h in ("model", "EPM-Q", "EMPA rank", "SAGE score",
                                             "SAGE rank"))  # fmt: skip
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in
                         (m, f"{e:.2f}", f"{er:g}", f"{s:.1f}", f"{sr:g}")) + "</tr>"
        for m, e, er, s, sr in view.rows
    )  # fmt: skip
    rho = "-" if view.rho is None else f"{view.rho:+.3f}"
    return (
        '<section id="sec-sage-ranks"><h2>EMPA beside SAGE</h2>'
        f'<table id="sage-ranks"><tr>{head}</tr>{rows}</table>'
        f'<p class="note">Models run on both, ranked among themselves by EMPA\'s EPM-Q and by '
        f"SAGE's score; Spearman's rank correlation {rho} over {len(view.rows)} models (none "
        'under 3). See docs/bench.md, "SAGE".</p></section>'
    )


def report_section(empa_paths: Sequence[Path], sage_dirs: Sequence[Path], preset: str) -> str:
    """The section for a report given EMPA runs and SAGE run directories ('' when no model
    is on both)."""
    if not empa_paths or not sage_dirs:
        return ""
    view = side_by_side(empa_scores(empa_paths, preset), sage_scores(sage_dirs))
    return ranks_html(view) if view.rows else ""
