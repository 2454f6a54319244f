"""The configuration of ``empathos validate``: the judge and the second judge's endpoints.

A YAML file (``--config``) holds ``judge:`` and, for agreement, ``judge_b:`` (each an endpoint
as in ``docs/models.md``); ``EMPATHOS_VALIDATE_<FIELD>`` variables (nested with ``__``:
``EMPATHOS_VALIDATE_JUDGE__MODEL``) override it, and the ``--judge-*`` / ``--judge-b-*``
flags override both (:mod:`empathos.layered_config`). A judge given no kind is ``openai``
when it has a base URL, else the bundled offline model; with no judge at all, the offline one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from empathos.layered_config import ConfigLayers, closest, load_layers
from empathos.llm.roles import RoleEndpoint

__all__ = ["ValidateConfig", "load_judge", "load_validate_config"]

# The offline judge's per-field output cap (as the offline default run uses).
OFFLINE_MAX_TOKENS = 12
ENV_PREFIX = "EMPATHOS_VALIDATE_"
_SECTIONS = ("judge", "judge_b")


class ValidateConfig(BaseModel):
    """The judges ``empathos validate`` re-rates with."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    judge: RoleEndpoint = Field(
        default_factory=lambda: RoleEndpoint(kind="offline", max_tokens=OFFLINE_MAX_TOKENS),
        description="The judge whose ratings are validated (default: the bundled model).",
    )
    judge_b: RoleEndpoint | None = Field(
        None, description="A second judge for the agreement study; None: no agreement."
    )


def _flag_tree(cli: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The --judge-* and --judge-b-* flags as a tree, and the flag of each field."""
    tree: dict[str, Any] = {}
    names: dict[str, str] = {}
    for section in _SECTIONS:
        flag = "--" + section.replace("_", "-")
        values = {f: cli.get(f"{section}_{f}") for f in ("model", "base_url", "api_key_env")}
        if values["base_url"] is not None:
            values["kind"] = "openai"
        tree[section] = values
        for f in ("model", "base_url", "api_key_env"):
            names[f"{section}.{f}"] = f"{flag}-{f.replace('_', '-')}"
        names[f"{section}.kind"] = f"{flag}-base-url"
        names[section] = f"{flag}-* flags"
    return tree, names


def _with_kind(layers: ConfigLayers, section: str) -> dict[str, Any] | None:
    raw = layers.data.get(section)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise layers.error(section, "expected a mapping (an endpoint)")
    endpoint = dict(raw)
    endpoint.setdefault("kind", "openai" if endpoint.get("base_url") else "offline")
    if endpoint["kind"] == "offline":
        endpoint.setdefault("max_tokens", OFFLINE_MAX_TOKENS)
    return endpoint


def _layers(
    path: Path | None, cli: Mapping[str, Any], environ: Mapping[str, str] | None, prefix: str
) -> ConfigLayers:
    flags, names = _flag_tree(cli)
    layers = load_layers(
        ValidateConfig,
        path=path,
        env_prefix=prefix,
        environ=environ,
        flags=flags,
        flag_names=names,
    )
    unknown = sorted(set(layers.data) - set(_SECTIONS))
    if unknown:
        near = closest(unknown[0], _SECTIONS)
        hint = f"did you mean {near!r}?" if near else "use judge:, judge_b:"
        raise layers.error(unknown[0], f"unknown key {unknown[0]!r} ({hint})")
    return layers


def load_validate_config(
    path: Path | None, cli: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> ValidateConfig:
    """The judges from the YAML file, the environment and the flags (None: not given)."""
    layers = _layers(path, cli, environ, ENV_PREFIX)
    data = {s: e for s in _SECTIONS if (e := _with_kind(layers, s)) is not None}
    return layers.validate(ValidateConfig, data)


def load_judge(
    path: Path | None,
    cli: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
    env_prefix: str = "EMPATHOS_REJUDGE_",
) -> RoleEndpoint | None:
    """The ``judge:`` of the YAML file, ``<env_prefix>JUDGE__*`` variables and the
    ``--judge-*`` flags, layered as :func:`load_validate_config` layers them; None when none
    of them names a judge (``empathos rejudge`` then re-rates with the run's own)."""
    layers = _layers(path, cli, environ, env_prefix)
    judge = _with_kind(layers, "judge")
    if judge is None:
        return None
    return layers.validate(ValidateConfig, {"judge": judge}).judge
