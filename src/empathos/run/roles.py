"""Build the role models of a run from its resolved config, once, before any dialogue starts.

A scripted role may name its reply handler in the config (``handler: module:function`` or
``handler: path/to/file.py:function``); it is imported here, so a bad name fails at start with
one line naming the role.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from empathos.errors import ConfigError
from empathos.llm import ModelClient, ResponseCache, build_model
from empathos.llm.scripted import Handler
from empathos.run.config import REQUIRED_ROLES, RunConfig
from empathos.sandbox.config import Roles

__all__ = ["CLIENT_ROLE", "build_roles", "check_api_keys", "check_handlers", "load_handler"]

# Config role name -> the role name recorded with each call.
CLIENT_ROLE = {
    "user": "user",
    "director": "director",
    "judge": "judge",
    "model_under_test": "tested",
}


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


def _handler(config: RunConfig, name: str) -> Handler | None:
    endpoint = config.role(name)
    if endpoint.handler is None:
        return None
    if endpoint.kind != "scripted":
        raise ConfigError("handler is only used with kind: scripted", field=f"roles.{name}")
    return load_handler(endpoint.handler, name)


def check_handlers(config: RunConfig) -> None:
    """Import every configured handler now, so a bad one fails before anything is written."""
    for name in CLIENT_ROLE:
        _handler(config, name)


def build_roles(config: RunConfig, cache: ResponseCache | None) -> tuple[Roles, list[ModelClient]]:
    """The sandbox's role bundle and the clients to close at the end.

    The director's model is left out when the director mode is 'rules'."""
    clients: dict[str, ModelClient] = {}
    for name, role in CLIENT_ROLE.items():
        if name == "director" and config.director_mode == "rules":
            continue
        handler = _handler(config, name)
        clients[name] = build_model(config.role(name), role, cache, handler=handler)
    roles = Roles(
        user=clients["user"],
        judge=clients["judge"],
        director=clients.get("director"),
        tested=clients["model_under_test"],
    )
    return roles, list(clients.values())


def check_api_keys(config: RunConfig, environ: Mapping[str, str] | None = None) -> None:
    """Fail at once, naming the role and the variable (never the key), if a key is unset."""
    env = os.environ if environ is None else environ
    for role in REQUIRED_ROLES:
        endpoint = config.role(role)
        if endpoint.api_key_env and not env.get(endpoint.api_key_env):
            raise ConfigError(
                f"environment variable {endpoint.api_key_env} (the API key of role {role}) "
                "is not set",
                field=f"roles.{role}.api_key_env",
            )
