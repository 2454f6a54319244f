"""`empathos validate`: does a judge-plus-EPM measure what it claims? (docs/validate.md)"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from empathos.epm import EPMConfig
from empathos.errors import ConfigError
from empathos.records import load_records
from empathos.report.labels import find_scenario_sources, load_labels
from empathos.report.writer import write_report
from empathos.validate import SYCOPHANCY_KINDS, JudgeSpec, StudyOptions, run_validation
from empathos.validate.config import load_validate_config
from empathos.validate.output import print_tables, section_html
from empathos.validate.perturb import SycophancyKind
from empathos.validate.pipeline import write_outputs

__all__ = ["register", "validate_cmd"]

Paths = Annotated[
    list[Path],
    typer.Argument(
        help="Run directories, published result folders or record files whose evaluation "
        "points are re-judged.",
        show_default=False,
    ),
]
Out = Annotated[Path, typer.Option(help="Output directory (validate.json, .md).")]
ConfigPath = Annotated[
    Path | None,
    typer.Option("--config", help="YAML with a judge: (and judge_b:) endpoint section."),
]
Str = str | None
JudgeModel = Annotated[Str, typer.Option(help="Judge model id.")]
JudgeUrl = Annotated[Str, typer.Option(help="Judge's OpenAI-compatible base URL.")]
JudgeKey = Annotated[Str, typer.Option(help="NAME of the variable holding the judge's key.")]
JudgeBModel = Annotated[Str, typer.Option(help="Second judge for agreement: model id.")]
JudgeBUrl = Annotated[Str, typer.Option(help="Second judge's base URL.")]
JudgeBKey = Annotated[
    Str, typer.Option(help="NAME of the variable holding the second judge's key.")
]
Scenarios = Annotated[
    list[str] | None,
    typer.Option(
        "--scenarios",
        help="Scenario sources (repeatable): 'builtin', a file or directory, or a published "
        "layout. Default: what the run directories name, then 'builtin'.",
    ),
]
Pairs = Annotated[int, typer.Option(min=1, help="Evaluation points to sample.")]
Seed = Annotated[int, typer.Option(help="Sampling and bootstrap seed.")]
Sycophancy = Annotated[str, typer.Option(help="Sycophantic kinds, comma-separated.")]
Direct = Annotated[bool, typer.Option(help="Also score with a direct judge (one overall rating).")]
AgreementDialogues = Annotated[
    int, typer.Option(min=0, help="Dialogues re-rated whole for judge agreement.")
]
SelfConsistency = Annotated[
    float | None, typer.Option(help="Rate the agreement dialogues twice at this temperature.")
]
Resamples = Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")]
Cache = Annotated[
    bool, typer.Option(help="Store every judge call in OUT/cache.sqlite (reruns free).")
]
Report = Annotated[bool, typer.Option(help="Also write OUT/report/index.html with the section.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print the JSON document.")]


_ALL_KINDS = ",".join(SYCOPHANCY_KINDS)


def _kinds(text: str) -> tuple[SycophancyKind, ...]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in SYCOPHANCY_KINDS]
    if bad or not names:
        raise ConfigError(
            f"unknown sycophancy kind(s) {bad}; choose from {', '.join(SYCOPHANCY_KINDS)}",
            field="--sycophancy",
        )
    return tuple(x for x in SYCOPHANCY_KINDS if x in names)


def _progress(err: Console) -> Callable[[str, int, int], None]:
    def progress(stage: str, done: int, total: int) -> None:
        err.print(f"{stage}: {done}/{total}", markup=False)

    return progress


def _show(doc: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    console = Console(highlight=False)
    if not console.is_terminal:  # piped or captured: wide enough for the table
        console = Console(highlight=False, width=150)
    print_tables(doc, console)


def _write_report(
    doc: dict[str, Any], paths: list[Path], sources: list[str | Path], out: Path
) -> Path:
    loaded, _ = load_records(paths)
    labels, _ = load_labels(sources, {x.record.scenario_id for x in loaded})
    write_report(
        loaded, out / "report", config=EPMConfig(), labels=labels,
        title="empathos validate", sections=[section_html(doc)], figures=False,
    )  # fmt: skip
    return out / "report" / "index.html"


def validate_cmd(
    paths: Paths,
    out: Out,
    config: ConfigPath = None,
    judge_model: JudgeModel = None,
    judge_base_url: JudgeUrl = None,
    judge_api_key_env: JudgeKey = None,
    judge_b_model: JudgeBModel = None,
    judge_b_base_url: JudgeBUrl = None,
    judge_b_api_key_env: JudgeBKey = None,
    scenarios: Scenarios = None,
    pairs: Pairs = 30,
    seed: Seed = 0,
    sycophancy: Sycophancy = _ALL_KINDS,
    direct: Direct = True,
    agreement_dialogues: AgreementDialogues = 5,
    self_consistency: SelfConsistency = None,
    resamples: Resamples = 2000,
    cache: Cache = True,
    report: Report = False,
    as_json: AsJson = False,
) -> None:
    """Re-judge sampled evaluation points after a Persona Flip and sycophantic reply
    swaps; score each pair with the EPM, a rubric-only score and a direct judge; compare
    with a second judge. Writes OUT/validate.json and OUT/validate.md."""
    flags = {k: v for k, v in locals().items() if k.startswith("judge")}
    judges = load_validate_config(config, flags)
    sources: list[str | Path] = [*(scenarios or [])] or [*find_scenario_sources(paths), "builtin"]
    options = StudyOptions(
        pairs=pairs,
        seed=seed,
        sycophancy=_kinds(sycophancy),
        direct=direct,
        resamples=resamples,
        agreement_dialogues=agreement_dialogues,
    )
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    doc = asyncio.run(
        run_validation(
            paths,
            scenarios=sources,
            judge=JudgeSpec(judges.judge, "judge"),
            judge_b=JudgeSpec(judges.judge_b, "judge_b") if judges.judge_b else None,
            self_temperature=self_consistency,
            options=options,
            cache_path=out / "cache.sqlite" if cache else None,
            progress=_progress(err),
        )
    )
    json_path, md_path = write_outputs(doc, out)
    _show(doc, as_json)
    if report:
        err.print(f"wrote {_write_report(doc, paths, sources, out)}", markup=False)
    err.print(f"wrote {json_path} and {md_path}", markup=False)


def register(app: typer.Typer) -> None:
    """Mount ``validate`` on the main app."""
    app.command("validate")(validate_cmd)
