"""The bundled scenarios: valid, varied, covering every label, with a stored IEDR."""

from __future__ import annotations

from collections import Counter

import pytest

from empathos.rubric import EMPATHY_RUBRIC
from empathos.rubric import p0_from_iedr as rubric_p0
from empathos.scenarios import (
    DEFAULT_BUILTIN_IDS,
    Axis,
    Domain,
    Scenario,
    Threshold,
    builtin_path,
    load_builtin,
    select,
)


@pytest.fixture(scope="module")
def builtin() -> list[Scenario]:
    result = load_builtin()
    assert [e.line() for e in result.errors] == []
    return result.scenarios


def test_counts_per_language(builtin: list[Scenario]) -> None:
    langs = Counter(s.labels.language for s in builtin)
    assert langs["en"] >= 12
    assert langs["zh"] >= 6


@pytest.mark.parametrize("language", ["en", "zh"])
def test_each_language_covers_every_label(builtin: list[Scenario], language: str) -> None:
    labels = [s.resolved_labels() for s in builtin if s.labels.language == language]
    assert {lab.domain for lab in labels} == set(Domain)
    assert {lab.dominant_axis for lab in labels} == set(Axis)
    assert {lab.threshold for lab in labels} == set(Threshold)
    assert all(lab.difficulty is not None for lab in labels)


def test_stored_iedr_gives_p0(builtin: list[Scenario]) -> None:
    for s in builtin:
        assert s.iedr is not None, s.id
        p0 = s.initial_state()
        assert p0 is not None
        assert list(p0) == list(rubric_p0(s.iedr, EMPATHY_RUBRIC))
        assert all(x < 0 for x in p0), s.id


def test_stored_iedr_priorities_follow_the_card(builtin: list[Scenario]) -> None:
    """The IEDR priority indicators (C.3, A.3, P.3) agree with the card: high >= 2, low <= 1."""
    for s in builtin:
        assert s.iedr is not None
        for axis in Axis:
            level = s.iedr[f"{axis.key}.3"]
            wanted = s.persona.priorities.level(axis).value
            assert (level >= 2) if wanted == "high" else (level <= 2), (s.id, axis, level)
            if wanted == "low":
                assert level <= 1, (s.id, axis, level)


def test_files_are_named_by_id_and_hashes_differ(builtin: list[Scenario]) -> None:
    root = builtin_path()
    for s in builtin:
        assert s.source.kind == "builtin"
        assert (root / s.labels.language / f"{s.id}.yaml").is_file(), s.id
    assert len({s.scenario_hash() for s in builtin}) == len(builtin)


def test_default_pair_is_english_and_light(builtin: list[Scenario]) -> None:
    pair = select(builtin, list(DEFAULT_BUILTIN_IDS))
    assert len(pair) == 2
    assert {s.labels.language for s in pair} == {"en"}
    assert len({s.resolved_labels().dominant_axis for s in pair}) == 2
    for s in pair:
        norm = s.resolved_labels().p0_norm
        assert norm is not None and norm <= 27
