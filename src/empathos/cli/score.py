"""`empathos score` and `empathos replay`: leaderboards and EPM replays of record files."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from empathos.cli.bench_run import is_bench_dir, print_bench_dirs
from empathos.epm import EPMConfig
from empathos.errors import ConfigError, RecordError
from empathos.examples import examples_dir
from empathos.records import LoadedRecord, load_records
from empathos.report import (
    COLUMN_LEGEND,
    leaderboard_csv,
    leaderboard_json,
    leaderboard_table,
    plural,
)
from empathos.scoring.integrity import contradictions, drop_duplicates
from empathos.scoring.leaderboard import leaderboard
from empathos.scoring.replay import replay_loaded

__all__ = ["By", "Format", "Label", "LabelOpt", "Preset", "register"]


class Preset(StrEnum):
    """EPM presets."""

    reference = "reference"
    paper = "paper"


class Format(StrEnum):
    """Output formats."""

    table = "table"
    json = "json"
    csv = "csv"


class By(StrEnum):
    """Grouping of the leaderboard."""

    model = "model"
    case = "case"


class Label(StrEnum):
    """What names a model's row."""

    auto = "auto"
    dir = "dir"
    record = "record"


LabelOpt = Annotated[
    Label,
    typer.Option(
        help="Name a model's row by the records' model name (record), by their directory "
        "(dir), or by the model name unless it is an opaque endpoint id such as "
        "ep-20260224114647-4d99q (auto). score, report and compare name a model alike."
    ),
]
_TABLE_WIDTH = 200
_EPILOG = (
    "Columns of the table: "
    + "; ".join(f"{name} = {text}" for name, text in COLUMN_LEGEND)
    + ". Indices are on a 0-100 scale (a few can exceed 100)."
)
PathsArg = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Record files, directories of them (one per model) or directories of those. "
        "Without any, the bundled example records are used.",
        show_default=False,
    ),
]


def _paths_or_examples(paths: list[Path] | None) -> list[Path]:
    if paths:
        return paths
    Console(stderr=True).print("no PATH given: using the bundled example records", markup=False)
    return [examples_dir()]


