"""Benchmark runs: scoring and aggregation of records (leaderboard), replay."""

from empathos.bench.leaderboard import (
    GroupBy,
    LeaderboardRow,
    bootstrap_ci,
    leaderboard,
    records_to_batch,
    score_records,
)
from empathos.bench.replay import ReplayResult, replay_loaded, replay_record

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
