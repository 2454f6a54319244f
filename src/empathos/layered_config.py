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

import difflib
import math
import os
import types
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from empathos.errors import ConfigError

__all__ = [
    "ConfigLayers",
    "closest",
    "flag_name",
    "load_layers",
    "merge",
    "read_yaml",
    "set_dotted",
    "tree_from_dotted",
    "unknown_key",
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


def closest(word: str, choices: list[str] | tuple[str, ...] | Any) -> str | None:
    """The valid name ``word`` most resembles (None: none is close)."""
    names = [str(c) for c in choices]
    found = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    if not found:  # a case or separator slip: TEMPERATURE, top-p
        folded = {n.lower().replace("-", "_"): n for n in names}
        found = [folded[k] for k in (word.lower().replace("-", "_"),) if k in folded]
    return found[0] if found else None


def _models(annotation: Any) -> Iterator[tuple[str, type[BaseModel]]]:
    """The models a field's value may be: ("", M) for M itself, ("*", M) for the values of a
    mapping of M, ("[]", M) for the items of a list of M."""
    origin = get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield "", annotation
    elif origin in (Union, types.UnionType):
        for arg in get_args(annotation):
            yield from _models(arg)
    elif origin in (dict, Mapping) and len(get_args(annotation)) == 2:
        for how, model in _models(get_args(annotation)[1]):
            if how == "":
                yield "*", model
    elif origin in (list, tuple) and get_args(annotation):
        for how, model in _models(get_args(annotation)[0]):
            if how == "":
                yield "[]", model


def _names(model: type[BaseModel]) -> list[str]:
    names = list(model.model_fields)
    names += [f.alias for f in model.model_fields.values() if f.alias]
    return names


def unknown_key(model: type[BaseModel], data: Any, loc: str = "") -> tuple[str, str] | None:
    """The first key of ``data`` that ``model`` (a schema forbidding extra keys) has no field
    for, as (its dotted location, the problem naming the closest valid key); None: none."""
    if not isinstance(data, Mapping):
        return None
    names = _names(model)
    forbids = model.model_config.get("extra") == "forbid"
    for key, value in data.items():
        where = f"{loc}.{key}" if loc else str(key)
        if key not in names:
            if not forbids:
                continue
            near = closest(str(key), model.model_fields)
            hint = (
                f"did you mean {near!r}?"
                if near
                else f"the keys are {', '.join(model.model_fields)}"
            )
            return where, f"unknown key {key!r} ({hint})"
        info = model.model_fields.get(str(key))
        if info is None:
            continue
        for how, inner in _models(info.annotation):
            found = _inner(how, inner, value, where)
            if found is not None:
                return found
    return None


def _inner(how: str, model: type[BaseModel], value: Any, where: str) -> tuple[str, str] | None:
    if how == "":
        return unknown_key(model, value, where)
    if how == "*" and isinstance(value, Mapping):
        for k, v in value.items():
            if (found := unknown_key(model, v, f"{where}.{k}")) is not None:
                return found
    if how == "[]" and isinstance(value, list):
        for v in value:
            if (found := unknown_key(model, v, where)) is not None:
                return found
    return None


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
            _near_miss(name, prefix, parts[0], fields)
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


def _near_miss(name: str, prefix: str, key: str, fields: Collection[str]) -> None:
    """Refuse a variable that is a typo of a field's (``EMPATHOS_TRIALZ``); one that
    resembles none is another part's (``EMPATHOS_CACHE_DIR``) and is left alone."""
    near = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.8)
    if near:
        raise ConfigError(
            f"unknown setting {key!r} (did you mean {prefix}{near[0].upper()}?)",
            field=f"{name} (environment)",
        )


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
        nearest enclosing field that one of them set, or the one variable or flag below it
        when the file does not hold it: ``EMPATHOS_ROLES__JUGE__MODEL`` for ``roles.juge``)."""
        prefixes = [loc]
        while "." in prefixes[-1]:
            prefixes.append(prefixes[-1].rsplit(".", 1)[0])
        for key in prefixes:
            if key in self.flag_keys:
                return ConfigError(problem, field=self.flag_names.get(key) or flag_name(key))
            if key in self.env_names:
                return ConfigError(problem, field=f"{self.env_names[key]} (environment)")
        if loc and not _holds(self.file_data, loc):
            below = sorted(k for k in self.flag_keys if k.startswith(loc + "."))
            if below:
                return ConfigError(
                    problem, field=self.flag_names.get(below[0]) or flag_name(below[0])
                )
            env = sorted(v for k, v in self.env_names.items() if k.startswith(loc + "."))
            if env:
                return ConfigError(problem, field=f"{env[0]} (environment)")
        return ConfigError(problem, file=self.file, field=loc or None)

    def validate(self, schema: type[M], data: Mapping[str, Any] | None = None) -> M:
        """The schema validated from the merged data (or ``data``), errors named by source:
        a misspelled key first (with the closest valid key), then pydantic's first error,
        without its "Value error," prefix."""
        data = self.data if data is None else data
        unknown = unknown_key(schema, data)
        if unknown is not None:
            raise self.error(*unknown)
        try:
            return schema.model_validate(data)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(x) for x in first["loc"] if not isinstance(x, int))
            raise self.error(loc, _message(first)) from None


def _holds(tree: Mapping[str, Any], dotted: str) -> bool:
    node: Any = tree
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _message(error: Mapping[str, Any]) -> str:
    """pydantic's message without its library prefixes; a number that is not finite says so."""
    msg = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    value = error.get("input")
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value}"
    return msg


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
