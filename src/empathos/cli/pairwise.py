"""`empathos compare --pairwise RUN...`: judge whole dialogues in pairs, rate the models.

The engine is ``empathos.pairwise``; this module reads the flags, finds the scenarios'
profiles, builds the judge and prints the results (docs/pairwise.md).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from empathos.bench.pairwise_items import bench_items
from empathos.cli.bench_run import is_bench_dir
from empathos.cli.score import Format
from empathos.errors import ConfigError, RecordError
from empathos.llm import ResponseCache, build_model
from empathos.llm.roles import RoleEndpoint
from empathos.pairwise import (
    AXES,
    CACHE,
    EqbenchJudge,
    EqbenchPrompts,
    Item,
    Judge,
    Judgement,
    JudgementStore,
    PairJudge,
    Profile,
    judge_orders,
    load_items,
    plan_orders,
    scenarios_of,
    summarize,
)
from empathos.prompts.blocks import condensed_profile
from empathos.report.labels import find_scenario_sources
from empathos.validate.config import load_judge

__all__ = ["PairwiseOptions", "format_results", "pairwise_main", "run_pairwise"]


@dataclass(frozen=True)
class PairwiseOptions:
    """The flags of ``compare --pairwise``."""

    out: Path
    judge: RoleEndpoint | None
    max_pairs: int | None = None
    pairs_per_model: int | None = None
    anchor: str | None = None
    anchor_rating: float = 1000.0
    length: bool = False
    aspect: str = "overall"
    bootstrap: int = 200
    seed: int = 0
    concurrency: int = 4
    scenarios: tuple[str, ...] = ()
    eqbench3: Path | None = None


def _profiles(paths: Sequence[Path], extra: Sequence[str], ids: set[str]) -> dict[str, Profile]:
    sources: list[str | Path] = [s if s == "builtin" else Path(s) for s in extra]
    sources += [s for s in find_scenario_sources(paths) if s not in sources]
    found = scenarios_of(sources, ids)
    return {
        k: Profile(condensed_profile(s, s.labels.language), s.labels.language)
        for k, s in found.items()
    }


def _judge(opts: PairwiseOptions, paths: Sequence[Path], ids: set[str]) -> tuple[Judge, Any]:
    endpoint = opts.judge
    if endpoint is None:
        raise ConfigError(
            "no judge: give --judge-model and --judge-base-url, or --config with a judge:",
            field="--judge-model",
        )
    cache = ResponseCache(opts.out / CACHE) if endpoint.cache else None
    client = build_model(endpoint, "judge", cache)
    name = endpoint.model or endpoint.kind
    if opts.eqbench3 is not None:
        return EqbenchJudge(client, name, EqbenchPrompts.load(opts.eqbench3)), cache
    style = endpoint.resolved_prompt_style()
    return PairJudge(client, name, _profiles(paths, opts.scenarios, ids), style), cache


def _budget(opts: PairwiseOptions, n_models: int) -> int | None:
    """The pair budget: --max-pairs, or --pairs-per-model K as ceil(K * M / 2) pairs (each
    pair is a comparison of two models), the smaller when both are given."""
    budgets = [opts.max_pairs] if opts.max_pairs is not None else []
    if opts.pairs_per_model is not None:
        budgets.append(-(-opts.pairs_per_model * n_models // 2))
    return min(budgets) if budgets else None


def _load(
    paths: Sequence[Path], opts: PairwiseOptions, err: Console
) -> tuple[list[Item], list[RecordError]]:
    """The items of ``paths``: ``empathos bench eqbench3`` directories read as such (their
    error records skipped, counted), everything else as ``load_items`` reads it."""
    benches = [p for p in paths if is_bench_dir(p)]
    items, problems = load_items([p for p in paths if p not in benches])
    if benches:
        if opts.eqbench3 is None:
            raise ConfigError(
                f"{benches[0]} is an `empathos bench` run: judge it with --eqbench3 DATA "
                "(EQ-Bench 3's pairwise prompt)",
                field="--eqbench3",
            )
        got = bench_items(list(benches))
        items += got.items
        problems += got.problems
        if got.errors:
            err.print(
                f"warning: skipped {got.errors} bench record(s) that ended in an error",
                markup=False,
            )
    return items, problems


def _check(opts: PairwiseOptions, models: set[str]) -> None:
    """Refuse, before any call, what would only show as an empty or silent result."""
    if len(models) < 2:
        raise ConfigError(
            f"found {len(models)} model(s) in the runs given; need two or more", field="RUN"
        )
    if opts.anchor is not None and opts.anchor not in models:
        raise ConfigError(
            f"no model {opts.anchor!r}; choose one of {sorted(models)}", field="--anchor"
        )
    if opts.eqbench3 is None and opts.aspect not in AXES:
        raise ConfigError(
            f"unknown aspect {opts.aspect!r}; choose one of {list(AXES)}", field="--aspect"
        )


async def _judge_all(
    orders: Sequence[tuple[Item, Item]],
    judge: Judge,
    store: JudgementStore,
    concurrency: int,
    err: Console,
) -> list[Judgement]:
    """Judge ``orders`` with a progress bar; close the judge's client in the same event
    loop, whatever happens."""
    bar = Progress(
        TextColumn("[bold]judge calls"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, refresh_per_second=2, auto_refresh=err.is_terminal,
    )  # fmt: skip
    task = bar.add_task("pairwise", total=len(orders))
    try:
        with bar:
            return await judge_orders(
                orders, judge, store, concurrency, on_done=lambda _: bar.advance(task)
            )
    finally:
        client = getattr(judge, "client", None)
        if client is not None:
            await client.aclose()


def run_pairwise(
    paths: Sequence[Path], opts: PairwiseOptions, err: Console
) -> tuple[dict[str, Any], int]:
    """Judge what is missing, then rate; the results and the exit code (1: a call failed or
    a file was unreadable)."""
    items, problems = _load(paths, opts, err)
    models = {i.model for i in items}
    _check(opts, models)
    for problem in problems:
        err.print(f"warning: skipped {problem.line()}", markup=False)
    store = JudgementStore(opts.out)
    stored, bad = store.read()
    for problem in bad:
        err.print(f"warning: skipped {problem.line()}", markup=False)
    judge, cache = _judge(opts, paths, {i.scenario_id for i in items})
    try:
        store.claim(judge.name, judge.fingerprint)
    except BaseException:
        if cache is not None:
            cache.close()
        raise
    plan = plan_orders(items, stored, judge.name, _budget(opts, len(models)), opts.seed)
    err.print(
        f"pairwise: {len(plan.orders)} call(s) to make for {len(plan.pairs)} pair(s) of "
        f"{plan.candidates} possible ({plan.done_pairs} begun before), judge {judge.name}",
        markup=False,
    )
    try:
        new = asyncio.run(_judge_all(plan.orders, judge, store, opts.concurrency, err))
    finally:
        if cache is not None:
            cache.close()
    failed = [j for j in new if j.picks is None]
    for j in failed[:5]:
        err.print(
            f"warning: judge failed on {j.scenario_id} t{j.trial} {j.first} vs {j.second}: "
            f"{j.error}",
            markup=False,
        )
    if failed:
        err.print(f"warning: {len(failed)} call(s) failed; rerun to judge them again", markup=False)
    everything, _ = store.read()
    result = summarize(
        everything, items, judge.name, aspect=opts.aspect, anchor=opts.anchor,
        anchor_rating=opts.anchor_rating, length=opts.length, n_boot=opts.bootstrap,
        seed=opts.seed,
    )  # fmt: skip
    store.write_ratings(result)
    return result, 1 if failed or problems else 0


def _csv(result: dict[str, Any]) -> str:
    buf = io.StringIO()
    fields = [
        "model",
        "elo",
        "elo_lower",
        "elo_upper",
        "strength",
        "lower",
        "upper",
        "pairs",
        "win_rate",
    ]
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for row in result["ratings"]:
        w.writerow(row)
    return buf.getvalue()


def _table(result: dict[str, Any]) -> str:
    lines = [
        f"pairwise ratings ({result['aspect']}; judge {result['judge']}; {result['pairs']} pairs "
        f"over {result['scenarios']} scenarios; both orders; 95% bootstrap over scenarios)"
    ]
    lines.append(f"{'model':<32} {'elo':>7} {'95% interval':>17} {'pairs':>6} {'win rate':>8}")
    for r in result["ratings"]:
        lines.append(
            f"{r['model'][:32]:<32} {r['elo']:>7.0f} "
            f"{r['elo_lower']:>8.0f}..{r['elo_upper']:<7.0f} "
            f"{r['pairs']:>6} {r['win_rate']:>8.0%}"
        )
    if result["ratings"]:
        lines.append(f"anchor: {result['anchor']} = {result['anchor_rating']:.0f}")
        models = result["models"]
        lines.append("win matrix (row beat column; ties half):")
        for i, m in enumerate(models):
            cells = " ".join(f"{w:>6.1f}" for w in result["wins"][i])
            lines.append(f"  {m[:30]:<30} {cells}")
    flips = ", ".join(f"{k} {v:.0%}" for k, v in result["flip_rate"].items()) or "n/a"
    lines.append(f"position flip rate (orders disagree: counted as ties): {flips}")
    if result.get("length_coef") is not None:
        lo, hi = result["length_interval"]
        lines.append(
            f"length coefficient (log reply-length ratio): {result['length_coef']:.3f} "
            f"[{lo:.3f}, {hi:.3f}]"
        )
    u = result["usage"]
    cost = "no price" if u["cost_usd"] is None else f"${u['cost_usd']:.4f}"
    lines.append(
        f"judge calls: {u['calls']} ({u['cache_hits']} from the cache, {u['failed']} failed); "
        f"{u['input_tokens']:,} prompt / {u['output_tokens']:,} completion tokens; cost {cost}"
    )
    return "\n".join(lines)


def format_results(result: dict[str, Any], fmt: str) -> str:
    """The results as ``table``, ``json`` or ``csv``."""
    if fmt == "json":
        return json.dumps(result, indent=1, ensure_ascii=False)
    if fmt == "csv":
        return _csv(result)
    return _table(result)


def _flags_judge(
    config: Path | None, model: str | None, base_url: str | None, key_env: str | None
) -> RoleEndpoint | None:
    flags = {"judge_model": model, "judge_base_url": base_url, "judge_api_key_env": key_env}
    return load_judge(config, flags, env_prefix="EMPATHOS_PAIRWISE_")


def pairwise_main(paths: list[Path], out: Path | None, fmt: str, flags: dict[str, Any]) -> int:
    """``compare --pairwise``: judge, rate, print in ``fmt``; the exit code."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    judge = _flags_judge(
        flags.pop("config"), flags.pop("judge_model"), flags.pop("judge_base_url"),
        flags.pop("judge_api_key_env"),
    )  # fmt: skip
    scenarios = tuple(flags.pop("scenarios") or ())
    opts = PairwiseOptions(out=out or Path("pairwise"), judge=judge, scenarios=scenarios, **flags)
    result, code = run_pairwise(paths, opts, err)
    Console(soft_wrap=True, highlight=False).print(format_results(result, fmt), markup=False)
    err.print(
        f"results: {opts.out} (report with: empathos report ... --pairwise {opts.out})",
        markup=False,
    )
    return code


