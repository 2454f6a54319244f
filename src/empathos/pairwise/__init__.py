"""Pairwise judging of whole dialogues: both orders, Bradley-Terry ratings, intervals.

The pure core turns verdicts into ratings (:mod:`~empathos.pairwise.outcomes`,
:mod:`~empathos.pairwise.ratings`, :mod:`~empathos.pairwise.select`); the rest reads the
dialogues (:mod:`~empathos.pairwise.sources`), asks the judge (ours,
:mod:`~empathos.pairwise.judge`, or EQ-Bench 3's prompt from the user's copy,
:mod:`~empathos.pairwise.eqbench`), stores each judgement as it ends
(:mod:`~empathos.pairwise.store`) and plans what is missing (:mod:`~empathos.pairwise.engine`).
See docs/pairwise.md.
"""

from empathos.pairwise.anchored import (
    BOARD_SCALE,
    Held,
    board_outcomes,
    board_scale,
    fit_anchored,
    rate_anchored,
)
from empathos.pairwise.engine import OrderPlan, candidate_pairs, judge_orders, plan_orders
from empathos.pairwise.eqbench import EqbenchJudge, EqbenchPrompts, parse_picks
from empathos.pairwise.judge import Judge, PairJudge, Profile
from empathos.pairwise.leaderboard import (
    BoardComparison,
    BoardRating,
    Leaderboard,
    read_leaderboard,
)
from empathos.pairwise.model import AXES, Item, Judgement, PairForm, Pick, TranscriptMessage
from empathos.pairwise.outcomes import (
    Outcome,
    Verdict,
    combine,
    first_position_rates,
    flip_rates,
)
from empathos.pairwise.ratings import Fit, Ratings, elo, fit, rate, win_matrix
from empathos.pairwise.results import summarize, usage_of
from empathos.pairwise.select import PairKey, choose_pairs
from empathos.pairwise.sources import TRANSCRIPTS, load_items, read_transcripts, scenarios_of
from empathos.pairwise.store import CACHE, JUDGEMENTS, RATINGS, JudgementStore, read_ratings
from empathos.pairwise.transcript import Truncation, item_of_record, render_transcript
from empathos.pairwise.trueskill_rating import TsRating, comparisons_of, rate_trueskill

__all__ = [
    "AXES",
    "BOARD_SCALE",
    "CACHE",
    "JUDGEMENTS",
    "RATINGS",
    "TRANSCRIPTS",
    "BoardComparison",
    "BoardRating",
    "EqbenchJudge",
    "EqbenchPrompts",
    "Fit",
    "Held",
    "Item",
    "Judge",
    "Judgement",
    "JudgementStore",
    "Leaderboard",
    "OrderPlan",
    "Outcome",
    "PairForm",
    "PairJudge",
    "PairKey",
    "Pick",
    "Profile",
    "Ratings",
    "TranscriptMessage",
    "Truncation",
    "TsRating",
    "Verdict",
    "board_outcomes",
    "board_scale",
    "candidate_pairs",
    "choose_pairs",
    "combine",
    "comparisons_of",
    "elo",
    "first_position_rates",
    "fit",
    "fit_anchored",
    "flip_rates",
    "item_of_record",
    "judge_orders",
    "load_items",
    "parse_picks",
    "plan_orders",
    "rate",
    "rate_anchored",
    "rate_trueskill",
    "read_leaderboard",
    "read_ratings",
    "read_transcripts",
    "render_transcript",
    "scenarios_of",
    "summarize",
    "usage_of",
    "win_matrix",
]
