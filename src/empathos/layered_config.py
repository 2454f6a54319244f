"""One loader for every command's configuration: defaults < YAML file < environment < flags.

``empathos run``, ``train``, ``distill`` and ``validate`` each keep their own typed schema (a
pydantic model) and load it through :func:`load_layers`: the YAML file (``--config``), then
environment variables ``<PREFIX><FIELD>`` (nested with ``__``: ``EMPATHOS_ROLES__JUDGE__MODEL``),
then the command's flags. Every problem becomes one :class:`~empathos.errors.ConfigError`
naming where the bad value came from: the flag, the variable, or the file and field.

The layers are merged here rather than by ``pydantic-settings``: its sources merge before
validation, so an error could no longer say which layer set the bad value.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from empathos.errors import ConfigError

__all__ = [
    "ConfigLayers",
    "flag_name",
    "load_layers",
    "merge",
    "read_yaml",
    "set_dotted",
    "tree_from_dotted",
]

M = TypeVar("M", bound=BaseModel)


def read_yaml(path: Path) -> dict[str, Any]:
    """The mapping in a YAML file ({} for an empty file); one ConfigError naming the file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {' '.join(str(exc).split())}", file=path) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping, got {type(data).__name__}", file=path)
    return data


def set_dotted(tree: dict[str, Any], parts: list[str], value: Any) -> None:
    """Set ``tree[a][b][c] = value`` for ``parts == [a, b, c]``, making the mappings on the way."""
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def tree_from_dotted(values: Mapping[str, Any]) -> dict[str, Any]:
    """``{"rollout.max_turns": 3}`` -> ``{"rollout": {"max_turns": 3}}``; None values are left
    out (a flag that was not given)."""
    tree: dict[str, Any] = {}
    for key, value in values.items():
        if value is not None:
            set_dotted(tree, key.split("."), value)
    return tree


def merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, mappings merged key by key."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def _dotted_keys(tree: Mapping[str, Any], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for key, value in tree.items():
        path = f"{prefix}{key}"
        keys.add(path)
        if isinstance(value, Mapping):
            keys |= _dotted_keys(value, path + ".")
    return keys


def flag_name(dotted: str) -> str:
    """The flag a dotted field is set by, unless the command says otherwise:
    ``rollout.max_turns`` -> ``--rollout-max-turns``."""
    return "--" + dotted.replace("_", "-").replace(".", "-")


def _env_layer(
    environ: Mapping[str, str], prefix: str, fields: Collection[str], list_fields: Collection[str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """``<prefix><FIELD>`` variables that name a field of the schema (others are left alone:
    ``EMPATHOS_CACHE_DIR`` belongs to another part of the package). Values are read as YAML
    scalars; a mapping or list stays the raw text unless the field takes a list."""
    layer: dict[str, Any] = {}
    names: dict[str, str] = {}
    for name, raw in sorted(environ.items()):
        if not name.startswith(prefix):
            continue
        parts = name[len(prefix) :].lower().split("__")
        if parts[0] not in fields:
            continue
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            value = raw
        if isinstance(value, dict | list) and parts[0] not in list_fields:
            value = raw
        set_dotted(layer, parts, value)
        names[".".join(parts)] = name
    return layer, names


@dataclass
class ConfigLayers:
    """The merged layers of one command's config, and which layer set each dotted field."""

    data: dict[str, Any]
    file: Path | None = None
    file_data: dict[str, Any] = field(default_factory=dict)
    env_names: dict[str, str] = field(default_factory=dict)
    flag_keys: set[str] = field(default_factory=set)
    flag_names: Mapping[str, str] = field(default_factory=dict)

    def from_flag(self, dotted: str) -> bool:
        """True when a flag set this field."""
        return dotted in self.flag_keys

    def error(self, loc: str, problem: str) -> ConfigError:
        """A ConfigError naming the flag, variable or file field that set ``loc`` (or the
        nearest enclosing field that one of them set)."""
        prefixes = [loc]
        while "." in prefixes[-1]:
            prefixes.append(prefixes[-1].rsplit(".", 1)[0])
        for key in prefixes:
            if key in self.flag_keys:
                return ConfigError(problem, field=self.flag_names.get(key) or flag_name(key))
            if key in self.env_names:
                return ConfigError(problem, field=f"{self.env_names[key]} (environment)")
        return ConfigError(problem, file=self.file, field=loc or None)

    def validate(self, schema: type[M], data: Mapping[str, Any] | None = None) -> M:
        """The schema validated from the merged data (or ``data``), errors named by source."""
        try:
            return schema.model_validate(self.data if data is None else data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(x) for x in first["loc"] if not isinstance(x, int))
            raise self.error(loc, first["msg"]) from None


def load_layers(
    schema: type[BaseModel],
    *,
    path: Path | None = None,
    env_prefix: str | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    flag_names: Mapping[str, str] | None = None,
    list_fields: Collection[str] = (),
) -> ConfigLayers:
    """The file, environment and flag layers of ``schema``'s config, merged, not validated.

    ``flags`` is a tree of the values the command's flags gave (None: not given, left out);
    ``flag_names`` maps a dotted field to the flag that sets it, for messages (default:
    :func:`flag_name`). ``env_prefix`` None: no environment layer."""
    file_data = read_yaml(path) if path is not None else {}
    env_data: dict[str, Any] = {}
    env_names: dict[str, str] = {}
    if env_prefix is not None:
        env = os.environ if environ is None else environ
        env_data, env_names = _env_layer(env, env_prefix, schema.model_fields, list_fields)
    flag_tree = _drop_none(flags or {})
    return ConfigLayers(
        data=merge(merge(file_data, env_data), flag_tree),
        file=path,
        file_data=file_data,
        env_names=env_names,
        flag_keys=_dotted_keys(flag_tree),
        flag_names=dict(flag_names or {}),
    )


def _drop_none(tree: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, Mapping):
            inner = _drop_none(value)
            if inner:
                out[key] = inner
        elif value is not None:
            out[key] = value
    return out
