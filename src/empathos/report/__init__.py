"""Reports: leaderboard tables (rich, JSON, CSV) and a short excerpt of one dialogue."""

from empathos.report.excerpt import dialogue_excerpt, pick_dialogue
from empathos.report.tables import (
    COLUMN_LEGEND,
    leaderboard_csv,
    leaderboard_json,
    leaderboard_table,
    legend_text,
    plural,
    usage_line,
)

__all__ = [
    "COLUMN_LEGEND",
    "dialogue_excerpt",
    "leaderboard_csv",
    "leaderboard_json",
    "leaderboard_table",
    "legend_text",
    "pick_dialogue",
    "plural",
    "usage_line",
]
