"""EPM dynamics and termination: a readable loop as reference, hypothesis properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from empathos.epm import (
    EPMConfig,
    TerminationKind,
    check_termination,
    failure_codes,
    half_space_distance,
    init_dynamics,
    init_state,
    kind_from_code,
    step,
    step_batch,
    step_unscored,
    success_codes,
    termination_codes,
    thresholds,
)
from empathos.errors import ConfigError
from empathos.rubric import EMPATHY_RUBRIC, Axis, Indicator, Rubric, action_vectors, p0_from_iedr

REF = EPMConfig.preset("reference")
PAPER = EPMConfig.preset("paper")

mdep_rows = st.tuples(*[st.sampled_from(i.levels) for i in EMPATHY_RUBRIC.mdep])
iedr_levels = st.fixed_dictionaries({i.key: st.integers(0, 3) for i in EMPATHY_RUBRIC.iedr})


def loop_reference(p0: list[float], vs: list[list[float]], cfg: EPMConfig) -> tuple[str, int]:
    """The spec written out as a plain loop, for comparison with the vectorised code."""
    r0 = math.sqrt(sum(x * x for x in p0))
    vstar = [-x / r0 for x in p0]
    eps_d = round(cfg.alpha * r0, 2)
    eps_e = round(r0, 2)
    P, E = list(p0), 0.0
    dEs, norms = [0.0], [r0]
    for t, v in enumerate(vs, start=1):
        P = [a + b for a, b in zip(P, v, strict=True)]
        dE = sum(a * b for a, b in zip(v, vstar, strict=True))
        E += dE
        dEs.append(dE)
        norms.append(math.sqrt(sum(x * x for x in P)))
        proj = sum(a * b for a, b in zip(P, vstar, strict=True))
        if t >= cfg.min_turns:
            energy = round(E, 2) >= eps_e
            if energy and norms[-1] <= eps_d:
                return "success_geometric", t
            if energy and (proj >= -eps_d or all(x >= -1 for x in P)):
                return "success_positional", t
            if len(dEs) >= 5 and all(x < 0 for x in dEs[-5:]):
                return "failure_collapse", t
            last8 = dEs[-8:]
            stag = float(np.std(norms[-5:], ddof=1)) < 0.5
            reg = sum(x < 0 for x in last8) > 0.7 * 8 and sum(last8) < -1.0
            if len(last8) == 8 and stag and reg:
                return "failure_stagnation_regression", t
        if t >= cfg.max_turns:
            return "timeout", t
    return "none", len(vs)


def loop_paper(p0: list[float], vs: list[list[float]], cfg: EPMConfig) -> tuple[str, int]:
    """The paper preset written out as a plain loop: the current direction (0 at P = 0),
    strict inequalities, companionship on mean alignment, and the in-zone rule (EPM_SPEC 5.1:
    E_total >= eps_energy under both presets), labelled ``success_geometric`` (the paper has
    no positional kind)."""

    def norm(x: list[float]) -> float:
        return math.sqrt(sum(a * a for a in x))

    r0 = norm(p0)
    eps_d, eps_e = cfg.alpha * r0, r0
    P, E = list(p0), 0.0
    dEs, norms, aligns = [0.0], [r0], []
    for t, v in enumerate(vs, start=1):
        n = norm(P)
        d = [-x / n for x in P] if n > 1e-12 else [0.0] * len(P)
        dE = sum(a * b for a, b in zip(v, d, strict=True))
        aligns.append(dE / norm(v) if norm(v) > 1e-12 else 0.0)
        P = [a + b for a, b in zip(P, v, strict=True)]
        E += dE
        dEs.append(dE)
        norms.append(norm(P))
        if t >= cfg.min_turns:
            if eps_e < E and norms[-1] < eps_d:
                return "success_geometric", t
            if eps_e < E and sum(aligns) / len(aligns) > cfg.tau_align:
                return "success_companionship", t
            if eps_e <= E and all(x >= -cfg.zone_eps for x in P):
                return "success_geometric", t
            if len(dEs) >= 5 and all(x < 0 for x in dEs[-5:]):
                return "failure_collapse", t
            last8 = dEs[-8:]
            stag = float(np.std(norms[-5:], ddof=1)) < 0.5
            reg = sum(x < 0 for x in last8) > 0.7 * 8 and sum(last8) < -1.0
            if len(last8) == 8 and stag and reg:
                return "failure_stagnation_regression", t
        if t >= cfg.max_turns:
            return "timeout", t
    return "none", len(vs)


def run_scalar(p0: np.ndarray, vs: np.ndarray, cfg: EPMConfig) -> tuple[str, int, object]:
    state = init_state(p0.tolist(), cfg)
    for v in vs:
        state = step(state, v.tolist(), cfg)
        term = check_termination(state, cfg)
        if term is not None:
            return term.kind.value, term.turn, state
    return "none", state.turn, state


@settings(max_examples=60, deadline=None)
@given(iedr_levels, st.lists(mdep_rows, min_size=1, max_size=50))
def test_scalar_layer_matches_the_readable_loop(
    levels: dict[str, int], rows: list[tuple[int, ...]]
) -> None:
    p0 = p0_from_iedr(levels, EMPATHY_RUBRIC)
    if np.linalg.norm(p0) == 0:
        return
    vs = action_vectors(np.asarray(rows), EMPATHY_RUBRIC)
    kind, turn, _ = run_scalar(p0, vs, REF)
    assert (kind, turn) == loop_reference(p0.tolist(), vs.tolist(), REF)


small_p0 = st.tuples(*[st.integers(-4, 0)] * 3)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(iedr_levels.map(lambda lv: tuple(p0_from_iedr(lv, EMPATHY_RUBRIC))), small_p0),
    st.lists(mdep_rows, min_size=1, max_size=50),
    st.sampled_from([0, 3, 12]),
    st.sampled_from([0.7, 0.3, 0.95]),
)
# reaches P = 0 with E_total = r0 exactly: the in-zone rule's E >= eps_energy decides
@example((-2, 0, 0), [(1, 0, 0, 0, 0, 0)] * 3, 0, 0.95)
def test_paper_scalar_layer_matches_the_readable_loop(
    p0: tuple[float, ...], rows: list[tuple[int, ...]], min_turns: int, tau: float
) -> None:
    """Strict inequalities, the in-zone rule and P = 0 (small P_0 are crossed or hit)."""
    cfg = PAPER.model_copy(update={"min_turns": min_turns, "tau_align": tau})
    p = np.asarray(p0, dtype=np.float64)
    vs = action_vectors(np.asarray(rows), EMPATHY_RUBRIC)
    kind, turn, _ = run_scalar(p, vs, cfg)
    assert (kind, turn) == loop_paper(p.tolist(), vs.tolist(), cfg)


def test_paper_in_zone_success_is_labelled_geometric() -> None:
    cfg = PAPER.model_copy(update={"min_turns": 1, "tau_align": 1.0})
    # P_0 = (-2, 0, 0), r0 = 2: a step of (1, 0, 0) gives E = 1 and P = (-1, 0, 0), in zone
    # without enough energy.
    state = step(init_state([-2.0, 0.0, 0.0], cfg), [1.0, 0.0, 0.0], cfg)
    assert check_termination(state, cfg) is None
    # The next step reaches P = 0 with E = 2: not > r0, so neither the geometric rule nor
    # companionship (alignment 1 is not > 1) holds, but the in-zone rule (E >= r0) does.
    state = step(state, [1.0, 0.0, 0.0], cfg)
    assert state.last.P == (0.0, 0.0, 0.0) and state.last.E_total == 2.0
    term = check_termination(state, cfg)
    assert term is not None and term.kind is TerminationKind.SUCCESS_GEOMETRIC
    # At P = 0 the direction is 0: a further step adds no energy and has alignment 0.
    state = step(state, [1.0, 1.0, 0.0], cfg)
    assert state.last.delta_E == 0.0 and state.last.alignment == 0.0
    # The paper's own conditions stay strict: near the origin with E = r0 exactly is no
    # victory once the in-zone rule is off.
    off = cfg.model_copy(update={"in_zone_success": False})
    state = step(step(init_state([-2.0, 0.0, 0.0], off), [1.0, 0.0, 0.0], off), [1.0, 0, 0], off)
    assert check_termination(state, off) is None
    # in zone with E > r0, far from the origin (|P| = 0.5 is not < 0.3), alignment 1 not > 1
    state = init_state([-3.0, 0.0, 0.0], cfg)
    state = step(state, [2.5, 0.0, 0.0], cfg)  # E = 2.5, P = (-0.5, 0, 0): in zone
    state = step(state, [1.0, 0.0, 0.0], cfg)  # E = 3.5 > 3, P = (0.5, 0, 0): in zone
    term = check_termination(state, cfg)
    assert term is not None and term.kind is TerminationKind.SUCCESS_GEOMETRIC


@settings(max_examples=60, deadline=None)
@given(iedr_levels, st.lists(mdep_rows, min_size=1, max_size=45))
def test_reference_energy_telescopes_to_projection_plus_r0(
    levels: dict[str, int], rows: list[tuple[int, ...]]
) -> None:
    p0 = p0_from_iedr(levels, EMPATHY_RUBRIC)
    if np.linalg.norm(p0) == 0:
        return
    state = init_state(p0.tolist(), REF)
    for v in action_vectors(np.asarray(rows), EMPATHY_RUBRIC):
        state = step(state, v.tolist(), REF)
        assert state.last.E_total - (state.last.projection + state.r0) == pytest.approx(
            0.0, abs=1e-9
        )
        assert state.last.v is not None
        assert -4 <= state.last.v[0] <= 3 and all(-5 <= x <= 3 for x in state.last.v[1:])
        # (EPM_SPEC says max ||v|| = sqrt(27); that holds for the positive side only:
        # the worst negative vector (-4, -5, -5) has norm sqrt(66).)
        assert math.sqrt(sum(x * x for x in state.last.v)) <= math.sqrt(66) + 1e-12


@settings(max_examples=60, deadline=None)
@given(
    iedr_levels,
    st.lists(mdep_rows, min_size=1, max_size=30),
    st.integers(1, 20),
    st.sampled_from([REF, PAPER]),
)
def test_no_termination_before_min_turns(
    levels: dict[str, int], rows: list[tuple[int, ...]], min_turns: int, base: EPMConfig
) -> None:
    cfg = base.model_copy(update={"min_turns": min_turns, "max_turns": 45})
    p0 = p0_from_iedr(levels, EMPATHY_RUBRIC)
    state = init_state(p0.tolist(), cfg)
    for v in action_vectors(np.asarray(rows), EMPATHY_RUBRIC):
        state = step(state, v.tolist(), cfg)
        term = check_termination(state, cfg)
        if term is not None:
            assert term.turn >= min_turns
            break


def test_batch_step_equals_scalar_steps() -> None:
    rng = np.random.default_rng(7)
    levels = rng.integers(0, 4, size=(64, 9))
    p0 = np.stack(
        [
            p0_from_iedr(
                dict(zip([i.key for i in EMPATHY_RUBRIC.iedr], r, strict=True)), EMPATHY_RUBRIC
            )
            for r in levels
        ]
    )
    p0[np.linalg.norm(p0, axis=1) == 0] = -1.0
    rows = np.stack([rng.choice(i.levels, size=(64, 20)) for i in EMPATHY_RUBRIC.mdep], axis=-1)
    vs = action_vectors(rows, EMPATHY_RUBRIC)
    for cfg in (REF, PAPER):
        r0, vstar = init_dynamics(p0)
        P, E = p0.copy(), np.zeros(64)
        for t in range(20):
            res = step_batch(P, E, vs[:, t], vstar, cfg)
            P, E = res.P, res.E_total
        for i in (0, 17, 63):
            state = init_state(p0[i].tolist(), cfg)
            for t in range(20):
                state = step(state, vs[i, t].tolist(), cfg)
            assert np.allclose(state.last.P, P[i]) and state.last.E_total == pytest.approx(E[i])
        assert np.allclose(r0, np.linalg.norm(p0, axis=1))


def test_batch_termination_codes_cover_success_failure_timeout() -> None:
    cfg = REF
    r0 = np.array([30.0, 30.0, 30.0, 30.0])
    th = thresholds(r0, cfg)
    succ = success_codes(
        12,
        p_norm=np.array([2.0, 20.0, 20.0, 20.0]),
        projection=np.array([-2.0, -2.0, -20.0, -20.0]),
        E_total=np.array([30.0, 29.996, 10.0, 10.0]),
        mean_alignment=np.zeros(4),
        zone=np.zeros(4, dtype=bool),
        th=th,
        config=cfg,
    )
    dE = np.array([[1.0] * 8, [1.0] * 8, [1.0, 1, 1, -1, -1, -1, -1, -1], [0.5] * 8])
    fail = failure_codes(12, dE, np.tile(np.arange(8.0), (4, 1)), np.full(4, 8), cfg)
    codes = termination_codes(np.array([12, 12, 12, 45]), succ, fail, cfg)
    kinds = [kind_from_code(int(c)) for c in codes]
    # 29.996 rounds to 30.00 >= 30.00: the energy rule compares 2-decimal values.
    assert kinds == [
        TerminationKind.SUCCESS_GEOMETRIC,
        TerminationKind.SUCCESS_POSITIONAL,
        TerminationKind.FAILURE_COLLAPSE,
        TerminationKind.TIMEOUT,
    ]


def test_stagnation_with_regression_is_a_failure() -> None:
    dE = np.array([[0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, 0.1]])
    norms = np.array([[30, 30.1, 30.2, 30.3, 30.4, 30.5, 30.6, 30.5]])
    code = failure_codes(12, dE, norms, np.array([8]), REF)
    assert kind_from_code(int(code[0])) is TerminationKind.FAILURE_STAGNATION_REGRESSION
    # too few points in the window: no failure
    assert int(failure_codes(12, dE, norms, np.array([7]), REF)[0]) == 0


def test_unscored_evaluations_leave_state_and_count_toward_error() -> None:
    cfg = REF.model_copy(update={"min_turns": 4})
    state = init_state([-10.0, -10.0, -10.0], cfg)
    state = step(state, [1.0, 1.0, 1.0], cfg)
    before = state.last
    state = step_unscored(state, cfg)
    assert state.last.P == before.P and state.last.E_total == before.E_total
    assert state.last.delta_E is None and state.n_unscored == 1
    assert check_termination(state, cfg) is None  # before min_turns
    for _ in range(2):
        state = step(state, [1.0, 1.0, 1.0], cfg)
    term = check_termination(state, cfg)
    assert term is not None and term.kind is TerminationKind.ERROR and "1 of 4" in term.reason


def test_paper_uses_current_direction_and_companionship() -> None:
    cfg = PAPER.model_copy(update={"min_turns": 2})
    state = init_state([-3.0, -4.0, 0.0], cfg)
    state = step(state, [3.0, 0.0, 0.0], cfg)
    assert state.last.delta_E == pytest.approx(1.8)
    state = step(state, [0.0, 3.0, 0.0], cfg)
    # direction is now -(0,-4,0)/4 = (0, 1, 0): the full step counts
    assert state.last.delta_E == pytest.approx(3.0)
    assert check_termination(state, cfg) is None  # E_total 4.8 is not > r0 = 5
    state = step(state, [1.0, 1.0, 0.0], cfg)
    # mean alignment (0.6 + 1 + 0.707) / 3 > 0.7, |P| = 1 is not < 0.5
    term = check_termination(state, cfg)
    assert term is not None and term.kind is TerminationKind.SUCCESS_COMPANIONSHIP


def test_half_space_distance_and_presets() -> None:
    P = np.array([[-3.0, 0.0, -1.0], [-1.0, -1.0, -1.0], [-2.0, -5.0, 4.0]])
    assert np.allclose(half_space_distance(P), [2.0, 0.0, math.sqrt(1 + 16)])
    assert half_space_distance(P, eps=0.0).shape == (3,)
    with pytest.raises(ConfigError, match="preset"):
        EPMConfig.preset("nope")
    assert PAPER.direction == "current" and REF.direction == "fixed"


TWO_AXES = Rubric(
    name="two-axis",
    axes=(Axis(key="X", name="x"), Axis(key="Y", name="y")),
    iedr=(
        Indicator(key="X.1", axis="X", name="x1", kind="deficit", scores={0: 0, 1: -5, 2: -10}),
        Indicator(key="Y.1", axis="Y", name="y1", kind="deficit", scores={0: 0, 1: -5, 2: -10}),
    ),
    mdep=(
        Indicator(key="X.Prog", axis="X", name="xp", kind="progress", scores={0: 0, 1: 2}),
        Indicator(key="Y.Prog", axis="Y", name="yp", kind="progress", scores={0: 0, 1: 2}),
        Indicator(key="Y.Neg", axis="Y", name="yn", kind="negative", scores={0: 0, -1: -3}),
    ),
)


def test_two_axis_custom_rubric_runs_end_to_end() -> None:
    cfg = REF.model_copy(update={"min_turns": 3, "max_turns": 20})
    p0 = p0_from_iedr({"X.1": 2, "Y.1": 1}, TWO_AXES)
    vs = action_vectors(np.array([[1, 1, 0]] * 20), TWO_AXES)
    kind, turn, _ = run_scalar(p0, vs, cfg)
    assert kind.startswith("success") and turn >= 3
    assert (kind, turn) == loop_reference(p0.tolist(), vs.tolist(), cfg)
