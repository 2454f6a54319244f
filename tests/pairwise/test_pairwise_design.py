"""Issue 44's pairwise design, on the pure core: one ridge that does not move ratings,
style control that does not move them at a zero coefficient, fractional and weighted
outcomes (strong verdicts three games), the first-position rate, ratings the data do not
bound shown as not identified, and a leaderboard scale fitted on the board's own orders
with the board's uncertainty in the new model's interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from empathos.pairwise.anchored import Held, board_scale, rate_anchored
from empathos.pairwise.model import Item, TranscriptMessage
from empathos.pairwise.outcomes import Outcome, Verdict, combine, first_position_rates
from empathos.pairwise.ratings import ELO_SCALE, bounded, bounds, fit, rate
from empathos.pairwise.style import style_of
from empathos.pairwise.transcript import Truncation, seen_replies

TRUE = {"m1": 0.9, "m2": 0.4, "m3": 0.0, "m4": -0.6}
MODELS = sorted(TRUE)


def _outcomes(seed: int, scenarios: int, truth: dict[str, float] = TRUE) -> list[Outcome]:
    """One outcome per model pair per scenario, drawn from ``truth`` (win, loss; every
    fifth a tie)."""
    rng = np.random.default_rng(seed)
    models = sorted(truth)
    out = []
    for s in range(scenarios):
        for i, a in enumerate(models):
            for b in models[i + 1 :]:
                p = 1.0 / (1.0 + math.exp(-(truth[a] - truth[b])))
                score = 0.5 if rng.random() < 0.2 else float(rng.random() < p)
                out.append(Outcome(f"s{s}", 0, a, b, "J", score, 1.0))
    return out


def _mle(outcomes: list[Outcome], models: list[str]) -> np.ndarray:
    """The unregularised maximum-likelihood strengths, by a separate optimiser (centred)."""
    pos = {m: i for i, m in enumerate(models)}

    def nll(s: np.ndarray) -> float:
        total = 0.0
        for o in outcomes:
            z = s[pos[o.a]] - s[pos[o.b]]
            total += o.weight * (o.score * np.logaddexp(0, -z) + (1 - o.score) * np.logaddexp(0, z))
        return float(total + (s.sum()) ** 2)  # pins the mean at 0 only

    s = np.asarray(minimize(nll, np.zeros(len(models)), method="BFGS", options={"gtol": 1e-9}).x)
    out: np.ndarray = s - s.mean()
    return out


def test_the_ridge_moves_no_rating_by_a_tenth_of_a_point() -> None:
    """Few comparisons (8 scenarios), where a ridge shows most: choix's alpha 0.01 moved
    them by points; ours stays within 0.1 Elo point of the plain maximum likelihood."""
    outcomes = _outcomes(3, 8)
    ours = fit(outcomes, MODELS).strengths
    assert np.max(np.abs(ours - _mle(outcomes, MODELS))) * ELO_SCALE < 0.1


def test_style_control_at_a_zero_coefficient_leaves_the_ratings_alone() -> None:
    """Every dialogue of the same style: the covariates are all 0, so the style-controlled
    fit must give the plain fit's strengths (before, another solver and ridge moved them)."""
    outcomes = _outcomes(4, 10)
    style = {(f"s{s}", 0, m): (800.0, 2.0, 3.0, 1.0) for s in range(10) for m in MODELS}
    plain = fit(outcomes, MODELS)
    controlled = fit(outcomes, MODELS, style)
    assert controlled.coefs is not None and np.allclose(controlled.coefs, 0.0)
    assert np.max(np.abs(controlled.strengths - plain.strengths)) * ELO_SCALE < 1e-6


def test_fractional_weighted_scores_are_fitted_as_they_are() -> None:
    """A pair scoring 0.75 each time fits a logit of ln 3 (a plus-count fraction, say);
    weights scale the evidence, not the estimate."""
    light = [Outcome(f"s{s}", 0, "a", "b", "J", 0.75, 0.0, 1.0) for s in range(20)]
    heavy = [Outcome(f"s{s}", 0, "a", "b", "J", 0.75, 0.0, 3.0) for s in range(20)]
    for outcomes in (light, heavy):
        s = fit(outcomes, ["a", "b"]).strengths
        assert s[0] - s[1] == pytest.approx(math.log(3.0), abs=1e-3)


def test_strong_verdicts_count_three_games_and_a_flip_is_flagged() -> None:
    strong_first = Verdict("s", 0, "a", "b", "J", "first", 3)  # a, far better
    slight_second = Verdict("s", 0, "b", "a", "J", "first", 1)  # b, slightly
    (o,) = combine([strong_first, slight_second])
    assert (o.score, o.weight, o.flipped) == (0.75, 2.0, True)
    (even,) = combine([Verdict("t", 0, "a", "b", "J", "first", 2),
                       Verdict("t", 0, "b", "a", "J", "first", 2)])  # fmt: skip
    assert (even.score, even.weight, even.flipped) == (0.5, 1.0, True)
    (won,) = combine([Verdict("u", 0, "a", "b", "J", "second", 3),
                      Verdict("u", 0, "b", "a", "J", "first", 3)])  # fmt: skip
    assert (won.score, won.weight, won.flipped) == (0.0, 3.0, False)


def test_the_first_position_rate_beside_the_flip_rate() -> None:
    verdicts = [
        Verdict("s", 0, "a", "b", "J", "first"),
        Verdict("s", 0, "b", "a", "J", "first"),
        Verdict("t", 0, "a", "b", "J", "first"),
        Verdict("t", 0, "b", "a", "J", "second"),
    ]
    assert first_position_rates(verdicts) == {"J": 0.75}


