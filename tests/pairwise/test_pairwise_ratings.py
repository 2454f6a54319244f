"""The pure core: verdicts of both orders -> outcomes, flip rate, Bradley-Terry ratings with
bootstrap intervals over scenarios, the length covariate, the Elo-like scale, selection."""

from __future__ import annotations

import math

import numpy as np
import pytest

from empathos.pairwise.outcomes import Verdict, combine, flip_rates
from empathos.pairwise.ratings import ELO_SCALE, fit, rate
from empathos.pairwise.select import choose_pairs

TRUE = {"m1": 1.0, "m2": 0.3, "m3": -0.2, "m4": -1.1}
MODELS = sorted(TRUE)


def _simulate(
    rng: np.random.Generator,
    scenarios: int,
    biased: float = 0.0,
    tie_every: int = 0,
    judge: str = "J",
) -> list[Verdict]:
    """Both orders of every pair of every scenario. A pair's content verdict is drawn once
    from the true strengths (both orders agree on it); a share ``biased`` of the pairs (exactly
    that share, the first ones in turn) is decided by position (the judge says "first" in
    both orders); every ``tie_every``-th pair is one the judge cannot separate (a coin per
    order)."""
    out: list[Verdict] = []
    pairs = [
        (s, a, b) for s in range(scenarios) for i, a in enumerate(MODELS) for b in MODELS[i + 1 :]
    ]
    n_biased = round(biased * len(pairs))
    for k, (s, a, b) in enumerate(pairs):
        p = 1.0 / (1.0 + math.exp(-(TRUE[a] - TRUE[b])))
        winner = a if rng.random() < p else b
        for first, second in ((a, b), (b, a)):
            if k < n_biased:
                pick = "first"
            elif tie_every and k % tie_every == 0:
                pick = "first" if rng.random() < 0.5 else "second"
            else:
                pick = "first" if winner == first else "second"
            out.append(Verdict(f"s{s}", 0, first, second, judge, pick, 2))
    return out


def test_both_orders_agreeing_win_disagreeing_tie_and_a_lone_order_waits() -> None:
    v = [
        Verdict("s", 0, "x", "y", "J", "first"),
        Verdict("s", 0, "y", "x", "J", "second"),  # x again: a win for x
        Verdict("t", 0, "x", "y", "J", "first"),
        Verdict("t", 0, "y", "x", "J", "first"),  # each picks the first: a tie
        Verdict("u", 0, "x", "y", "J", "first"),  # only one order: not an outcome yet
    ]
    out = combine(v)
    assert [(o.scenario_id, o.score, o.flipped) for o in out] == [
        ("s", 1.0, False),
        ("t", 0.5, True),
    ]
    assert flip_rates(out) == {"J": 0.5}


def test_ratings_follow_the_true_strengths_with_ties_and_a_position_biased_judge() -> None:
    rng = np.random.default_rng(7)
    verdicts = _simulate(rng, 60, biased=0.2, tie_every=7)
    outcomes = combine(verdicts)
    r = rate(outcomes, MODELS, n_boot=50)
    order = [MODELS[i] for i in np.argsort(-r.strengths)]
    assert order == sorted(TRUE, key=lambda m: -TRUE[m])
    assert np.all(r.lower <= r.strengths) and np.all(r.strengths <= r.upper)


@pytest.mark.parametrize("bias", [0.0, 0.25, 0.5])
def test_flip_rate_is_the_share_of_pairs_the_position_decided(bias: float) -> None:
    outcomes = combine(_simulate(np.random.default_rng(3), 20, biased=bias))
    assert flip_rates(outcomes) == {"J": pytest.approx(bias)}


def test_a_judge_that_always_says_first_flips_every_pair_and_rates_all_equal() -> None:
    verdicts = [
        Verdict(f"s{s}", 0, x, y, "lazy", "first")
        for s in range(10)
        for i, a in enumerate(MODELS)
        for b in MODELS[i + 1 :]
        for x, y in ((a, b), (b, a))
    ]
    outcomes = combine(verdicts)
    assert flip_rates(outcomes) == {"lazy": 1.0}
    r = rate(outcomes, MODELS, n_boot=20)
    assert np.allclose(r.strengths, 0.0, atol=1e-6)
    assert np.allclose(r.elo, 1000.0, atol=1e-3)


