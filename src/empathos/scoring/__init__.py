"""Scoring records: the leaderboard (EPM-Q and its indices, aggregated per model), replay,
and the integrity checks (duplicates, contradictions, row labels)."""

from empathos.scoring.integrity import (
    Contradiction,
    Duplicate,
    LabelBy,
    contradictions,
    drop_duplicates,
    is_opaque_model_id,
    row_label,
)
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
    "Contradiction",
    "Duplicate",
    "GroupBy",
    "LabelBy",
    "LeaderboardRow",
    "ReplayResult",
    "bootstrap_ci",
    "contradictions",
    "drop_duplicates",
    "is_opaque_model_id",
    "leaderboard",
    "records_to_batch",
    "replay_loaded",
    "replay_record",
    "row_label",
    "score_records",
]
