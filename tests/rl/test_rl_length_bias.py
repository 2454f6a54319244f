"""The exact length-choice bench (empathos.rl.length_bench) against the closed forms of
docs/rl.md ("Length bias"): every estimator's expected update on the stop / continue logit when
both choices are worth the same, plus the verl RFC's summed per-turn-normalised rewards as a
comparator. The closed forms below are written from the derivation, not from the estimators."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rl_reference import rfc_summed_turn_normalised

from empathos.rl.advantages import get_estimator
from empathos.rl.batch import AdvantageConfig, TurnBatch
from empathos.rl.length_bench import LengthChoice, expected_update, true_gradient

EPS = 1e-6
GAMMA = 0.85
CFG = AdvantageConfig(gamma=GAMMA)
UNBIASED = ["turn_only", "mapo_turnwise"]


def _normalise(values: list[float], pool: list[float]) -> list[float]:
    """(x - mean) / (pop std + eps) over ``pool``; 0 for a pool of one or with zero spread."""
    if len(pool) < 2 or max(pool) == min(pool):
        return [0.0] * len(values)
    m = sum(pool) / len(pool)
    sd = math.sqrt(sum((x - m) ** 2 for x in pool) / len(pool))
    return [(x - m) / (sd + EPS) for x in values]


def _binomial(g: int, p: float) -> list[float]:
    return [math.comb(g, k) * p**k * (1 - p) ** (g - k) for k in range(g + 1)]


def pooled_form(g: int, p: float, stop: list[float], cont: list[float]) -> float:
    """Closed form of a term that normalises each rollout's first entry over the pool of all
    entries of the group (deterministic Z): sum over k stoppers of Binomial(k; G, p) *
    [k (1 - p) A_stop(k) - (G - k) p A_cont(k)] / G."""
    total = 0.0
    for k, w in enumerate(_binomial(g, p)):
        pool = stop * k + cont * (g - k)
        a_stop, a_cont = _normalise([stop[0], cont[0]], pool)
        total += w * (k * (1 - p) * a_stop - (g - k) * p * a_cont) / g
    return total


def per_index_form(g: int, p: float, stop: list[float], cont: list[float]) -> float:
    """Closed form of the RFC comparator (deterministic Z): turn 0's advantage is the
    discounted sum over turn indices j of the entry normalised over the rollouts present at j."""
    total = 0.0
    for k, w in enumerate(_binomial(g, p)):
        a = [0.0, 0.0]
        for j in range(2):
            here = stop[j:][:1]  # the stopping rollout's entry at j, if it has a turn j
            pool = here * k + [cont[j]] * (g - k)
            if here:
                a[0] += GAMMA**j * _normalise([stop[j]], pool)[0]
            a[1] += GAMMA**j * _normalise([cont[j]], pool)[0]
        total += w * (k * (1 - p) * a[0] - (g - k) * p * a[1]) / g
    return total


def predicted(name: str, g: int, p: float, z: float, s: float, fixed: bool) -> float:
    """The derivation's expected update for a point-mass return Z = z (docs/rl.md)."""
    now, later = (1 - s) * z, s * z / GAMMA
    pad = [0.0] if fixed else []
    if name in UNBIASED:
        return 0.0  # every rollout's turn-0 return is z: nothing to normalise
    if name == "batch_only":
        return pooled_form(g, p, [z, *pad], [now, later])
    if name == "mapo_dialogue":
        return (1 - CFG.alpha) * pooled_form(g, p, [z, *pad], [now, later])
    if name == "reinforce_pp":
        return pooled_form(g, p, [z, *pad], [z, later])
    if name == "grpo":
        return pooled_form(g, p, [z], [now + later])
    return per_index_form(g, p, [z, *pad], [now, later])  # the RFC comparator


def _estimator(name: str):  # type: ignore[no-untyped-def]
    return rfc_summed_turn_normalised if name == "rfc" else get_estimator(name)


@pytest.mark.parametrize("name", ["batch_only", "mapo_dialogue", "reinforce_pp", "grpo", "rfc"])
@pytest.mark.parametrize(("g", "p"), [(2, 0.7), (3, 0.25), (5, 0.5)])
def test_exact_bench_matches_closed_form_of_each_biased_part(name: str, g: int, p: float) -> None:
    for z, s, fixed in ((1.0, 0.0, False), (1.0, 0.4, False), (1.0, 0.4, True), (-1.3, 1.0, False)):
        choice = LengthChoice((z,), (1.0,), s, GAMMA, fixed_length=fixed)
        got = expected_update(_estimator(name), g, p, choice, CFG)
        assert got == pytest.approx(predicted(name, g, p, z, s, fixed), abs=1e-9), (z, s, fixed)


