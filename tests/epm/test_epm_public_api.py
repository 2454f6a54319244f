"""The EPM core stays pure (its ``__all__`` lists are checked in tests/test_public_api.py)."""

from __future__ import annotations

import importlib


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
