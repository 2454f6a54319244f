"""`empathos compare --pairwise RUN...`: judge whole dialogues in pairs, rate the models.

The application is ``empathos.campaign.pairwise`` (its engine ``empathos.pairwise``); this
module reads the flags, builds the judge's endpoint, calls :func:`run_pairwise` and prints
what it returns (docs/pairwise.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from empathos.campaign.pairwise import PairwiseOptions, run_pairwise
from empathos.cli.pairwise_output import format_results
from empathos.cli.run_console import stopped
from empathos.llm.roles import RoleEndpoint
from empathos.pairwise.board_solve import format_board, solve_board
from empathos.run.interrupt import Interrupted
from empathos.validate.config import load_judge

__all__ = ["pairwise_main"]


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
    try:
        result, code = run_pairwise(paths, opts, err)
    except Interrupted as stop:
        raise stopped(stop, err) from None
    Console(soft_wrap=True, highlight=False).print(format_results(result, fmt), markup=False)
    err.print(
        f"results: {opts.out} (report with: empathos report ... --pairwise {opts.out})",
        markup=False,
    )
    return code
