"""Reports: leaderboard tables (rich, JSON, CSV)."""

from empathos.report.tables import leaderboard_csv, leaderboard_json, leaderboard_table

__all__ = ["leaderboard_csv", "leaderboard_json", "leaderboard_table"]
