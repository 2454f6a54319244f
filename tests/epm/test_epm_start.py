"""Degenerate starting points (issue 24): a start closer to the goal than one judge step is
refused, and no index ever leaves its documented range (docs/epm.md, "Ranges"), whatever
the starting point; the indices that divide by the start distance are NaN (undefined) below
the minimum, never a huge number."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from empathos.epm import (
    INDEX_NAMES,
    MIN_START_DISTANCE,
    EPMConfig,
    TrajectoryBatch,
    dialogue_indices,
    half_space_distance,
    init_state,
    start_problem,
    step,
)
from empathos.rubric import EMPATHY_RUBRIC, action_vector

MDEP_KEYS = [i.key for i in EMPATHY_RUBRIC.mdep]
mdep_rows = st.tuples(*[st.sampled_from(i.levels) for i in EMPATHY_RUBRIC.mdep])
# starting points near the goal, on both sides of the minimum: 0, tiny, positive, a step away
near_zero = st.tuples(*[st.floats(-7.0, 0.5, allow_nan=False) for _ in range(3)])
# the largest change one evaluation can make: |delta_E| <= ||v_t|| <= ||(-4, -5, -5)||
STEP_MAX = math.sqrt(66.0)


def _batch(p0: tuple[float, ...], rows: list[tuple[int, ...]], cfg: EPMConfig) -> TrajectoryBatch:
    """One dialogue through the EPM (no termination), as the scoring's padded arrays."""
    state = init_state(list(p0), cfg)
    level_sum = neg_sum = 0
    for t, row in enumerate(rows, start=1):
        levels = dict(zip(MDEP_KEYS, row, strict=True))
        state = step(state, action_vector(levels, EMPATHY_RUBRIC).tolist(), cfg, turn=t)
        level_sum += sum(row)
        neg_sum += sum(-v for k, v in levels.items() if k.endswith("Neg"))
    pts = state.points
    return TrajectoryBatch(
        P=np.asarray([[p.P for p in pts]], dtype=np.float64),
        delta_E=np.asarray([[p.delta_E or 0.0 for p in pts]]),
        alignment=np.asarray([[p.alignment or 0.0 for p in pts]]),
        mask=np.ones((1, len(pts)), dtype=bool),
        E_total=np.asarray([pts[-1].E_total]),
        turns=np.asarray([float(len(rows))]),
        level_sum=np.asarray([float(level_sum)]),
        neg_level_sum=np.asarray([float(neg_sum)]),
    )


def documented_range(name: str, n: int, cfg: EPMConfig) -> tuple[float, float]:
    """The range docs/epm.md gives each index, for a dialogue of n scored evaluations."""
    d = MIN_START_DISTANCE
    rho = 2.5 if cfg.scoring == "reference" else math.sqrt(12.0)
    top = {
        "E_tot": 100 * n * STEP_MAX / ((1.2 if cfg.scoring == "reference" else 1.0) * d),
        "S_net": 100 * 6 * n / (1.5 * d) if cfg.scoring == "reference" else 100 * 9 * n / (1.2 * d),
        "Rho": 100 * STEP_MAX / rho,
        "S_proj": 100 * STEP_MAX / rho,
    }
    return 0.0, top.get(name, 100.0)


@pytest.mark.parametrize("preset", ["reference", "paper"])
@settings(max_examples=150, deadline=None)
@given(p0=near_zero, rows=st.lists(mdep_rows, min_size=1, max_size=20))
@example(p0=(0.0, 0.0, 0.0), rows=[(2, 0, 2, 0, 2, 0)] * 12)
@example(p0=(-3.0, 0.0, 0.0), rows=[(2, 0, 2, 0, 2, 0)] * 12)
@example(p0=(-4.0, -4.0, -4.0), rows=[(2, 0, 2, 0, 2, 0)] * 12)
def test_no_index_leaves_its_documented_range(
    preset: str, p0: tuple[float, ...], rows: list[tuple[int, ...]]
) -> None:
    cfg = EPMConfig.preset(preset)
    idx = dialogue_indices(_batch(p0, rows, cfg), cfg)[0]
    degenerate = half_space_distance(np.asarray(p0), cfg.zone_eps) < MIN_START_DISTANCE
    assert (start_problem(p0, cfg.zone_eps) is not None) == bool(degenerate)
    for j, name in enumerate(INDEX_NAMES):
        if degenerate and name in ("RDI", "E_tot", "S_net"):
            assert math.isnan(idx[j]), (name, idx[j])  # undefined, never a huge number
            continue
        lo, hi = documented_range(name, len(rows), cfg)
        assert lo <= idx[j] <= hi + 1e-9, (name, idx[j], hi)


def test_the_minimum_is_one_judge_step_and_names_the_point() -> None:
    assert pytest.approx(math.sqrt(27.0)) == MIN_START_DISTANCE
    deepest = {k: 2 if k.endswith("Prog") else 0 for k in MDEP_KEYS}
    best = action_vector(deepest, EMPATHY_RUBRIC)
    assert float(np.linalg.norm(best)) == pytest.approx(MIN_START_DISTANCE)
    assert start_problem((-4.0, -4.0, -4.0)) is None  # d = sqrt(27): exactly one step
    problem = start_problem((0.0, 0.0, 0.0))
    assert problem is not None
    assert "P_0 = (0, 0, 0)" in problem and "distance to the goal 0.00" in problem
    assert "minimum 5.20" in problem
    assert start_problem((-3.9, -4.0, -4.0)) is not None
    assert start_problem((2.0, 5.0, 1.0)) is not None  # no deficit at all
