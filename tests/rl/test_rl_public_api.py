"""The estimator core of empathos.rl stays pure (`__all__` lists: tests/test_public_api.py)."""

from __future__ import annotations

import importlib
import inspect


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
    for layer in ("empathos.sandbox", "empathos.llm", "empathos.scoring", "empathos.cli", "print("):
        assert layer not in src
    assert "empathos.rl" in sys.modules
