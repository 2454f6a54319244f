"""`empathos report` and `empathos compare`: the HTML report, figures and tables, and the
paired comparison of two models or runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from empathos.cli.bench_run import bench_section_html, is_bench_dir, print_compare
from empathos.cli.score import Label, LabelOpt, Preset, _load, _paths_or_examples
from empathos.epm import EPMConfig
from empathos.pairwise import read_ratings
from empathos.records import LoadedRecord
from empathos.report import plural
from empathos.report.compare import (
    compare_records,
    comparison_html,
    comparison_table,
    single_model,
)
from empathos.report.labels import find_scenario_sources, load_labels
from empathos.report.pairwise import pairwise_html
from empathos.report.writer import write_report

__all__ = ["register"]

ScenariosOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scenarios",
        help="Where the scenarios' labels come from (repeatable): 'builtin', a scenario file "
        "or directory, or a published layout. Run directories and published result folders "
        "find theirs on their own.",
    ),
]


def _labels(
    paths: list[Path], extra: list[str] | None, records: list[LoadedRecord], err: Console
) -> dict[str, dict[str, str]]:
    sources: list[Path | str] = [s if s == "builtin" else Path(s) for s in extra or []]
    sources += [s for s in find_scenario_sources(paths) if s not in sources]
    labels, problems = load_labels(sources, {x.record.scenario_id for x in records})
    if problems:
        err.print(
            f"note: {len(problems)} scenario problems while reading labels "
            f"(first: {problems[0].line()}); those scenarios count as unlabelled",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
    unlabelled = sum(1 for v in labels.values() if v["domain"] == "unlabelled")
    if unlabelled:
        err.print(
            f"note: {unlabelled} of {len(labels)} scenarios have no labels "
            "(pass --scenarios SRC to label them)",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
    return labels


def _beside_empa(paths: list[Path], benches: list[Path], preset: str) -> list[str]:
    """Each benchmark's section beside the EMPA runs, when the report has both (SAGE's:
    docs/bench.md, "SAGE")."""
    from empathos.bench.protocol import registered
    from empathos.run.manifest import read_manifest

    names = {b: m.bench.name for b in benches if (m := read_manifest(b)) and m.bench}
    sections = []
    for bench in registered():
        runs = [b for b in benches if names.get(b) == bench.name]
        if runs and (html := bench.beside_empa(paths, runs, preset)):
            sections.append(html)
    return sections


def _report(
    paths: list[Path],
    out: Path,
    preset: Preset,
    scenarios: list[str] | None,
    figures: bool,
    label: Label,
    pairwise: Path | None = None,
) -> int:
    err = Console(stderr=True)
    benches = [p for p in paths if is_bench_dir(p)]  # `empathos bench` directories: a section
    paths = [p for p in paths if p not in benches]
    records, errors = _load(paths, err) if paths else ([], [])
    config = EPMConfig.preset(preset.value)
    sections = [pairwise_html(read_ratings(pairwise))] if pairwise is not None else []
    sections += _beside_empa(paths, benches, preset.value) if benches and records else []
    data = write_report(
        records, out, config=config, labels=_labels(paths, scenarios, records, err),
        preset=preset.value, figures=figures, label_by=label.value,
        sections=[*sections, *([bench_section_html(benches)] if benches else [])],
    )  # fmt: skip
    size = (out / "index.html").stat().st_size / 1e6
    err.print(
        f"wrote {out / 'index.html'} ({size:.1f} MB): {plural(len(data.models), 'model')}, "
        f"{plural(len(data.dialogues), 'dialogue')}; {plural(len(errors), 'file')} skipped",
        markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip
    return 1 if errors or not (records or benches) else 0


def _sides(
    a: Path, b: Path, label: Label, err: Console
) -> tuple[list[LoadedRecord], list[LoadedRecord], tuple[str, str], bool]:
    """Both sides' records and names (named as ``score --label`` names their rows; the same
    name twice gets each side's path); whether a file could not be read."""
    ra, ea = _load([a], err)
    rb, eb = _load([b], err)
    name_a = single_model(ra, str(a), label.value)
    name_b = single_model(rb, str(b), label.value)
    if name_a == name_b:
        name_a, name_b = f"{name_a} ({a})", f"{name_b} ({b})"
    # the records carry their side's name, so every later step (the report) names it so too
    ra = [LoadedRecord(x.path, name_a, x.record.model_copy(update={"model": None})) for x in ra]
    rb = [LoadedRecord(x.path, name_b, x.record.model_copy(update={"model": None})) for x in rb]
    return ra, rb, (name_a, name_b), bool(ea or eb)


def _compare(
    a: Path,
    b: Path,
    metric: str,
    preset: Preset,
    out: Path | None,
    scenarios: list[str] | None,
    label: Label,
) -> int:
    if is_bench_dir(a) or is_bench_dir(b):  # `empathos bench` directories (docs/bench.md)
        return print_compare(a, b)
    err = Console(stderr=True)
    ra, rb, names, unreadable = _sides(a, b, label, err)
    config = EPMConfig.preset(preset.value)
    result = compare_records(ra, rb, metric=metric, config=config, names=names)
    Console(soft_wrap=True, highlight=False).print(comparison_table(result))
    if out is not None:
        write_report(
            [*ra, *rb], out, config=config,
            labels=_labels([a, b], scenarios, [*ra, *rb], err), preset=preset.value,
            title=f"empathos compare: {names[0]} vs {names[1]}",
            sections=[comparison_html(result)], label_by="dir",
        )  # fmt: skip
        err.print(f"wrote {out / 'index.html'}", markup=False, highlight=False, soft_wrap=True)
    return 1 if unreadable else 0


def register(app: typer.Typer) -> None:
    """Mount ``report`` on the main app (``compare`` is mounted by ``empathos.cli.compare``)."""

    @app.command("report")
    def report_cmd(
        paths: Annotated[
            list[Path] | None,
            typer.Argument(
                help="Run directories, published result folders, record files or directories "
                "of them (one model per directory). Without any: the bundled examples.",
                show_default=False,
            ),
        ] = None,
        out: Annotated[Path, typer.Option(help="Report directory.")] = Path("report"),
        preset: Annotated[Preset, typer.Option(help="EPM preset.")] = Preset.reference,
        scenarios: ScenariosOpt = None,
        figures: Annotated[
            bool, typer.Option(help="Also write figures/ (PNG and SVG, matplotlib).")
        ] = True,
        label: LabelOpt = Label.auto,
        pairwise: Annotated[
            Path | None,
            typer.Option(help="Add a pairwise section from this compare --pairwise directory."),
        ] = None,
    ) -> None:
        """Write an HTML report (leaderboard with intervals, breakdowns, trajectories,
        every dialogue), figures and tables into --out."""
        paths = _paths_or_examples(paths)
        code = _report(paths, out, preset, scenarios, figures, label, pairwise)
        if code:
            raise typer.Exit(code)
