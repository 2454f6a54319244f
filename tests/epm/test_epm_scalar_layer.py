"""The scalar layer (one dialogue, Python floats) gives the vectorised core's very bits.

``empathos.epm.step`` and ``victory_checklist`` compute in Python floats for speed (the online
loop steps one dialogue at a time); ``step_batch`` and ``victory_conditions`` are the
reference. Compared with ``==``, not a tolerance: a last-bit difference could flip a rounded
comparison at a threshold and make a run disagree with its own replay.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from empathos.epm import (
    EPMConfig,
    EPMState,
    init_state,
    step,
    step_batch,
    success_codes,
    thresholds,
    victory,
    victory_checklist,
)
from empathos.epm.termination import kind_from_code, victory_conditions

axis = st.floats(-12.0, 12.0, allow_nan=False, allow_infinity=False)
coords = st.tuples(axis, axis, axis)
configs = st.builds(
    lambda name, direction, decimals, zone, min_turns: EPMConfig.preset(name).model_copy(
        update={
            "direction": direction,
            "energy_decimals": decimals,
            "threshold_decimals": decimals,
            "in_zone_success": zone,
            "min_turns": min_turns,
        }
    ),
    st.sampled_from(["reference", "paper"]),
    st.sampled_from(["fixed", "current"]),
    st.sampled_from([None, 0, 1, 2, 3]),
    st.booleans(),
    st.integers(0, 4),
)


def _vectorised_checklist(epm: EPMState, cfg: EPMConfig) -> list[bool]:
    aligns = [p.alignment or 0.0 for p in epm.points[1:] if p.scored]
    last = epm.last
    args = (
        epm.turn,
        np.asarray([last.p_norm]),
        np.asarray([last.projection]),
        np.asarray([last.E_total]),
        np.asarray([float(np.mean(aligns)) if aligns else 0.0]),
        np.asarray([last.in_zone]),
        thresholds(np.asarray([epm.r0]), cfg),
    )
    code = success_codes(*args, cfg)
    assert victory(epm, cfg) == kind_from_code(int(code[0]))
    return [bool(x[0]) for x in victory_conditions(*args, cfg)]


@settings(max_examples=300, deadline=None)
@given(coords, st.lists(coords, min_size=1, max_size=12), configs)
@example((-3.0, -4.0, 0.0), [(0.0, 6.245, 0.0)], EPMConfig.preset("reference"))  # E 4.996 -> 5.00
@example((1e-13, 0.0, 0.0), [(0.0, 0.0, 0.0)], EPMConfig.preset("paper"))  # ~zero vectors
# E_total = 6.215, eps_energy = 6.22: numpy rounds 6.215 to 6.22 (rint(621.5) / 100), while
# Python's round(6.215, 2) gives 6.21 (the decimal value of the float is below 6.215)
@example((-6.22, 0.0, 0.0), [(6.215, 0.0, 0.0)], EPMConfig.preset("reference"))
def test_the_scalar_layer_gives_the_vectorised_bits(
    p0: tuple[float, ...], moves: list[tuple[float, ...]], cfg: EPMConfig
) -> None:
    epm = init_state(list(p0), cfg)
    for v in moves:
        last = epm.last
        ref = step_batch(
            np.asarray([last.P]), np.asarray([last.E_total]), np.asarray([v]),
            np.asarray([epm.v_star0]), cfg,
        )  # fmt: skip
        epm = step(epm, list(v), cfg)
        got = epm.last
        assert tuple(ref.P[0].tolist()) == got.P
        assert got.delta_E == float(ref.delta_E[0])
        assert got.E_total == float(ref.E_total[0])
        assert got.alignment == float(ref.alignment[0])
        assert got.projection == float(ref.projection[0])
        assert got.p_norm == float(ref.p_norm[0])
        assert got.distance == float(ref.distance[0])
        assert got.in_zone == bool(ref.in_zone[0])
        assert [bool(x[0]) for x in victory_checklist(epm, cfg)] == _vectorised_checklist(epm, cfg)


def test_a_step_keeps_the_thresholds_it_already_knows() -> None:
    cfg = EPMConfig.preset("reference")
    epm = init_state([-3.0, -4.0, 0.0], cfg)
    victory_checklist(epm, cfg)
    nxt = step(epm, [1.0, 1.0, 0.0], cfg)
    assert nxt._derived["thresholds"] is epm._derived["thresholds"]
    assert "victory" not in nxt._derived  # the conditions are the new point's own


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 12), st.randoms(use_true_random=False), configs)
def test_the_scalar_layer_matches_for_any_number_of_axes(
    dim: int, rnd: Any, cfg: EPMConfig
) -> None:
    # numpy sums 8 values or more pairwise, not left to right: rubrics with many axes too
    p0 = [rnd.uniform(-9.0, 9.0) for _ in range(dim)]
    epm = init_state(p0, cfg)
    for _ in range(6):
        v = [rnd.uniform(-3.0, 3.0) for _ in range(dim)]
        last = epm.last
        ref = step_batch(
            np.asarray([last.P]), np.asarray([last.E_total]), np.asarray([v]),
            np.asarray([epm.v_star0]), cfg,
        )  # fmt: skip
        epm = step(epm, v, cfg)
        assert tuple(ref.P[0].tolist()) == epm.last.P
        assert (epm.last.delta_E, epm.last.p_norm, epm.last.projection, epm.last.distance) == (
            float(ref.delta_E[0]), float(ref.p_norm[0]), float(ref.projection[0]),
            float(ref.distance[0]),
        )  # fmt: skip
        assert epm.last.alignment == float(ref.alignment[0])


window_configs = st.builds(
    lambda name, collapse, stagnation, regression, std, ratio, total, min_turns: EPMConfig.preset(
        name
    ).model_copy(
        update={
            "collapse_window": collapse,
            "stagnation_window": stagnation,
            "regression_window": regression,
            "stagnation_std": std,
            "regression_ratio": ratio,
            "regression_sum": total,
            "min_turns": min_turns,
        }
    ),
    st.sampled_from(["reference", "paper"]),
    st.integers(1, 10),
    st.integers(2, 12),
    st.integers(1, 12),
    st.sampled_from([0.5, 0.05, 2.0]),
    st.sampled_from([0.7, 0.5, 0.0]),
    st.sampled_from([-1.0, 0.0, 0.3]),
    st.integers(0, 6),
)


def _windows(stagnation: int, regression: int, ratio: float) -> EPMConfig:
    return EPMConfig.preset("reference").model_copy(
        update={
            "collapse_window": 10,
            "stagnation_window": stagnation,
            "regression_window": regression,
            "regression_ratio": ratio,
        }
    )


small = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(small, st.floats(0.0, 9.0)), min_size=1, max_size=16),
    st.integers(0, 20),
    window_configs,
)
# at the boundaries, where a strict comparison decides: the std of (1, 1.5, 2) is 0.5 exactly
# (the default threshold); 2 negatives of 4 against a ratio of 0.5
@example([(-1.0, 5.0), (-1.0, 1.0), (-1.0, 1.5), (-1.0, 2.0)], 20, _windows(3, 4, 0.7))
@example([(-3.0, 1.0), (1.0, 1.0), (-3.0, 1.0), (1.0, 1.0)], 20, _windows(3, 4, 0.5))
def test_the_scalar_failure_check_gives_the_vectorised_code(
    history: list[tuple[float, float]], turn: int, cfg: EPMConfig
) -> None:
    from empathos.epm.state import failure_code
    from empathos.epm.termination import failure_codes

    dE = [d for d, _ in history]
    pn = [p for _, p in history]
    ref = failure_codes(turn, np.asarray([dE]), np.asarray([pn]), np.asarray([len(dE)]), cfg)
    assert failure_code(turn, dE, pn, cfg) == int(ref[0])
