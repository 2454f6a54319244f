"""Reports: leaderboard tables (rich, JSON, CSV) and a short excerpt of one dialogue."""

from empathos.report.excerpt import dialogue_excerpt, pick_dialogue
from empathos.report.tables import leaderboard_csv, leaderboard_json, leaderboard_table

__all__ = [
    "dialogue_excerpt",
    "leaderboard_csv",
    "leaderboard_json",
    "leaderboard_table",
    "pick_dialogue",
]