def test_batch_term_length_bias_has_the_hand_closed_form_at_no_split() -> None:
    """s = 0: both choices pay z at turn 0, continuing adds a turn paying 0. With n = G - k
    continuers the pool is G copies of z and n zeros, so A(turn 0) = sign(z) sqrt(n / G) for
    either choice, and E = sign(z) / G * sum_k Binom(k) (k - G p) sqrt((G - k) / G) < 0 for
    z > 0: the batch term pushes toward the longer dialogue, by an amount free of |z|."""
    for g, p in ((2, 0.5), (4, 0.3), (5, 0.8)):
        hand = sum(
            w * (k - g * p) * math.sqrt((g - k) / g) / g for k, w in enumerate(_binomial(g, p))
        )
        assert hand < 0
        for z in (0.7, 3.0, -2.0):
            choice = LengthChoice((z,), (1.0,), 0.0, GAMMA)
            got = expected_update(get_estimator("batch_only"), g, p, choice, CFG)
            assert got == pytest.approx(math.copysign(1.0, z) * hand, abs=1e-5)
            fixed = LengthChoice((z,), (1.0,), 0.0, GAMMA, fixed_length=True)
            assert abs(expected_update(get_estimator("batch_only"), g, p, fixed, CFG)) < 1e-12


STOCHASTIC = [(0.5, 2.0), (-1.0, 2.5)]


@pytest.mark.parametrize(("g", "p", "outcomes"), [(2, 0.4, STOCHASTIC[0]), (3, 0.7, STOCHASTIC[1])])
def test_turnwise_and_turn_term_have_zero_expected_update(
    outcomes: tuple[float, float], g: int, p: float
) -> None:
    for s in (0.0, 0.5, 1.0):
        for fixed in (False, True):
            choice = LengthChoice(outcomes, (0.3, 0.7), s, GAMMA, fixed_length=fixed)
            assert true_gradient(choice, p) == 0.0
            for name in UNBIASED:
                got = expected_update(get_estimator(name), g, p, choice, CFG)
                assert abs(got) < 1e-12, (name, s, fixed, got)


@pytest.mark.parametrize("outcomes", STOCHASTIC)
def test_biased_parts_under_stochastic_returns(outcomes: tuple[float, float]) -> None:
    g, p = 3, 0.4
    update = {}
    for s in (0.0, 0.6):
        choice = LengthChoice(outcomes, (0.5, 0.5), s, GAMMA)
        for name in ("mapo_dialogue", "batch_only", "rfc"):
            update[name, s] = expected_update(_estimator(name), g, p, choice, CFG)
    for s in (0.0, 0.6):  # MAPO's bias is exactly its batch term's, weighted by 1 - alpha
        assert update["mapo_dialogue", s] == pytest.approx(0.5 * update["batch_only", s])
    assert abs(update["batch_only", 0.0]) > 1e-3  # a pure length bias (nothing moved in time)
    assert abs(update["rfc", 0.0]) < 1e-12  # the RFC's sum has none at s = 0 ...
    assert update["rfc", 0.6] > 1e-3  # ... but credits only the reward now: it favours stopping
    one = AdvantageConfig(gamma=1.0)  # GRPO's outcome is the undiscounted sum: unbiased at 1
    undiscounted = LengthChoice(outcomes, (0.5, 0.5), 0.6, 1.0)
    assert abs(expected_update(get_estimator("grpo"), g, p, undiscounted, one)) < 1e-12


def test_turnwise_follows_a_real_difference_in_return() -> None:
    """Not a zero by construction: when continuing is worth more (or less), the variant's
    expected update has the sign of the true gradient."""
    for extra in (0.5, -0.5):
        choice = LengthChoice((0.5, 2.0), (0.5, 0.5), 0.5, GAMMA, extra=extra)
        want = true_gradient(choice, 0.4)
        got = expected_update(get_estimator("mapo_turnwise"), 3, 0.4, choice, CFG)
        assert got * want > 0 and abs(got) > 1e-3, (extra, got, want)


def test_turnwise_keeps_credit_where_a_scenario_has_one_rollout_left() -> None:
    nan = float("nan")
    rewards = np.array(
        [[1.0, 2.0, 0.5], [0.3, nan, nan], [0.2, 0.1, 0.4], [0.9, -0.5, 1.5]]
    )  # scenario 0: a long and a short rollout; scenario 1: two long ones
    mask = ~np.isnan(rewards)
    batch = TurnBatch(rewards, mask, mask, np.array([0, 0, 1, 1]))
    turn = np.asarray(get_estimator("turn_only")(batch, CFG).advantages)
    wise = np.asarray(get_estimator("mapo_turnwise")(batch, CFG).advantages)
    assert (turn[0, 1:] == 0.0).all()  # the scenario's last rollout: a singleton group
    assert (np.abs(wise[0, 1:]) > 0.1).all()  # the wide term still ranks it at its turn index
    one = TurnBatch(rewards, mask, mask, np.zeros(4, dtype=np.int64))  # a single scenario:
    same = get_estimator("mapo_turnwise")(one, CFG).advantages  # both populations coincide
    np.testing.assert_allclose(same, get_estimator("turn_only")(one, CFG).advantages)
