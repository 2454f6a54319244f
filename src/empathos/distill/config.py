"""The configuration of ``empathos distill``: the distiller and judge roles, and batch options.

A YAML file (``--config``) may hold ``roles: {distiller: ..., judge: ...}`` (each an endpoint
as in ``docs/models.md``, with ``handler: module:function`` for ``kind: scripted``) and the
options below; ``EMPATHOS_DISTILL_<FIELD>`` variables override the file. The flags
``--model``, ``--base-url`` and ``--api-key-env`` set the distiller (``--base-url`` makes it
``kind: openai``). The judge defaults to the distiller's endpoint;
with neither given both run on the bundled offline model with small output caps.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from empathos.distill.checks import DUPLICATE_SIMILARITY
from empathos.errors import ConfigError
from empathos.layered_config import load_layers
from empathos.llm import ModelClient, ResponseCache
from empathos.llm.roles import RoleEndpoint, build_role_model

__all__ = ["DistillConfig", "DistillRoles", "build_distill_model", "load_distill_config"]

# Offline caps (tokens per free-text field of a structured answer): SmolLM2-135M is slow on CPU.
_OFFLINE_MAX_TOKENS = {"distiller": 8, "judge": 6}


class DistillRoles(BaseModel):
    """The endpoints ``empathos distill`` uses."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    distiller: RoleEndpoint | None = Field(None, description="Extracts and writes scenarios.")
    judge: RoleEndpoint | None = Field(
        None, description="Rates the IEDR of each scenario. None: the distiller's endpoint."
    )


class DistillConfig(BaseModel):
    """Everything a distill batch runs with."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

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


#: The flag of ``empathos distill`` that sets each dotted field (for error messages).
_FLAGS = {
    "roles.distiller.model": "--model",
    "roles.distiller.base_url": "--base-url",
    "roles.distiller.kind": "--base-url",
    "roles.distiller.api_key_env": "--api-key-env",
}
ENV_PREFIX = "EMPATHOS_DISTILL_"


def load_distill_config(
    path: Path | None, cli: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> DistillConfig:
    """The config from the YAML file (optional), ``EMPATHOS_DISTILL_<FIELD>`` variables (nested
    with ``__``) and the CLI values (None: not given), through :mod:`empathos.layered_config`.
    ``--model``, ``--base-url`` and ``--api-key-env`` set the distiller's endpoint."""
    distiller: dict[str, Any] = {
        "model": cli.get("model"),
        "api_key_env": cli.get("api_key_env"),
    }
    if cli.get("base_url") is not None:
        distiller.update(kind="openai", base_url=cli["base_url"])
    flags = {k: cli.get(k) for k in ("concurrency", "keep_source", "id_prefix",
                                     "duplicate_similarity")}  # fmt: skip
    layers = load_layers(
        DistillConfig,
        path=path,
        env_prefix=ENV_PREFIX,
        environ=environ,
        flags={**flags, "roles": {"distiller": distiller}},
        flag_names=_FLAGS,
    )
    if layers.from_flag("roles.distiller.base_url"):
        merged = layers.data.get("roles", {}).get("distiller", {})
        if isinstance(merged, dict) and not merged.get("model"):
            raise ConfigError("needs --model (the model id at that endpoint)", field="--base-url")
    return layers.validate(DistillConfig)


def build_distill_model(
    config: DistillConfig, role: str, cache: ResponseCache | None = None
) -> ModelClient:
    """The client of 'distiller' or 'judge' (a scripted handler is imported here)."""
    endpoint = config.endpoint(role)
    return build_role_model(endpoint, role, cache if endpoint.cache else None)
