"""The benchmark registry: every benchmark is one module behind the protocol, found by name."""

from __future__ import annotations

import pytest

from empathos.bench.protocol import REGISTRY, benchmark, registered
from empathos.bench.record import BenchName
from empathos.errors import ConfigError
from empathos.run.manifest import BenchInfo


def test_each_registered_benchmark_answers_to_its_name_and_keeps_to_the_protocol() -> None:
    names = list(REGISTRY)
    assert names == ["emobench", "eqbench", "eqbench3", "sage"]
    for name, bench in zip(names, registered(), strict=True):
        assert bench.name == name
        assert benchmark(name) is bench  # loaded once
        assert bench.roles[0] == "model_under_test"
        assert set(bench.roles[1:]) <= {"judge", "user"}
        assert bench.protocols and bench.differences and bench.note
        assert set(bench.warn_offline) <= set(bench.roles[1:])


def test_the_schemas_name_exactly_the_registered_benchmarks() -> None:
    literal = set(BenchName.__args__)  # type: ignore[attr-defined]
    assert literal == set(REGISTRY)
    assert set(BenchInfo.model_fields["name"].annotation.__args__) == set(REGISTRY)  # type: ignore[union-attr]


def test_an_unknown_benchmark_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="is not a benchmark"):
        benchmark("nosuch")
