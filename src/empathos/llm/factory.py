"""Build a role's model from its endpoint config."""

from __future__ import annotations

from empathos.llm.cache import ResponseCache
from empathos.llm.client import Backend, ModelClient
from empathos.llm.config import EndpointConfig, resolve_api_key
from empathos.llm.offline import OfflineBackend
from empathos.llm.scripted import Handler, ScriptedBackend, auto_reply

__all__ = ["build_model"]


def build_model(
    config: EndpointConfig,
    role: str,
    cache: ResponseCache | None = None,
    *,
    handler: Handler | None = None,
) -> ModelClient:
    """The :class:`ModelClient` for ``role``: fails at once (ConfigError) if its key is unset.

    ``handler`` answers a ``kind="scripted"`` endpoint (default: :func:`auto_reply`)."""
    backend: Backend
    if config.kind == "openai":
        # Imported on use: the openai SDK costs about 0.3 s of start-up for offline runs.
        from empathos.llm.openai_backend import OpenAIBackend

        backend = OpenAIBackend(config, resolve_api_key(config, role))
    elif config.kind == "offline":
        backend = OfflineBackend()
    elif config.kind == "local":
        from empathos.llm.local import cached_policy
        from empathos.llm.local_backend import LocalBackend

        backend = LocalBackend(cached_policy(config.path, config.adapter), config.max_concurrency)
    else:
        backend = ScriptedBackend(handler or auto_reply)
    return ModelClient(backend, config, role, cache)
