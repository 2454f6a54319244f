"""`empathos validate`: does a judge-plus-EPM measure what it claims? (docs/validate.md)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from pydantic import ValidationError
from rich.console import Console

from empathos.epm import EPMConfig
from empathos.errors import ConfigError
from empathos.llm.roles import RoleEndpoint
from empathos.records import load_records
from empathos.report.labels import find_scenario_sources, load_labels
from empathos.report.writer import write_report
from empathos.validate import SYCOPHANCY_KINDS, JudgeSpec, StudyOptions, run_validation
from empathos.validate.output import print_tables, section_html
from empathos.validate.perturb import SycophancyKind
from empathos.validate.pipeline import write_outputs

__all__ = ["register"]

# The offline judge's per-field output cap (as the offline default run uses).
_OFFLINE_MAX_TOKENS = 12


def _read_config(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read config: {exc}", file=path) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping with judge: (and judge_b:)", file=path)
    unknown = sorted(set(data) - {"judge", "judge_b"})
    if unknown:
        raise ConfigError(f"unknown keys {unknown} (use judge:, judge_b:)", file=path)
    return data


def _endpoint(
    section: Any,
    file: Path | None,
    field: str,
    model: str | None,
    base_url: str | None,
    key_env: str | None,
) -> RoleEndpoint | None:
    raw: dict[str, Any] = dict(section or {})
    if section is not None and not isinstance(section, dict):
        raise ConfigError("expected a mapping", file=file, field=field)
    if model:
        raw["model"] = model
    if base_url:
        raw["base_url"] = base_url
        raw.setdefault("kind", "openai")
    if key_env:
        raw["api_key_env"] = key_env
    if not raw:
        return None
    raw.setdefault("kind", "openai" if raw.get("base_url") else "offline")
    try:
        endpoint = RoleEndpoint.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise ConfigError(
            err["msg"], file=file, field=f"{field}.{where}" if where else field
        ) from None
    if endpoint.kind == "offline" and endpoint.max_tokens is None:
        endpoint = endpoint.model_copy(update={"max_tokens": _OFFLINE_MAX_TOKENS})
    return endpoint


def _kinds(text: str) -> tuple[SycophancyKind, ...]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in SYCOPHANCY_KINDS]
    if bad or not names:
        raise ConfigError(
            f"unknown sycophancy kind(s) {bad}; choose from {', '.join(SYCOPHANCY_KINDS)}",
            field="--sycophancy",
        )
    return tuple(x for x in SYCOPHANCY_KINDS if x in names)


def register(app: typer.Typer) -> None:
    """Mount ``validate`` on the main app."""

    @app.command("validate")
    def validate_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(
                help="Run directories, published result folders or record files whose "
                "evaluation points are re-judged.",
                show_default=False,
            ),
        ],
        out: Annotated[Path, typer.Option(help="Output directory (validate.json, .md).")],
        config: Annotated[
            Path | None,
            typer.Option("--config", help="YAML with a judge: (and judge_b:) endpoint section."),
        ] = None,
        judge_model: Annotated[str | None, typer.Option(help="Judge model id.")] = None,
        judge_base_url: Annotated[
            str | None, typer.Option(help="Judge's OpenAI-compatible base URL.")
        ] = None,
        judge_api_key_env: Annotated[
            str | None, typer.Option(help="NAME of the variable holding the judge's key.")
        ] = None,
        judge_b_model: Annotated[
            str | None, typer.Option(help="Second judge for agreement: model id.")
        ] = None,
        judge_b_base_url: Annotated[
            str | None, typer.Option(help="Second judge's base URL.")
        ] = None,
        judge_b_api_key_env: Annotated[
            str | None, typer.Option(help="NAME of the variable holding the second judge's key.")
        ] = None,
        scenarios: Annotated[
            list[str] | None,
            typer.Option(
                "--scenarios",
                help="Scenario sources (repeatable): 'builtin', a file or directory, or a "
                "published layout. Default: what the run directories name, then 'builtin'.",
            ),
        ] = None,
        pairs: Annotated[int, typer.Option(min=1, help="Evaluation points to sample.")] = 30,
        seed: Annotated[int, typer.Option(help="Sampling and bootstrap seed.")] = 0,
        sycophancy: Annotated[
            str, typer.Option(help="Sycophantic kinds, comma-separated.")
        ] = ",".join(SYCOPHANCY_KINDS),
        direct: Annotated[
            bool, typer.Option(help="Also score with a direct judge (one overall rating).")
        ] = True,
        agreement_dialogues: Annotated[
            int, typer.Option(min=0, help="Dialogues re-rated whole for judge agreement.")
        ] = 5,
        self_consistency: Annotated[
            float | None,
            typer.Option(help="Rate the agreement dialogues twice at this temperature."),
        ] = None,
        resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 2000,
        cache: Annotated[
            bool, typer.Option(help="Store every judge call in OUT/cache.sqlite (reruns free).")
        ] = True,
        report: Annotated[
            bool, typer.Option(help="Also write OUT/report/index.html with the section.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the JSON document.")] = False,
    ) -> None:
        """Re-judge sampled evaluation points after a Persona Flip and sycophantic reply
        swaps; score each pair with the EPM, a rubric-only score and a direct judge; compare
        with a second judge. Writes OUT/validate.json and OUT/validate.md."""
        data = _read_config(config)
        judge = _endpoint(
            data.get("judge"), config, "judge", judge_model, judge_base_url, judge_api_key_env
        ) or RoleEndpoint(kind="offline", max_tokens=_OFFLINE_MAX_TOKENS)
        judge_b = _endpoint(
            data.get("judge_b"), config, "judge_b", judge_b_model, judge_b_base_url,
            judge_b_api_key_env,
        )  # fmt: skip
        sources: list[str | Path] = [*(scenarios or [])]
        if not sources:
            sources = [*find_scenario_sources(paths), "builtin"]
        options = StudyOptions(
            pairs=pairs,
            seed=seed,
            sycophancy=_kinds(sycophancy),
            direct=direct,
            resamples=resamples,
            agreement_dialogues=agreement_dialogues,
        )
        err = Console(stderr=True, highlight=False, soft_wrap=True)

        def progress(stage: str, done: int, total: int) -> None:
            err.print(f"{stage}: {done}/{total}", markup=False)

        doc = asyncio.run(
            run_validation(
                paths,
                scenarios=sources,
                judge=JudgeSpec(judge, "judge"),
                judge_b=JudgeSpec(judge_b, "judge_b") if judge_b is not None else None,
                self_temperature=self_consistency,
                options=options,
                cache_path=out / "cache.sqlite" if cache else None,
                progress=progress,
            )
        )
        json_path, md_path = write_outputs(doc, out)
        if as_json:
            typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        else:
            console = Console(highlight=False)
            if not console.is_terminal:  # piped or captured: wide enough for the table
                console = Console(highlight=False, width=150)
            print_tables(doc, console)
        if report:
            loaded, _ = load_records(paths)
            labels, _ = load_labels(sources, {x.record.scenario_id for x in loaded})
            write_report(
                loaded, out / "report", config=EPMConfig(), labels=labels,
                title="empathos validate", sections=[section_html(doc)], figures=False,
            )  # fmt: skip
            err.print(f"wrote {out / 'report' / 'index.html'}", markup=False)
        err.print(f"wrote {json_path} and {md_path}", markup=False)