def test_intervals_cover_the_true_strengths_at_about_the_nominal_rate() -> None:
    truth = np.array([TRUE[m] for m in MODELS])
    truth -= truth.mean()
    covered = total = 0
    for sim in range(30):
        outcomes = combine(_simulate(np.random.default_rng(100 + sim), 40))
        r = rate(outcomes, MODELS, n_boot=60, seed=sim)
        covered += int(np.sum((r.lower <= truth) & (truth <= r.upper)))
        total += len(MODELS)
    # 95% nominal over 120 intervals: a binomial sd of 2%; percentile intervals run a little
    # narrow with few draws
    assert 0.85 <= covered / total <= 0.995


def test_elo_scale_is_anchored_on_the_named_model() -> None:
    outcomes = combine(_simulate(np.random.default_rng(5), 30))
    r = rate(outcomes, MODELS, anchor="m3", anchor_rating=1500.0, n_boot=20)
    i = MODELS.index("m3")
    assert r.elo[i] == pytest.approx(1500.0) and r.anchor == "m3"
    j = MODELS.index("m1")
    assert r.elo[j] - r.elo[i] == pytest.approx(ELO_SCALE * (r.strengths[j] - r.strengths[i]))
    assert ELO_SCALE * math.log(10.0) == pytest.approx(400.0)  # 400 points: odds of ten


def test_the_length_covariate_recovers_a_judge_that_favours_long_dialogues() -> None:
    """Two equal models; the judge's preference follows only the length (its log ratio, with
    coefficient 1.5): the plain fit separates them, the style-controlled fit does not and
    reports a positive length coefficient (on the standardised normalised difference) and
    none for the markdown it never saw."""
    rng = np.random.default_rng(11)
    verdicts: list[Verdict] = []
    lengths: dict[tuple[str, int, str], tuple[float, ...]] = {}
    for s in range(300):
        la, lb = rng.uniform(200, 2000), rng.uniform(200, 2000)
        lb *= 1.5  # "long" writes longer on average
        lengths[(f"s{s}", 0, "long")], lengths[(f"s{s}", 0, "short")] = (lb, 0, 0, 0), (la, 0, 0, 0)
        p_long = 1.0 / (1.0 + math.exp(-1.5 * math.log(lb / la)))
        w = "long" if rng.random() < p_long else "short"
        for x, y in (("long", "short"), ("short", "long")):
            verdicts.append(Verdict(f"s{s}", 0, x, y, "J", "first" if w == x else "second"))
    outcomes = combine(verdicts)
    plain = fit(outcomes, ["long", "short"])
    controlled = fit(outcomes, ["long", "short"], lengths)
    assert plain.strengths[0] - plain.strengths[1] > 0.3
    assert abs(controlled.strengths[0] - controlled.strengths[1]) < 0.25
    assert controlled.length_coef is not None and controlled.length_coef > 0.3
    assert controlled.coefs is not None and not np.any(controlled.coefs[1:])


def test_selection_spends_the_budget_on_close_and_rarely_compared_pairs() -> None:
    cands = [
        (f"s{s}", 0, a, b) for s in range(10) for i, a in enumerate(MODELS) for b in MODELS[i + 1 :]
    ]
    strengths = {"m1": 3.0, "m2": 2.9, "m3": 0.0, "m4": -3.0}
    chosen = choose_pairs(cands, [], strengths, max_pairs=6)
    assert len(chosen) == 6 and len(set(chosen)) == 6
    per = {}
    for c in chosen:
        per[(c[2], c[3])] = per.get((c[2], c[3]), 0) + 1
    assert ("m1", "m4") not in per  # a sure outcome: nothing to learn
    assert per[("m1", "m2")] >= 2  # the closest pair gets the most
    # the budget counts what was done: 4 done leave 2; none chosen twice; none done again
    done = chosen[:4]
    more = choose_pairs(cands, done, strengths, max_pairs=6)
    assert len(more) == 2 and not set(more) & set(done)
    assert choose_pairs(cands, [], {}, max_pairs=None) == cands
    # equal strengths: the budget spreads over every model pair
    even = choose_pairs(cands, [], {}, max_pairs=6)
    assert len({(c[2], c[3]) for c in even}) == 6
