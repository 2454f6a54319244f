"""Scoring records: the leaderboard (EPM-Q and its indices, aggregated per model), replay."""

from empathos.scoring.leaderboard import (
    GroupBy,
    LeaderboardRow,
    bootstrap_ci,
    leaderboard,
    records_to_batch,
    score_records,
)
from empathos.scoring.replay import ReplayResult, replay_loaded, replay_record

__all__ = [
    "GroupBy",
    "LeaderboardRow",
    "ReplayResult",
    "bootstrap_ci",
    "leaderboard",
    "records_to_batch",
    "replay_loaded",
    "replay_record",
    "score_records",
]
