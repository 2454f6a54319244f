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
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from empathos.bench.pairwise_items import bench_items
from empathos.cli.bench_run import is_bench_dir
from empathos.cli.pairwise_check import (
    check_lines,
    check_result,
    degraded_items,
    is_check_pair,
)
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
from empathos.pairwise.anchored import BOARD_SCALE
from empathos.pairwise.board_solve import format_board, solve_board
from empathos.pairwise.results import RATINGS_METHODS
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
    if scaled and (opts.anchor is not None or opts.length):
        flag = "--anchor" if opts.anchor is not None else "--length-covariate"
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
    fixed = {m: r.elo * BOARD_SCALE for m, r in board.ratings.items()} if board else None
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
    file was unreadable, or the degraded check failed)."""
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
    try:
        new_judgements = asyncio.run(_judge_all(plan.orders, judge, store, opts.concurrency, err))
    finally:
        if cache is not None:
            cache.close()
    failed = _report_failures(new_judgements, err)
    result = _results(store, items, judge.name, opts, board)
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
    judge: str,
    opts: PairwiseOptions,
    board: Leaderboard | None,
) -> dict[str, Any]:
    everything, _ = store.read()
    names = {i.model for i in items}
    mine = [j for j in everything if j.first in names and j.second in names]
    result = summarize(
        mine, items, judge, aspect=opts.aspect, anchor=opts.anchor,
        anchor_rating=opts.anchor_rating, length=opts.length, n_boot=opts.bootstrap,
        seed=opts.seed, board=board, rating=opts.rating,
    )  # fmt: skip
    if opts.degraded_check:
        result["degraded_check"] = check_result(
            mine, judge, opts.aspect, opts.degraded_threshold, opts.bootstrap, opts.seed
        )
    return result


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
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
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
        rate = "" if r["win_rate"] is None else f"{r['win_rate']:>8.0%}"
        held = "  (leaderboard, held)" if r.get("fixed") else ""
        lines.append(
            f"{r['model'][:32]:<32} {r['elo']:>7.0f} "
            f"{r['elo_lower']:>8.0f}..{r['elo_upper']:<7.0f} "
            f"{r['pairs']:>6} {rate:>8}{held}"
        )
    if result["ratings"]:
        lines.append(_scale_line(result))
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
    if "degraded_check" in result:
        lines.append(check_lines(result["degraded_check"]))
    u = result["usage"]
    cost = "no price" if u["cost_usd"] is None else f"${u['cost_usd']:.4f}"
    lines.append(
        f"judge calls: {u['calls']} ({u['cache_hits']} from the cache, {u['failed']} failed); "
        f"{u['input_tokens']:,} prompt / {u['output_tokens']:,} completion tokens; cost {cost}"
    )
    return "\n".join(lines)


def _scale_line(result: dict[str, Any]) -> str:
    if result.get("rating") == "trueskill":
        n = result.get("leaderboard_comparisons", 0)
        return (
            f"EQ-Bench 3's TrueSkill (mu, 95% = mu +- 1.96 sigma; {result['anchor']}; "
            f"{n} leaderboard order(s) in the solve)"
        )
    if result.get("scale"):
        return "scale: the leaderboard's ratings, held; the new models fitted on it"
    return f"anchor: {result['anchor']} = {result['anchor_rating']:.0f}"


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
    if not paths and flags.get("leaderboard_elo") is not None:  # the board re-solved alone
        board = solve_board(flags["leaderboard_elo"], flags["rating"])
        Console(soft_wrap=True, highlight=False).print(format_board(board, fmt), markup=False)
        return 0
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