def _load(paths: list[Path], err: Console) -> tuple[list[LoadedRecord], list[RecordError]]:
    records, errors = load_records(paths)
    for exc in errors:
        err.print(f"error: {exc.line()}", markup=False, highlight=False, soft_wrap=True)
    if not records and not errors:
        where = ", ".join(str(p) for p in paths)
        err.print(f"error: no record files (.json) found in {where}", markup=False, soft_wrap=True)
    flagged = [(x, ev) for x in records for ev in x.record.evaluations if ev.flags]
    if flagged:
        files = len({x.path for x, _ in flagged})
        err.print(
            f"note: {len(flagged)} evaluations in {files} files lack complete, valid ratings "
            "(stored v_t used; counted as missing for S_net and Pen)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    return records, errors


def _warn(err: Console, text: str) -> None:
    err.print(f"warning: {text}", markup=False, highlight=False, soft_wrap=True)


def _checked(
    records: list[LoadedRecord], err: Console, allow_duplicates: bool
) -> tuple[list[LoadedRecord], int]:
    """Records to score after the duplicate check, and how many were left out; every
    duplicate and every self-contradicting record gets one warning line."""
    dropped = 0
    if not allow_duplicates:
        records, dups = drop_duplicates(records)
        for dup in dups:
            _warn(err, dup.line() + " (--allow-duplicates to count every copy)")
            dropped += len(dup.dropped)
    for item in records:
        for c in contradictions(item.record):
            _warn(
                err,
                f"{item.path}: {c.field}: {c.problem} "
                "(scored as stored: the termination decides success, the trajectory the indices)",
            )
    return records, dropped


def _score(
    paths: list[Path], preset: Preset, fmt: Format, by: By, label: Label, allow_dups: bool
) -> int:
    err = Console(stderr=True)
    benches = [p for p in paths if is_bench_dir(p)]
    if benches:  # `empathos bench` directories: their benchmark's numbers (docs/bench.md)
        if fmt is not Format.table and len(benches) < len(paths):
            raise ConfigError("score bench directories and EMPA runs apart", field="--format")
        bench_code = print_bench_dirs(benches, as_json=fmt is Format.json)
        paths = [p for p in paths if p not in benches]
        if not paths:
            return bench_code
    loaded, errors = _load(paths, err)
    records, dropped = _checked(loaded, err, allow_dups)
    cfg = EPMConfig.preset(preset.value)
    rows = leaderboard(records, cfg, by=by.value, label_by=label.value) if records else []
    if fmt is Format.json:
        typer.echo(leaderboard_json(rows, group_label=by.value))
    elif fmt is Format.csv:
        typer.echo(leaderboard_csv(rows, group_label=by.value), nl=False)
    elif rows:
        # The table has 20 columns: never squeeze it below a readable width.
        Console(width=max(Console().width, _TABLE_WIDTH)).print(
            leaderboard_table(rows, group_label=by.value)
        )
    n_files = len(loaded) + len(errors)
    n_scored = sum(r.n for r in rows)
    n_errors = sum(int(r.extra.get("errors", 0)) for r in rows)
    dup_note = f"; {plural(dropped, 'duplicate')} counted once" if dropped else ""
    err.print(
        f"read {len(loaded)} of {plural(n_files, 'file')} ({preset.value} preset): "
        f"{plural(n_scored, 'dialogue')} scored, {n_errors} ended as errors (not scored)"
        f"{dup_note}; {len(errors)} skipped",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    err.print("pictures: empathos report PATH... --out DIR", markup=False, highlight=False)
    return 1 if errors or not records else 0


def _replay(paths: list[Path]) -> int:
    err = Console(stderr=True)
    records, errors = _load(paths, err)
    results = replay_loaded(records)
    out = Console(soft_wrap=True, highlight=False)
    for res in results:
        if res.status == "mismatch":
            out.print(f"mismatch: {res.label}: {'; '.join(res.problems)}", markup=False)
        elif res.status == "unpublished_rule":
            out.print(f"not reproducible: unpublished rule: {res.label}", markup=False)
    ok = sum(r.status == "ok" for r in results)
    bad = sum(r.status == "mismatch" for r in results)
    unpublished = sum(r.status == "unpublished_rule" for r in results)
    out.print(
        f"replayed {len(results)} dialogues: {ok} reproduce, {bad} mismatch, "
        f"{unpublished} not reproducible (unpublished rule); {len(errors)} files skipped",
        markup=False,
    )
    return 1 if bad or errors or not records else 0


def register(app: typer.Typer) -> None:
    """Mount ``score`` and ``replay`` on the main app."""

    @app.command("score", epilog=_EPILOG)
    def score_cmd(
        paths: PathsArg = None,
        preset: Annotated[Preset, typer.Option(help="EPM preset.")] = Preset.reference,
        fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.table,
        by: Annotated[By, typer.Option(help="One row per model or per case.")] = By.model,
        label: LabelOpt = Label.auto,
        allow_duplicates: Annotated[
            bool,
            typer.Option(
                "--allow-duplicates",
                help="Count every copy of a dialogue given more than once (same model, "
                "scenario and trial, or identical content); by default one copy counts.",
            ),
        ] = False,
    ) -> None:
        """Print the EPM-Q leaderboard of record files (published EMPA results or ours).

        Records that contradict themselves are named on stderr and scored as stored; files
        with a bad level or value are skipped (exit 1)."""
        code = _score(_paths_or_examples(paths), preset, fmt, by, label, allow_duplicates)
        if code:
            raise typer.Exit(code)

    @app.command("replay")
    def replay_cmd(paths: PathsArg = None) -> None:
        """Re-run the EPM from stored P_0 and ratings; report dialogues that do not reproduce."""
        code = _replay(_paths_or_examples(paths))
        if code:
            raise typer.Exit(code)
