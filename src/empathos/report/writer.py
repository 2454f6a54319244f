"""Writing a report directory: ``index.html``, ``figures/`` (PNG, SVG) and ``tables/``.

The figures (matplotlib) are much of the work, so a report uses two cores: on Linux a worker,
forked once the numbers are computed, draws the trajectories (one figure per model) while this
process builds the page and then draws the summary figures. Elsewhere this process draws them
all after the page.
"""

from __future__ import annotations

import multiprocessing
import resource
import sys
import time
from collections.abc import Mapping, MutableMapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from empathos.epm import EPMConfig
from empathos.records import LoadedRecord
from empathos.records.io import write_text_atomic
from empathos.report.data import ReportData, build_report_data
from empathos.report.exports import leaderboard_csv_ci, leaderboard_latex, leaderboard_markdown
from empathos.report.figures import (
    save_figures,
    save_summary_figures,
    save_trajectory_figures,
)
from empathos.report.html import pack_dialogues, render_html
from empathos.scoring.integrity import LabelBy

__all__ = ["write_report"]


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _write_tables(data: ReportData, tables: Path) -> None:
    write_text_atomic(tables / "leaderboard.md", leaderboard_markdown(data))
    write_text_atomic(tables / "leaderboard.tex", leaderboard_latex(data))
    write_text_atomic(tables / "leaderboard.csv", leaderboard_csv_ci(data))


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
    timings: MutableMapping[str, float] | None = None,
    label_by: LabelBy = "auto",
) -> ReportData:
    """Score ``loaded`` and write the report into ``out``; returns what it showed.

    ``timings``, when given, receives the CPU seconds of the phases: ``data`` (scores and
    intervals), ``page`` (the page and the tables), ``figures`` (the summary figures, or all
    of them without a worker) and ``worker`` (the worker's trajectory figures). ``label_by``
    names the models as ``empathos score --label`` does."""
    t0 = time.process_time()
    data = build_report_data(loaded, labels, config, preset=preset, label_by=label_by)
    t1 = time.process_time()
    out.mkdir(parents=True, exist_ok=True)
    fork = figures and sys.platform == "linux"
    children0 = _children_cpu()
    pool = (
        ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
        if fork
        else None
    )
    try:
        job: Future[list[Path]] | None = (
            pool.submit(save_trajectory_figures, data, out / "figures")
            if pool is not None
            else None
        )
        by_path = {str(x.path): x.record for x in loaded}
        details = pack_dialogues(
            [d.model for d in data.dialogues], [by_path[d.path] for d in data.dialogues]
        )
        write_text_atomic(
            out / "index.html", render_html(data, details, title=title, sections=sections)
        )
        _write_tables(data, out / "tables")
        t2 = time.process_time()
        if job is not None:
            save_summary_figures(data, out / "figures")
            job.result()
        elif figures:
            save_figures(data, out / "figures")
        t3 = time.process_time()
    finally:
        if pool is not None:
            pool.shutdown()
    if timings is not None:
        timings.update(data=t1 - t0, page=t2 - t1, figures=t3 - t2)
        timings["worker"] = _children_cpu() - children0
    return data
