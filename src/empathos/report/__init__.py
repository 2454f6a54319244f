"""Reports: leaderboard tables (rich, JSON, CSV)."""

from empathos.report.tables import (
    COLUMN_LEGEND,
    leaderboard_csv,
    leaderboard_json,
    leaderboard_table,
    legend_text,
)

__all__ = [
    "COLUMN_LEGEND",
    "leaderboard_csv",
    "leaderboard_json",
    "leaderboard_table",
    "legend_text",
]