def test_a_model_that_won_everything_or_was_never_compared_is_not_identified() -> None:
    """'top' beat every model in every pair; 'alone' has no comparison. Neither gets a
    number (before: a value the ridge chose, with a zero-width interval); the others are
    rated, with an interval, and the separated model's upper bound would be open."""
    outcomes = _outcomes(5, 12, {"m1": 0.5, "m2": 0.0, "m3": -0.5})
    outcomes += [Outcome(f"s{s}", 0, m, "top", "J", 0.0, 1.0) for s in range(12)
                 for m in ("m1", "m2", "m3")]  # fmt: skip
    models = ["alone", "m1", "m2", "m3", "top"]
    r = rate(outcomes, models, n_boot=40)
    status = dict(zip(models, r.status, strict=True))
    assert status["top"] == 1.0 and math.isnan(status["alone"])
    for m in ("top", "alone"):
        i = models.index(m)
        assert math.isnan(r.elo[i]) and math.isnan(r.strengths[i])
    assert math.isinf(r.elo_upper[models.index("top")])
    assert r.anchor == "m1"  # the first of the largest group, not 'alone'
    j = models.index("m2")
    assert r.elo_lower[j] < r.elo[j] < r.elo_upper[j]


def test_bounds_open_only_when_more_than_two_and_a_half_percent_are_separated() -> None:
    draws = np.tile(np.linspace(-1.0, 1.0, 200)[:, None], (1, 2))
    draws[:4, 0] = np.inf  # 2%: the bound stays finite
    draws[:10, 1] = np.inf  # 5%: open
    lo, hi = bounds(draws)
    assert math.isfinite(hi[0]) and hi[1] == math.inf and math.isfinite(lo[1])


def _board(k_true: float, orders: int, seed: int) -> tuple[dict[str, float], list[Outcome]]:
    ratings = {"b1": 1000.0, "b2": 1150.0, "b3": 1300.0, "b4": 1450.0}
    rng = np.random.default_rng(seed)
    names = sorted(ratings)
    out = []
    for n in range(orders):
        a, b = rng.choice(names, 2, replace=False)
        a, b = sorted((str(a), str(b)))
        p = 1.0 / (1.0 + math.exp(-k_true * (ratings[a] - ratings[b])))
        out.append(Outcome(f"s{n % 40}", 0, a, b, "board", float(rng.random() < p), 0.0, 0.5))
    return ratings, out


def test_the_board_scale_is_fitted_on_the_boards_own_orders() -> None:
    """Orders drawn with 0.008 logit per point: the fit recovers it (the old fixed
    conversion, 1.702 / (sqrt 2 x 350/6) = 0.0206, was 2.6 times too steep here); orders
    that all go as the ratings say cannot fix it."""
    ratings, orders = _board(0.008, 3000, 1)
    assert board_scale(orders, ratings) == pytest.approx(0.008, rel=0.15)
    sure = [Outcome("s", 0, "b1", "b4", "board", 0.0, 0.0, 0.5)]
    assert math.isnan(board_scale(sure, ratings))


def test_the_boards_uncertainty_widens_the_new_models_interval() -> None:
    ratings, orders = _board(0.008, 600, 2)
    rng = np.random.default_rng(3)
    mine = []
    for s in range(20):
        for b, r in ratings.items():
            p = 1.0 / (1.0 + math.exp(-0.008 * (1200.0 - r)))
            a_, b_ = sorted(("new", b))
            won = float(rng.random() < p)
            mine.append(Outcome(f"m{s}", 0, a_, b_, "J", won if a_ == "new" else 1 - won, 0.0))
    models = sorted([*ratings, "new"])
    i = models.index("new")
    widths = []
    for sigma in (0.0, 40.0):
        board = {m: Held(r, sigma) for m, r in ratings.items()}
        r_, k = rate_anchored(mine, models, board, orders, n_boot=60, seed=0)
        assert k == pytest.approx(board_scale(orders, ratings))
        assert 1050.0 < r_.elo[i] < 1350.0
        widths.append(r_.elo_upper[i] - r_.elo_lower[i])
    assert widths[1] > widths[0] * 1.1


def test_style_counts_what_the_judge_saw() -> None:
    """A reply over the truncation limit: its markdown past the cut is not counted, nor
    its length."""
    seen_part = "## Plan\n- one\n- two\n**bold** text " + "x" * 1990
    reply = seen_part + "\n## Unseen\n- three\n**more**" + "y" * 3000
    item = Item(scenario_id="s", model="m", transcript=(
        TranscriptMessage(role="user", content="hi"),
        TranscriptMessage(role="assistant", content=reply),
    ))  # fmt: skip
    seen = seen_replies(item, "en", Truncation(message_chars=2000))
    assert len(seen) == 2000 and seen.startswith("## Plan")
    chars, headers, lists, bold = style_of(seen)
    assert (chars, headers, lists, bold) == (2000.0, 1.0, 2.0, 1.0)
    assert style_of(reply)[1:] == (2.0, 3.0, 2.0)


def test_selection_keeps_a_model_that_won_everything_within_reach() -> None:
    """Selection's strengths: a model that won every pair so far sits one logit above the
    best bounded one (the ridge alone would put it ~15 logits up, and selection would never
    judge its pairs again)."""
    outcomes = _outcomes(6, 6, {"m1": 0.3, "m2": 0.0})
    outcomes += [Outcome(f"s{s}", 0, "m1", "top", "J", 0.0, 1.0) for s in range(3)]
    s = bounded(outcomes, ["m1", "m2", "top"])
    assert s[2] == pytest.approx(max(s[0], s[1]) + 1.0)
    assert abs(fit(outcomes, ["m1", "m2", "top"]).strengths[2]) > 5.0
