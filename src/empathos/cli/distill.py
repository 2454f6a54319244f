"""`empathos distill`: Real-to-Sim, from support conversations to a scenario directory.

    empathos distill CONVERSATIONS... --out DIR      (same as `empathos distill run ...`)
    empathos distill review export|import|report OUT ...
    empathos distill expand SCENARIO --instruction TEXT -n 3 --out DIR

Exit codes: 0 done (skipped and duplicate items are normal); 1 some item failed (recorded
with its reason; rerun to retry it); 2 bad input or config. See docs/distill.md.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from empathos.cli.distill_review import review_app

if TYPE_CHECKING:
    from empathos.distill.config import DistillConfig
    from empathos.distill.pipeline import DistillSummary
    from empathos.llm import ModelClient

__all__ = ["app", "expand_cmd", "run_cmd"]


class _RunByDefault(TyperGroup):
    """`empathos distill FILES...` means `empathos distill run FILES...`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_RunByDefault,
    help="Distil support conversations into scenarios (Real-to-Sim). "
    "`empathos distill FILES... --out DIR` runs the pipeline.",
    no_args_is_help=True,
)
app.add_typer(review_app, name="review")

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="YAML: roles.distiller / roles.judge and options.")
]
ModelOpt = Annotated[str | None, typer.Option("--model", help="Distiller model id.")]
UrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="Distiller endpoint (OpenAI-compatible).")
]
KeyOpt = Annotated[
    str | None, typer.Option("--api-key-env", help="Name of the variable holding the key.")
]


def _models(config: DistillConfig) -> dict[str, str]:
    return {
        role: f"{config.endpoint(role).kind}:{config.endpoint(role).model}"
        for role in ("distiller", "judge")
    }


def _clients(config: DistillConfig, out: Path) -> tuple[ModelClient, ModelClient]:
    from empathos.distill.config import build_distill_model
    from empathos.llm import ResponseCache

    cached = any(config.endpoint(r).cache for r in ("distiller", "judge"))
    cache = ResponseCache(out / "cache.sqlite") if cached else None
    if cache is not None:
        out.mkdir(parents=True, exist_ok=True)
    return build_distill_model(config, "distiller", cache), build_distill_model(
        config, "judge", cache
    )


def _demo_note(config: DistillConfig) -> None:
    """Say up front when a role runs on the bundled 135M model: far too small to write or rate
    scenarios, so the output demonstrates the pipeline (expect its items to fail the checks)."""
    offline = [r for r in ("distiller", "judge") if config.endpoint(r).kind == "offline"]
    if offline:
        typer.echo(
            f"note: {' and '.join(offline)} run on the bundled 135M offline model: the output "
            "demonstrates the pipeline and is not a usable scenario set (degenerate items fail "
            "the checks); give --model/--base-url or roles in --config for real scenarios",
            err=True,
        )


def _print_summary(summary: DistillSummary) -> int:
    for item in summary.items:
        if item.status not in ("written", "valid"):
            typer.echo(f"{item.status}: {item.source_id}: {item.reason}", err=True)
    counts = ", ".join(
        f"{k} {summary.count(k)}" for k in ("written", "skipped", "duplicate", "failed")
    )
    typer.echo(counts)
    scen = summary.out / "scenarios"
    typer.echo(f"scenarios: {scen} (check: empathos scenarios check {scen})")
    return 1 if summary.count("failed") else 0


async def _close(*clients: ModelClient) -> None:
    for c in clients:
        await c.aclose()


@app.command("run")
def run_cmd(
    conversations: Annotated[
        list[Path], typer.Argument(help="Conversation files (.jsonl ours/OpenAI, .json ESConv).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Output directory.")],
    config_path: ConfigOpt = None,
    model: ModelOpt = None,
    base_url: UrlOpt = None,
    api_key_env: KeyOpt = None,
    concurrency: Annotated[int | None, typer.Option(help="Calls in flight.")] = None,
    keep_source: Annotated[
        bool | None, typer.Option("--keep-source", help="Store the source text in the state.")
    ] = None,
    id_prefix: Annotated[str | None, typer.Option(help="Prefix of scenario ids.")] = None,
) -> None:
    """Distil conversations into OUT/scenarios (resumable: rerun the same command)."""
    from empathos.distill import DistillOptions, read_conversations, run_distill
    from empathos.distill.config import load_distill_config
    from empathos.report import plural

    cli: dict[str, Any] = {
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "concurrency": concurrency,
        "keep_source": keep_source,
        "id_prefix": id_prefix,
    }
    config = load_distill_config(config_path, cli)
    convs = read_conversations(conversations)
    distiller, judge = _clients(config, out)
    opts = DistillOptions(
        out=out,
        keep_source=config.keep_source,
        concurrency=config.concurrency,
        id_prefix=config.id_prefix,
        duplicate_similarity=config.duplicate_similarity,
    )
    typer.echo(f"distilling {plural(len(convs), 'conversation')} into {out}", err=True)
    _demo_note(config)

    async def go() -> DistillSummary:
        try:
            return await run_distill(convs, distiller, judge, opts, models=_models(config))
        finally:
            await _close(distiller, judge)

    raise typer.Exit(_print_summary(asyncio.run(go())))


@app.command("expand")
def expand_cmd(
    scenario: Annotated[str, typer.Argument(help="A scenario file or directory.")],
    instruction: Annotated[str, typer.Option("--instruction", help="What to change.")],
    out: Annotated[Path, typer.Option("--out", help="Output directory.")],
    n: Annotated[int, typer.Option("-n", min=1, max=100, help="How many variants.")] = 3,
    case: Annotated[str | None, typer.Option("--case", help="Scenario id (in a set).")] = None,
    config_path: ConfigOpt = None,
    model: ModelOpt = None,
    base_url: UrlOpt = None,
    api_key_env: KeyOpt = None,
) -> None:
    """Write N guided variants of a scenario to OUT/scenarios, validated and rated."""
    from empathos.distill.config import load_distill_config
    from empathos.distill.expand import expand_scenario
    from empathos.errors import InputError
    from empathos.scenarios import load_scenarios

    config = load_distill_config(
        config_path, {"model": model, "base_url": base_url, "api_key_env": api_key_env}
    )
    loaded = load_scenarios(scenario)
    if loaded.errors:
        raise loaded.errors[0]
    pool = [s for s in loaded.scenarios if case is None or s.id == case]
    if len(pool) != 1:
        found = ", ".join(s.id for s in loaded.scenarios[:10])
        raise InputError(
            f"choose one scenario with --case (found: {found or 'none'})", file=scenario
        )
    distiller, judge = _clients(config, out)
    _demo_note(config)

    async def go() -> DistillSummary:
        try:
            return await expand_scenario(
                pool[0],
                instruction,
                n,
                distiller,
                judge,
                out,
                models=_models(config),
                duplicate_similarity=config.duplicate_similarity,
            )
        finally:
            await _close(distiller, judge)

    raise typer.Exit(_print_summary(asyncio.run(go())))
