"""The benchmark registry: every benchmark is one module behind the protocol, found by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_helpers import ScriptedServer, cli, last_user, ratings_text, write_eq_questions
from pydantic import TypeAdapter, ValidationError

from empathos.bench.protocol import REGISTRY, benchmark, registered
from empathos.bench.record import BenchName
from empathos.errors import ConfigError
from empathos.run.manifest import MANIFEST_NAME


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


def test_a_record_takes_exactly_the_registered_names() -> None:
    names = TypeAdapter(BenchName)
    for name in REGISTRY:
        assert names.validate_python(name) == name
    with pytest.raises(ValidationError, match="is not a benchmark"):
        names.validate_python("nosuch")


def test_a_bench_directory_naming_an_unregistered_benchmark_is_named_and_skipped(
    tmp_path: Path,
) -> None:
    write_eq_questions(tmp_path)
    out = tmp_path / "run"
    with ScriptedServer(lambda body: ratings_text(last_user(body).split(":")[0][9:], 0)) as server:
        ran = cli("bench", "eqbench", "--data", tmp_path, "--model", "m", "--base-url",
                  server.url, "--out", out)  # fmt: skip
    assert ran.exit_code == 0, ran.error
    assert cli("bench", "score", out).exit_code == 0
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["bench"]["name"] = "nosuch"  # a benchmark this installation does not have
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    score = cli("bench", "score", out)
    assert score.exit_code == 1
    assert "'nosuch', which is not registered (one of emobench" in " ".join(score.stderr.split())
    assert MANIFEST_NAME in score.stderr


def test_an_unknown_benchmark_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="is not a benchmark"):
        benchmark("nosuch")
