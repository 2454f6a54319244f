"""``empathos compare --pairwise RUN...`` as an application: load the dialogues (runs,
record files, ``empathos bench eqbench3`` directories, a leaderboard), read the scenarios'
profiles, plan the budget, drive the judge calls into the journal and rate the models
(docs/pairwise.md). The engine is ``empathos.pairwise``; the command module
(``cli/pairwise.py``) only reads the flags and prints what :func:`run_pairwise` returns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from empathos.bench.pairwise_items import bench_items
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
    Leaderboard,
    PairJudge,
    PairKey,
    Profile,
    judge_orders,
    load_items,
    plan_orders,
    read_leaderboard,
    scenarios_of,
    summarize,
)
from empathos.pairwise.results import RATINGS_METHODS, board_strengths, default_rule, style_table
from empathos.prompts.blocks import condensed_profile
from empathos.report.labels import find_scenario_sources
from empathos.run.interrupt import interruptible
from empathos.run.manifest import is_bench_dir
from empathos.scoring.integrity import LabelBy, row_label
from empathos.validate.degraded import check_result, degraded_items, is_check_pair

__all__ = ["PairwiseOptions", "run_pairwise"]


@dataclass(frozen=True)
class PairwiseOptions:
    """The flags of ``compare --pairwise``."""

    out: Path
    judge: RoleEndpoint | None
    max_pairs: int | None = None
    pairs_per_model: int | None = None
    anchor: str | None = None
    anchor_rating: float = 1000.0
    style: bool = False
    label: LabelBy = "auto"
    aspect: str = "overall"
    bootstrap: int = 200
    seed: int = 0
    concurrency: int = 4
    scenarios: tuple[str, ...] = ()
    eqbench3: Path | None = None
    leaderboard: Path | None = None
    leaderboard_elo: Path | None = None
    rating: str = "bradley-terry"
    degraded_check: bool = False
    degraded_threshold: float = 0.8


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


def _budget(opts: PairwiseOptions, n_models: int, n_new: int | None = None) -> int | None:
    """The pair budget: --max-pairs, or --pairs-per-model K as ceil(K * M / 2) pairs (each
    pair is a comparison of two models; against a leaderboard K x the new models, each of
    whose pairs has one), the smaller when both are given."""
    budgets = [opts.max_pairs] if opts.max_pairs is not None else []
    if opts.pairs_per_model is not None:
        k = opts.pairs_per_model
        budgets.append(k * n_new if n_new is not None else -(-k * n_models // 2))
    return min(budgets) if budgets else None


def _load(
    paths: Sequence[Path], opts: PairwiseOptions, err: Console
) -> tuple[list[Item], list[RecordError]]:
    """The items of ``paths``: ``empathos bench eqbench3`` directories read as such (their
    error records skipped, counted), everything else as ``load_items`` reads it."""
    benches = [p for p in paths if is_bench_dir(p)]
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise ConfigError(f"no such file or directory: {missing[0]}", field="RUN")
    name = partial(row_label, label_by=opts.label)
    items, problems = load_items([p for p in paths if p not in benches], name)
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
    done: list[Judgement],
) -> None:
    """Judge ``orders`` with a progress bar, each judgement added to ``done`` as it ends;
    close the judge's client in the same event loop, whatever happens."""
    bar = Progress(
        TextColumn("[bold]judge calls"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, refresh_per_second=2, auto_refresh=err.is_terminal,
    )  # fmt: skip
    task = bar.add_task("pairwise", total=len(orders))
    try:
        with bar:

            def one(j: Judgement) -> None:
                done.append(j)
                bar.advance(task)

            await judge_orders(orders, judge, store, concurrency, on_done=one)
    finally:
        client = getattr(judge, "client", None)
        if client is not None:
            await client.aclose()


def _check_flags(opts: PairwiseOptions) -> None:
    """Refuse flags that do not go together, before anything is read."""
    if opts.rating not in RATINGS_METHODS:
        raise ConfigError(
            f"unknown rating {opts.rating!r}; choose one of {list(RATINGS_METHODS)}",
            field="--rating",
        )
    eq3 = {
        "--rating trueskill": opts.rating == "trueskill",
        "--leaderboard": bool(opts.leaderboard),
    }
    for flag, given in eq3.items():
        if given and opts.eqbench3 is None:
            raise ConfigError(f"{flag} is for EQ-Bench 3's pass: give --eqbench3 DATA", field=flag)
    if opts.leaderboard_elo is not None and opts.leaderboard is None:
        raise ConfigError("give the runs file with --leaderboard too", field="--leaderboard-elo")
    if opts.degraded_check and opts.leaderboard is not None:
        raise ConfigError("judges runs against their own copies: not with --leaderboard",
                          field="--degraded-check")  # fmt: skip
    scaled = opts.rating == "trueskill" or opts.leaderboard_elo is not None
    if scaled and (opts.anchor is not None or opts.style):
        flag = "--anchor" if opts.anchor is not None else "--style-control"
        raise ConfigError(
            "not with --rating trueskill or --leaderboard-elo (their scale is the benchmark's)",
            field=flag,
        )


def _with_board(
    opts: PairwiseOptions, items: list[Item]
) -> tuple[list[Item], Leaderboard | None, set[str]]:
    """The items with the leaderboard's (if any), the leaderboard, the new models."""
    new = {i.model for i in items}
    if opts.leaderboard is None:
        return items, None, new
    if not new:
        raise ConfigError("found no model in the runs given; need one or more", field="RUN")
    board = read_leaderboard(opts.leaderboard, opts.leaderboard_elo)
    clash = sorted(new & board.models)
    if clash:
        raise ConfigError(
            f"model {clash[0]!r} is already on the leaderboard; label the new run differently",
            field="RUN",
        )
    return [*items, *board.items], board, new


def _plan_args(
    opts: PairwiseOptions, board: Leaderboard | None, new: set[str], n_models: int
) -> dict[str, Any]:
    """plan_orders' budget, which pairs, and the strengths held."""
    allow = None
    if opts.degraded_check:
        allow = is_check_pair
    elif board is not None:
        allow = _involves(new)
    fixed = board_strengths(board) if board else None
    n_new = len(new) if board is not None else None
    return {"max_pairs": _budget(opts, n_models, n_new), "allow": allow, "fixed": fixed or None}


def _involves(new: set[str]) -> Any:
    def allow(key: PairKey) -> bool:
        return key[2] in new or key[3] in new

    return allow


def run_pairwise(
    paths: Sequence[Path], opts: PairwiseOptions, err: Console
) -> tuple[dict[str, Any], int]:
    """Judge what is missing, then rate; the results and the exit code (1: a call failed, a
    file was unreadable, or the degraded check failed). Ctrl-C or SIGTERM stops the judge
    calls (those ended are kept) and raises :class:`~empathos.run.interrupt.Interrupted`."""
    _check_flags(opts)
    items, problems = _load(paths, opts, err)
    items, board, new = _with_board(opts, degraded_items(items) if opts.degraded_check else items)
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
    args = _plan_args(opts, board, new, len(models))
    plan = plan_orders(items, stored, judge.name, seed=opts.seed, **args)
    against = f" against {len(board.models)} leaderboard model(s)" if board else ""
    err.print(
        f"pairwise: {len(plan.orders)} call(s) to make for {len(plan.pairs)} pair(s) of "
        f"{plan.candidates} possible ({plan.done_pairs} begun before), judge {judge.name}"
        f"{against}",
        markup=False,
    )
    done: list[Judgement] = []
    try:
        with interruptible(lambda: f"{len(done)} judge call(s)", opts.out):
            asyncio.run(_judge_all(plan.orders, judge, store, opts.concurrency, err, done))
    finally:
        if cache is not None:
            cache.close()
    failed = _report_failures(done, err)
    result = _results(store, items, judge, opts, board)
    store.write_ratings(result)
    check_failed = opts.degraded_check and not result["degraded_check"]["passed"]
    return result, 1 if failed or problems or check_failed else 0


def _report_failures(judgements: Sequence[Judgement], err: Console) -> int:
    failed = [j for j in judgements if j.picks is None]
    for j in failed[:5]:
        err.print(
            f"warning: judge failed on {j.scenario_id} t{j.trial} {j.first} vs {j.second}: "
            f"{j.error}",
            markup=False,
        )
    if failed:
        err.print(f"warning: {len(failed)} call(s) failed; rerun to judge them again", markup=False)
    return len(failed)


def _results(
    store: JudgementStore,
    items: Sequence[Item],
    judge_obj: Judge,
    opts: PairwiseOptions,
    board: Leaderboard | None,
) -> dict[str, Any]:
    judge = judge_obj.name
    everything, _ = store.read()
    names = {i.model for i in items}
    mine = [j for j in everything if j.first in names and j.second in names]
    result = summarize(
        mine, items, judge, aspect=opts.aspect, anchor=opts.anchor,
        anchor_rating=opts.anchor_rating, n_boot=opts.bootstrap,
        style=style_table(items, getattr(judge_obj, "seen", None)) if opts.style else None,
        seed=opts.seed, board=board, rating=opts.rating,
        rule=getattr(judge_obj, "outcome_rule", default_rule),
    )  # fmt: skip
    if opts.degraded_check:
        result["degraded_check"] = check_result(
            mine, judge, opts.aspect, opts.degraded_threshold, opts.bootstrap, opts.seed
        )
    return result
