"""Checks the ``empa`` task makes before its first sample, so that ``inspect eval`` stops at
once with one line and a non-zero exit rather than failing every sample (a failed sample
does not change Inspect's exit status).

- :func:`prerequisite`: Inspect's exception for an unmet prerequisite, which its command
  line prints as the message alone and exits 1 on. Inspect exports no such class from a
  public module; the public ``get_model(role=..., required=True)`` raises it for a role
  bound to nothing, and that is where we take it from.
- :func:`in_eval`: whether the task is being built by ``inspect eval`` / ``eval("empathos/
  empa", ...)`` (the eval's model roles are known then) rather than by ``empa()`` in
  Python, whose roles come later with ``eval(task, model_roles=...)``.
- :func:`check_roles`: every role the dialogue calls is bound, and every model's server
  accepts a connection.
"""

from __future__ import annotations

import contextvars
import functools
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from inspect_ai.model import Model, get_model, model_roles

from empathos.llm import redact_url

__all__ = [
    "CONNECT_TIMEOUT_S",
    "check_roles",
    "in_eval",
    "missing_roles_line",
    "prerequisite",
    "unbound_roles",
]

#: Seconds to wait for a model's server to accept a TCP connection.
CONNECT_TIMEOUT_S = 5.0
_NEVER_BOUND = "empathos:never-bound"


@functools.cache
def _prerequisite_class() -> type[Exception]:
    try:
        get_model(role=_NEVER_BOUND, required=True)
    except Exception as exc:  # Inspect's PrerequisiteError, through its public API
        return type(exc)
    raise RuntimeError(f"inspect-ai bound the model role {_NEVER_BOUND!r}")  # pragma: no cover


def prerequisite(message: str) -> Exception:
    """Inspect's prerequisite error holding ``message`` (its CLI prints the line alone)."""
    return _prerequisite_class()(message)


def in_eval() -> bool:
    """True while an eval resolves its tasks: Inspect has set the eval's model roles (a
    fresh mapping, even when empty) in the context; outside an eval the context holds the
    roles' unset default, the object a new empty context returns."""
    return model_roles() is not contextvars.Context().run(model_roles)


def unbound_roles(needed: Sequence[str], task_roles: str | None) -> list[str]:
    """The roles of ``needed`` that neither the eval (``--model-role``) nor the task's
    ``roles`` parameter binds."""
    bound = model_roles()
    return [role for role in needed if role not in bound and not task_roles]


def missing_roles_line(missing: Sequence[str]) -> str:
    """The one line that names the flags binding ``missing``."""
    flags = " ".join(f"--model-role {role}=MODEL" for role in missing)
    return (
        f"empathos/empa: no model for the role(s) {', '.join(missing)}: pass {flags} "
        "(or -T roles=MODEL for every sandbox role)"
    )


def _unreachable(model: Model) -> str | None:
    """Why the server of ``model`` does not accept a connection (None: it does, or the
    model has no server address of its own, as a hosted provider's default or mockllm)."""
    url = model.api.base_url
    if not url:
        return None
    parts = urlsplit(url)
    if parts.hostname is None:
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=CONNECT_TIMEOUT_S):
            return None
    except ConnectionRefusedError:
        return f"connection refused by {redact_url(url)} (is the server running?)"
    except OSError as exc:
        return f"cannot connect to {redact_url(url)}: {exc.strerror or type(exc).__name__}"


def check_roles(needed: Sequence[str], task_roles: str | None) -> None:
    """Every role in ``needed`` bound and every model's server reachable, or Inspect's
    prerequisite error naming the flag or the endpoint. Called while an eval builds the
    task (:func:`in_eval`)."""
    missing = unbound_roles(needed, task_roles)
    if missing:
        raise prerequisite(missing_roles_line(missing))
    bound = model_roles()
    models: dict[str, Model] = {"model under test (--model)": get_model()}
    for role in needed:
        chosen = bound.get(role)
        model = chosen[0] if isinstance(chosen, list) else chosen
        models[f"{role} role"] = model if model is not None else get_model(task_roles)
    for who, model in models.items():
        why = _unreachable(model)
        if why is not None:
            raise prerequisite(f"empathos/empa: the {who}, {model}: {why}")
