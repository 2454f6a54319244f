"""`__all__` of every empathos.rl module names exactly its public, existing attributes."""

from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = [
    "empathos.rl",
    "empathos.rl.advantages",
    "empathos.rl.batch",
    "empathos.rl.compare",
    "empathos.rl.kl",
    "empathos.rl.loss",
    "empathos.rl.returns",
    "empathos.rl.rewards",
    "empathos.rl.sim",
    "empathos.rl.tokens",
    "empathos.rl.trainer",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_honest(name: str) -> None:
    mod = importlib.import_module(name)
    exported = set(mod.__all__)
    assert all(hasattr(mod, n) for n in exported)
    defined_here = {
        n
        for n, obj in vars(mod).items()
        if not n.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and getattr(obj, "__module__", None) == name
    }
    assert defined_here <= exported, defined_here - exported


def test_estimator_core_imports_no_io_layers() -> None:
    """The estimator core stays pure: no sandbox, llm, bench or cli imports."""
    import sys

    for mod in ("empathos.rl.advantages", "empathos.rl.returns", "empathos.rl.tokens"):
        importlib.import_module(mod)
    src = "".join(
        inspect.getsource(importlib.import_module(m))
        for m in (
            "empathos.rl.advantages",
            "empathos.rl.returns",
            "empathos.rl.tokens",
            "empathos.rl.batch",
            "empathos.rl._ops",
            "empathos.rl.rewards",
            "empathos.rl.kl",
        )
    )
    for layer in ("empathos.sandbox", "empathos.llm", "empathos.bench", "empathos.cli", "print("):
        assert layer not in src
    assert "empathos.rl" in sys.modules
