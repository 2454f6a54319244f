"""The simulated environment: determinism, EPM dynamics, delayed effects, noisy judge."""

from __future__ import annotations

import numpy as np

from empathos.epm import half_space_distance
from empathos.epm.termination import TerminationKind, kind_from_code
from empathos.rl import sim
from empathos.rl.sim import STRATEGIES, SimConfig, SimEnv, sample_personas
from empathos.rubric import EMPATHY_RUBRIC, action_vectors

QUIET = SimConfig(judge_noise=0.0, judge_fail=0.0)
A_NEG, ALL_NEG = 3, [1, 3, 5]


def env_for(cfg: SimConfig, n: int = 4, seed: int = 0, threshold: int = 1) -> SimEnv:
    p0 = np.tile(np.array([[-15.0, -20.0, -18.0]]), (n, 1))
    return SimEnv(p0, np.full(n, threshold), cfg, np.random.default_rng(seed))


def play(env: SimEnv, actions: list[int]) -> list[sim.StepOut]:
    return [env.step(np.full(env.n, a)) for a in actions]


def test_labelled_as_simulation() -> None:
    assert "SIMULATION" in (sim.__doc__ or "")
    assert "SIMULATION" in sim.SIMULATION_LABEL
    assert "SIMULATION" in (SimEnv.__doc__ or "")


def test_deterministic_under_seed() -> None:
    def run(seed: int) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        personas = sample_personas(rng, 6)
        env = SimEnv(personas.p0, personas.threshold, SimConfig(), rng)
        acts = np.random.default_rng(99).integers(0, len(STRATEGIES), size=(20, 6))
        return [env.step(a).reward for a in acts]

    a, b, c = run(1), run(1), run(2)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, y, equal_nan=True) for x, y in zip(a, c, strict=True))


def test_state_moves_by_judged_levels_through_the_epm_core() -> None:
    rng = np.random.default_rng(3)
    personas = sample_personas(rng, 64)
    env = SimEnv(personas.p0, personas.threshold, SimConfig(judge_fail=0.2), rng)
    for a in np.random.default_rng(4).integers(0, len(STRATEGIES), size=(20, 64)):
        before, live = env.P.copy(), env.active.copy()
        out = env.step(a)
        v = action_vectors(out.levels, EMPATHY_RUBRIC)
        moved = live & out.scored
        np.testing.assert_allclose(env.P[moved], before[moved] + v[moved])
        np.testing.assert_array_equal(env.P[~moved], before[~moved])  # unscored: P unchanged
        want = half_space_distance(before) - half_space_distance(env.P)
        np.testing.assert_allclose(out.reward[moved], want[moved])
        assert np.isnan(out.reward[~moved]).all()  # never a silent 0
    assert (~env.active).any()


def test_episodes_end_with_epm_termination_kinds() -> None:
    rng = np.random.default_rng(5)
    personas = sample_personas(rng, 200)
    cfg = SimConfig()
    env = SimEnv(personas.p0, personas.threshold, cfg, rng)
    kinds: list[TerminationKind] = []
    for _ in range(cfg.max_turns):
        out = env.step(rng.integers(0, len(STRATEGIES), size=env.n))
        kinds += [k for c in out.code[out.done] if (k := kind_from_code(int(c))) is not None]
    assert not env.active.any() and len(kinds) == 200
    assert TerminationKind.TIMEOUT in kinds


def test_premature_advice_backfires_later() -> None:
    delay = QUIET.backfire_delay
    follow = [0, 1, 2, 0, 1]
    advised = play(env_for(QUIET), [6, *follow])
    explored = play(env_for(QUIET), [7, *follow])
    assert advised[0].levels[0, 4] >= 1  # the advice itself looks helpful now (P.Prog)
    assert advised[0].reward[0] > 0
    assert advised[delay].levels[0, A_NEG] < 0  # and hurts the affective axis later
    assert explored[delay].levels[0, A_NEG] == 0


def test_repeating_a_strategy_fades_then_turns_performative() -> None:
    outs = play(env_for(QUIET), [1, 1, 1])
    assert outs[0].levels[0, 0] > outs[1].levels[0, 0] or outs[1].levels[0, 0] == 1
    assert (outs[2].levels[0, ALL_NEG] < 0).all()
    assert (outs[0].levels[0, ALL_NEG] == 0).all()


def test_deep_moves_need_eased_deficits() -> None:
    early = play(env_for(QUIET), [3])[0]
    assert early.levels[0, A_NEG] < 0  # resonance before rapport: tone mismatch
    env = env_for(QUIET)
    play(env, [1, 0, 1, 0, 1, 0])  # ease the cognitive deficit first
    late = play(env, [3])[0]
    assert late.levels[0, 2] == 2 and late.levels[0, A_NEG] == 0


def test_threshold_scales_what_registers() -> None:
    low = play(env_for(QUIET, threshold=0), [0, 2, 1, 7])
    high = play(env_for(QUIET, threshold=2), [0, 2, 1, 7])
    lo = np.array([o.levels[0, [0, 2, 4]] for o in low])
    hi = np.array([o.levels[0, [0, 2, 4]] for o in high])
    assert (lo >= hi).all() and (lo > hi).any()


def test_judge_noise_perturbs_levels() -> None:
    noisy = SimConfig(judge_fail=0.0)  # the default noise
    levels = np.concatenate([o.levels for o in play(env_for(noisy, n=300), [0])])
    quiet = play(env_for(QUIET, n=1), [0])[0].levels[0]
    assert len({tuple(row) for row in levels}) > 3
    agree = (levels == quiet).mean()
    assert 0.6 < agree < 1.0  # mostly the true level, not always


def _r2(features: np.ndarray, target: np.ndarray) -> float:
    """Share of the variance of ``target`` a least-squares linear read of ``features`` explains."""
    x = np.c_[features, np.ones(len(features))]
    coef, *_ = np.linalg.lstsq(x, target, rcond=None)
    resid = target - x @ coef
    return float(1.0 - resid.var(axis=0).sum() / target.var(axis=0).sum())


def test_the_policy_does_not_see_the_hidden_state() -> None:
    rng = np.random.default_rng(11)
    personas = sample_personas(rng, 2000)
    env = SimEnv(personas.p0, personas.threshold, SimConfig(), rng)
    first = env.observation()
    assert first.shape == (env.n, sim.OBS_DIM)
    assert (first == first[0]).all()  # nothing said yet: every persona looks the same
    for a in rng.integers(0, len(STRATEGIES), size=(6, env.n)):
        env.step(a)
    obs = env.observation()
    # P_0, P_t and the threshold are not readable off the observation (with them in it, as
    # features or linear in it, each of these would be 1.0)
    assert _r2(obs, env.p0) < 0.5
    assert _r2(obs, env.P) < 0.7
    assert _r2(obs, np.eye(3)[env.threshold]) < 0.5


def test_the_policy_reads_the_direction_of_its_last_move_with_noise() -> None:
    def directions(noise: float) -> tuple[np.ndarray, np.ndarray]:
        env = env_for(SimConfig(obs_noise=noise), n=600, seed=2)
        out = env.step(np.full(env.n, 6))  # advice: a visible gain on P now
        true = np.sign(action_vectors(out.levels, EMPATHY_RUBRIC))
        return env.observation()[:, :3], true

    seen, true = directions(0.0)
    np.testing.assert_array_equal(seen, true)
    seen, true = directions(0.3)
    wrong = (seen != true).mean()  # a random direction is wrong 2 times in 3
    assert 0.13 < wrong < 0.27