FormatOpt = Annotated[Format, typer.Option("--format", help="Output: table, json or csv.")]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="YAML with a judge: endpoint section.")
]
JudgeModelOpt = Annotated[str | None, typer.Option(help="The pairwise judge's model id.")]
JudgeUrlOpt = Annotated[
    str | None, typer.Option(help="The pairwise judge's OpenAI-compatible base URL.")
]
JudgeKeyOpt = Annotated[
    str | None, typer.Option(help="NAME of the variable holding the judge's key.")
]
MaxPairsOpt = Annotated[
    int | None,
    typer.Option(
        min=1, help="Budget: at most this many pairs in all (2 calls each), the informative "
        "first. Default: every pair.",
    ),
]  # fmt: skip
PerModelOpt = Annotated[
    int | None,
    typer.Option(
        min=1, help="Budget: about this many pairs per model (ceil(K x models / 2) in all).",
    ),
]  # fmt: skip
AnchorOpt = Annotated[str | None, typer.Option(help="The model the Elo-like scale is anchored on.")]
AnchorRatingOpt = Annotated[float, typer.Option(help="The anchor model's rating.")]
LengthOpt = Annotated[
    bool,
    typer.Option(
        "--length-covariate", help="Fit the reply-length ratio as a covariate (style control)."
    ),
]
AspectOpt = Annotated[
    str, typer.Option(help="Which verdict to rate: overall, cognitive, affective, proactive.")
]
BootstrapOpt = Annotated[int, typer.Option(min=10, help="Bootstrap draws over scenarios.")]
SeedOpt = Annotated[int, typer.Option(help="Seed of the matchup order and the bootstrap.")]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="Judge calls at once.")]
Eqbench3Opt = Annotated[
    Path | None,
    typer.Option(
        help="Judge with EQ-Bench 3's pairwise prompt, read from this copy of its data/ "
        "folder (runs: `empathos bench eqbench3` directories or transcript run directories)."
    ),
]
