"""A role's endpoint as configs name it, and the scripted reply handler it may name.

Shared by every command that builds role models from a config (``run``, ``train``,
``distill``, ``validate``, the verl adapter). A scripted role may name its reply handler
(``handler: module:function`` or ``handler: path/to/file.py:function``); :func:`load_handler`
imports it, so a bad name fails at start with one line naming the role.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, cast

from pydantic import Field

from empathos.errors import ConfigError
from empathos.llm.config import EndpointConfig
from empathos.llm.scripted import Handler

__all__ = ["RoleEndpoint", "load_handler"]


class RoleEndpoint(EndpointConfig):
    """One role's endpoint (see :class:`~empathos.llm.EndpointConfig`) plus a scripted handler."""

    handler: str | None = Field(
        None,
        description="kind 'scripted' only: the reply handler as 'package.module:function' or "
        "'path/to/file.py:function' (a function ChatRequest -> reply, see "
        "empathos.llm.scripted). None: auto_reply.",
    )

    @classmethod
    def _default_model_id(cls, kind: str, data: dict[str, Any]) -> str:
        """A scripted role given without a model id is recorded under its handler's name."""
        if kind != "scripted":
            return super()._default_model_id(kind, data)
        handler = data.get("handler")
        name = str(handler).rpartition(":")[2] if handler else "auto_reply"
        return f"scripted:{name or 'handler'}"


def _import_file(path: Path, role: str) -> object:
    name = f"_empathos_handler_{role}_{abs(hash(path.resolve()))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot import {path}", field=f"roles.{role}.handler")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise ConfigError(
            f"importing {path} failed: {type(exc).__name__}: {exc}", field=f"roles.{role}.handler"
        ) from None
    return module


def load_handler(spec: str, role: str) -> Handler:
    """The scripted reply handler named ``module:function`` or ``file.py:function``."""
    where = f"roles.{role}.handler"
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise ConfigError(
            f"expected 'module:function' or 'file.py:function', got {spec!r}", field=where
        )
    module: object
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise ConfigError(f"no such file {target}", field=where)
        module = _import_file(path, role)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise ConfigError(f"cannot import {target}: {exc}", field=where) from None
    handler = getattr(module, attr, None)
    if not callable(handler):
        raise ConfigError(f"{target} has no function {attr!r}", field=where)
    return cast(Handler, handler)
