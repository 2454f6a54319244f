"""Writing a report directory: ``index.html``, ``figures/`` (PNG, SVG) and ``tables/``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from empathos.epm import EPMConfig
from empathos.records import LoadedRecord
from empathos.records.io import write_text_atomic
from empathos.report.data import ReportData, build_report_data
from empathos.report.exports import leaderboard_csv_ci, leaderboard_latex, leaderboard_markdown
from empathos.report.figures import save_figures
from empathos.report.html import pack_detail, render_html

__all__ = ["write_report"]


def write_report(
    loaded: Sequence[LoadedRecord],
    out: Path,
    *,
    config: EPMConfig,
    labels: Mapping[str, dict[str, str]],
    preset: str = "reference",
    title: str = "empathos report",
    sections: Sequence[str] = (),
    figures: bool = True,
) -> ReportData:
    """Score ``loaded`` and write the report into ``out``; returns what it showed."""
    data = build_report_data(loaded, labels, config, preset=preset)
    by_key = {(x.model_name, str(x.path)): x.record for x in loaded}
    details = [pack_detail(by_key[(d.model, d.path)]) for d in data.dialogues]
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(
        out / "index.html", render_html(data, details, title=title, sections=sections)
    )
    tables = out / "tables"
    write_text_atomic(tables / "leaderboard.md", leaderboard_markdown(data))
    write_text_atomic(tables / "leaderboard.tex", leaderboard_latex(data))
    write_text_atomic(tables / "leaderboard.csv", leaderboard_csv_ci(data))
    if figures:
        save_figures(data, out / "figures")
    return data
