"""The leaderboard of what a run directory holds, for the end of `empathos run`."""

from __future__ import annotations

from empathos.epm import EPMConfig
from empathos.records import LoadedRecord, load_records
from empathos.run.rundir import IndexRow
from empathos.run.session import PreparedRun
from empathos.scoring import LeaderboardRow, leaderboard

__all__ = ["run_leaderboard"]


def run_leaderboard(prepared: PreparedRun) -> tuple[list[LeaderboardRow], list[IndexRow]]:
    """The leaderboard of the run's selected dialogues, and the ones that ended as errors."""
    wanted = {f"{s.id}__t{t}" for s in prepared.scenarios for t in range(prepared.config.trials)}
    rows = prepared.run_dir.rows()
    records, _ = load_records([prepared.run_dir.records])
    chosen: list[LoadedRecord] = [r for r in records if r.path.stem in wanted]
    board = leaderboard(chosen, EPMConfig.preset(prepared.config.epm_preset)) if chosen else []
    errors = [row for key, row in sorted(rows.items()) if key in wanted and row.status == "error"]
    return board, errors
