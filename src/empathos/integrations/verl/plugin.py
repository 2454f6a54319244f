"""The verl plugin: registers empathos's estimators and agent loop in every verl process, lazily.

verl 0.9 loads the ``verl.plugins`` entry points of the installed packages on ``import verl``
(``VERL_USE_EXTERNAL_PLUGINS``, default ``auto``); empathos declares this module there
(``pyproject.toml``). Every verl process imports verl (FSDP and rollout workers included), and
most of them never run our agent loop, so this module imports nothing heavy: it only asks to be
told when verl imports the two registries we fill, and fills each right after its module runs:

- ``verl.trainer.ppo.core_algos``: the estimators (``mapo_dialogue``, ``mapo_turn_only``,
  ``mapo_batch_only``, ... :func:`.estimator.register_estimators`), for the trainer process;
- ``verl.experimental.agent_loop.agent_loop``: the entry ``empathos_dialogue`` of its agent
  loop registry, as verl's ``register`` writes it (the class's import path): verl's agent loop
  workers import :mod:`.agent_loop` (the sandbox, the role clients) when they instantiate it.

A registry module that is already imported is filled at once. Where entry points are disabled,
name this module in ``VERL_USE_EXTERNAL_MODULES`` instead. verl swallows a plugin's import error
(it logs it at debug level), so a failure to register is logged here as one warning line.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import logging
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from empathos.integrations.verl.names import AGENT_NAME, AGENT_TARGET

__all__ = ["AGENT_NAME", "AGENT_TARGET", "install"]

_CORE_ALGOS = "verl.trainer.ppo.core_algos"
_AGENT_LOOP = "verl.experimental.agent_loop.agent_loop"
_log = logging.getLogger(__name__)


def _register_estimators(_module: ModuleType) -> None:
    from empathos.integrations.verl.estimator import register_estimators

    register_estimators()


def _register_agent_loop(module: ModuleType) -> None:
    module._agent_loop_registry.setdefault(AGENT_NAME, {"_target_": AGENT_TARGET})


_ACTIONS: dict[str, Callable[[ModuleType], None]] = {
    _CORE_ALGOS: _register_estimators,
    _AGENT_LOOP: _register_agent_loop,
}


def _run(name: str, module: ModuleType) -> None:
    try:
        _ACTIONS[name](module)
    except Exception as exc:  # verl would hide it: say it once, in one line
        _log.warning("empathos: nothing registered in %s: %s", name, exc)


class _Loader(importlib.abc.Loader):
    """The module's own loader, then the registration."""

    def __init__(self, name: str, loader: Any) -> None:
        self.name, self.loader = name, loader

    def __getattr__(self, attr: str) -> Any:  # get_source, get_filename, ... of the real one
        return getattr(self.loader, attr)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self.loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        _run(self.name, module)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds the registry modules with the other finders, wrapping their loader."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _ACTIONS:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec: importlib.machinery.ModuleSpec | None = find(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(fullname, spec.loader)
                return spec
        return None


def install() -> None:
    """Fill the registries already imported; be told of the others (idempotent)."""
    for name in _ACTIONS:
        if name in sys.modules:
            _run(name, sys.modules[name])
    if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


install()
