"""`__all__` of every empathos.llm module lists exactly its public definitions."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import empathos.llm


def test_all_is_honest() -> None:
    for info in pkgutil.iter_modules(empathos.llm.__path__, "empathos.llm."):
        module = importlib.import_module(info.name)
        exported = set(module.__all__)
        assert all(hasattr(module, name) for name in exported), info.name
        defined = {
            name
            for name, obj in vars(module).items()
            if not name.startswith("_")
            and (inspect.isclass(obj) or inspect.isfunction(obj))
            and obj.__module__ == module.__name__
        }
        assert defined <= exported, (info.name, sorted(defined - exported))
    package = set(empathos.llm.__all__)
    assert all(hasattr(empathos.llm, name) for name in package)
