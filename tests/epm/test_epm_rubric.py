"""The rubric as data: P_0 and v_t from levels, validation, vectorised scoring."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from empathos.errors import InputError
from empathos.rubric import (
    EMPATHY_RUBRIC,
    Axis,
    Indicator,
    Rubric,
    action_vector,
    action_vectors,
    p0_from_iedr,
)

IEDR_ZERO = {i.key: 0 for i in EMPATHY_RUBRIC.iedr}


def test_p0_is_per_axis_sum_of_level_scores() -> None:
    levels = {**IEDR_ZERO, "C.3": 3, "A.2": 1, "P.1": 2, "P.2": "3"}
    assert p0_from_iedr(levels, EMPATHY_RUBRIC).tolist() == [-9.0, -4.0, -16.0]


def test_largest_p0_norm_matches_spec() -> None:
    worst = {i.key: 3 for i in EMPATHY_RUBRIC.iedr}
    p0 = p0_from_iedr(worst, EMPATHY_RUBRIC)
    assert p0.tolist() == [-21.0, -27.0, -27.0]
    assert np.linalg.norm(p0) == pytest.approx(43.6, abs=0.05)


def test_action_vector_sums_prog_and_neg() -> None:
    levels = {"C.Prog": 2, "C.Neg": -2, "A.Prog": 0, "A.Neg": -2, "P.Prog": "1", "P.Neg": "-1"}
    assert action_vector(levels, EMPATHY_RUBRIC).tolist() == [-1.0, -5.0, -1.0]


@pytest.mark.parametrize(
    ("key", "level"), [("C.Prog", 3), ("A.Neg", 1), ("P.Neg", "L1"), ("C.Prog", None)]
)
def test_out_of_range_or_invalid_level_names_the_indicator(key: str, level: object) -> None:
    levels: dict[str, object] = {i.key: 0 for i in EMPATHY_RUBRIC.mdep}
    levels[key] = level
    with pytest.raises(InputError) as exc:
        action_vector(levels, EMPATHY_RUBRIC)
    assert key in exc.value.line()


def test_missing_and_unknown_indicators_are_errors() -> None:
    with pytest.raises(InputError, match=r"C\.1"):
        p0_from_iedr({k: v for k, v in IEDR_ZERO.items() if k != "C.1"}, EMPATHY_RUBRIC)
    with pytest.raises(InputError, match=r"X\.9"):
        p0_from_iedr({**IEDR_ZERO, "X.9": 1}, EMPATHY_RUBRIC)


level_rows = st.tuples(
    *[st.sampled_from(EMPATHY_RUBRIC.mdep[m].levels) for m in range(len(EMPATHY_RUBRIC.mdep))]
)


@given(st.lists(level_rows, min_size=1, max_size=20))
def test_vectorised_action_vectors_match_the_scalar_helper(rows: list[tuple[int, ...]]) -> None:
    keys = [i.key for i in EMPATHY_RUBRIC.mdep]
    expected = [action_vector(dict(zip(keys, r, strict=True)), EMPATHY_RUBRIC) for r in rows]
    got = action_vectors(np.asarray(rows), EMPATHY_RUBRIC)
    assert np.array_equal(got, np.asarray(expected))
    assert np.all(got[:, 0] >= -4) and np.all(got[:, 1:] >= -5) and np.all(got <= 3)


def test_vectorised_rejects_out_of_range() -> None:
    rows = np.zeros((3, 6), dtype=np.int64)
    rows[2, 1] = 5
    with pytest.raises(InputError, match=r"C\.Neg"):
        action_vectors(rows, EMPATHY_RUBRIC)


def test_rubric_rejects_indicator_on_unknown_axis() -> None:
    with pytest.raises(ValueError, match="unknown axis"):
        Rubric(
            name="bad",
            axes=(Axis(key="X", name="x"),),
            iedr=(Indicator(key="Y.1", axis="Y", name="y", kind="deficit", scores={0: 0}),),
            mdep=(),
        )


def test_negative_keys_follow_the_rubric_they_are_asked_of() -> None:
    """The MDEP negative indicators, read from the rubric itself (no cache to go stale)."""
    assert EMPATHY_RUBRIC.negative_keys == {"C.Neg", "A.Neg", "P.Neg"}
    fewer = EMPATHY_RUBRIC.model_copy(
        update={"mdep": tuple(i for i in EMPATHY_RUBRIC.mdep if i.key != "A.Neg")}
    )
    assert fewer.negative_keys == {"C.Neg", "P.Neg"}
    assert EMPATHY_RUBRIC.negative_keys == {"C.Neg", "A.Neg", "P.Neg"}
