"""Build the role models of a run from its resolved config, once, before any dialogue starts.

A scripted role's handler (:func:`empathos.llm.roles.load_handler`) is imported here, so a bad
name fails at start with one line naming the role.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from empathos.errors import ConfigError
from empathos.llm import ModelClient, ResponseCache
from empathos.llm.roles import RoleEndpoint, build_role_model, load_handler
from empathos.run.config import REQUIRED_ROLES, RunConfig
from empathos.sandbox.config import Roles

__all__ = ["CLIENT_ROLE", "build_roles", "check_api_keys", "check_handlers", "priced"]

# Config role name -> the role name recorded with each call.
CLIENT_ROLE = {
    "user": "user",
    "director": "director",
    "judge": "judge",
    "model_under_test": "tested",
}


def priced(config: RunConfig, name: str) -> RoleEndpoint:
    """The role's endpoint with its model's price from the run's price table (a price of the
    endpoint's own wins)."""
    endpoint = config.role(name)
    price = config.prices.get(endpoint.model)
    if price is None or endpoint.price is not None:
        return endpoint
    return endpoint.model_copy(update={"price": price})


def check_handlers(config: RunConfig) -> None:
    """Import every configured handler now, so a bad one fails before anything is written."""
    for name in CLIENT_ROLE:
        endpoint = config.role(name)
        if endpoint.handler is None:
            continue
        if endpoint.kind != "scripted":
            raise ConfigError("handler is only used with kind: scripted", field=f"roles.{name}")
        load_handler(endpoint.handler, name)


def build_roles(config: RunConfig, cache: ResponseCache | None) -> tuple[Roles, list[ModelClient]]:
    """The sandbox's role bundle and the clients to close at the end.

    The director's model is left out when the director mode is 'rules'."""
    clients: dict[str, ModelClient] = {}
    for name, role in CLIENT_ROLE.items():
        if name == "director" and config.director_mode == "rules":
            continue
        clients[name] = build_role_model(priced(config, name), role, cache, name=name)
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
