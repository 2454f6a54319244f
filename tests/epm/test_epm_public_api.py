"""Every name in the public ``__all__`` lists of this area exists (keeps the lists honest)."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "empathos.epm", "empathos.epm.config", "empathos.epm.dynamics", "empathos.epm.metrics",
    "empathos.epm.state", "empathos.epm.termination", "empathos.rubric", "empathos.rubric.model",
    "empathos.rubric.empathy", "empathos.records", "empathos.records.model",
    "empathos.records.io", "empathos.records.published", "empathos.records.build",
    "empathos.records.schema", "empathos.bench.leaderboard", "empathos.bench.replay",
    "empathos.report", "empathos.report.tables", "empathos.examples", "empathos.cli.score",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist_and_are_unique(name: str) -> None:
    mod = importlib.import_module(name)
    names = list(mod.__all__)
    assert len(names) == len(set(names))
    missing = [n for n in names if not hasattr(mod, n)]
    assert not missing, f"{name}.__all__ lists missing names {missing}"


def test_epm_core_imports_nothing_of_the_shell() -> None:
    import ast
    from pathlib import Path

    root = Path(importlib.import_module("empathos.epm").__file__ or "").parent
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                mod = node.module
                assert not mod.startswith("empathos.") or mod.startswith(
                    ("empathos.epm", "empathos.errors")
                ), f"{path.name} imports {mod}"
