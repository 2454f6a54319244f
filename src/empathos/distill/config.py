"""The configuration of ``empathos distill``: the distiller and judge roles, and batch options.

A YAML file (``--config``) may hold ``roles: {distiller: ..., judge: ...}`` (each an endpoint
as in ``docs/models.md``, with ``handler: module:function`` for ``kind: scripted``) and the
options below. The flags ``--model``, ``--base-url`` and ``--api-key-env`` set the distiller
(``--base-url`` makes it ``kind: openai``). The judge defaults to the distiller's endpoint;
with neither given both run on the bundled offline model with small output caps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empathos.distill.checks import DUPLICATE_SIMILARITY
from empathos.errors import ConfigError
from empathos.llm import ModelClient, ResponseCache, build_model
from empathos.llm.roles import RoleEndpoint, load_handler

__all__ = ["DistillConfig", "DistillRoles", "build_distill_model", "load_distill_config"]

# Offline caps (tokens per free-text field of a structured answer): SmolLM2-135M is slow on CPU.
_OFFLINE_MAX_TOKENS = {"distiller": 8, "judge": 6}


class DistillRoles(BaseModel):
    """The endpoints ``empathos distill`` uses."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    distiller: RoleEndpoint | None = Field(None, description="Extracts and writes scenarios.")
    judge: RoleEndpoint | None = Field(
        None, description="Rates the IEDR of each scenario. None: the distiller's endpoint."
    )


class DistillConfig(BaseModel):
    """Everything a distill batch runs with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    roles: DistillRoles = Field(default_factory=DistillRoles, description="Endpoints.")
    concurrency: int = Field(4, ge=1, le=1024, description="Model calls in flight at once.")
    keep_source: bool = Field(False, description="Store each source conversation in the state.")
    id_prefix: str = Field(
        "distilled-", pattern=r"^[A-Za-z0-9_.\-]*$", description="Prefix of scenario ids."
    )
    duplicate_similarity: float = Field(
        DUPLICATE_SIMILARITY, ge=0, le=100, description="Near-duplicate cut-off (0-100)."
    )

    def endpoint(self, role: str) -> RoleEndpoint:
        """The resolved endpoint of 'distiller' or 'judge'."""
        distiller = self.roles.distiller or RoleEndpoint(
            kind="offline", max_tokens=_OFFLINE_MAX_TOKENS["distiller"]
        )
        if role == "distiller":
            return distiller
        if self.roles.judge is not None:
            return self.roles.judge
        if distiller.kind == "offline":
            return RoleEndpoint(kind="offline", max_tokens=_OFFLINE_MAX_TOKENS["judge"])
        return distiller


def load_distill_config(path: Path | None, cli: dict[str, Any]) -> DistillConfig:
    """The config from the YAML file (optional) and the CLI values (None: not given)."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read: {' '.join(str(exc).split())}", file=path) from None
        if raw is not None and not isinstance(raw, dict):
            raise ConfigError("expected a mapping", file=path)
        data = dict(raw or {})
    for key in ("concurrency", "keep_source", "id_prefix", "duplicate_similarity"):
        if cli.get(key) is not None:
            data[key] = cli[key]
    flags = {k: cli.get(k) for k in ("model", "base_url", "api_key_env")}
    if any(v is not None for v in flags.values()):
        roles = dict(data.get("roles") or {})
        dist = dict(roles.get("distiller") or {})
        if flags["base_url"] is not None:
            dist["kind"] = "openai"
            dist["base_url"] = flags["base_url"]
            if flags["model"] is None and "model" not in dist:
                raise ConfigError(
                    "needs --model (the model id at that endpoint)", field="--base-url"
                )
        if flags["model"] is not None:
            dist["model"] = flags["model"]
        if flags["api_key_env"] is not None:
            dist["api_key_env"] = flags["api_key_env"]
        roles["distiller"] = dist
        data["roles"] = roles
    try:
        return DistillConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"] if not isinstance(x, int))
        raise ConfigError(first["msg"], file=path, field=loc or None) from None


def build_distill_model(
    config: DistillConfig, role: str, cache: ResponseCache | None = None
) -> ModelClient:
    """The client of 'distiller' or 'judge' (a scripted handler is imported here)."""
    endpoint = config.endpoint(role)
    handler = None
    if endpoint.handler is not None:
        if endpoint.kind != "scripted":
            raise ConfigError("handler is only used with kind: scripted", field=f"roles.{role}")
        handler = load_handler(endpoint.handler, role)
    return build_model(endpoint, role, cache if endpoint.cache else None, handler=handler)
