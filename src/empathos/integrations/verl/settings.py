"""The ``empathos:`` section of a verl trainer config: the roles, the sandbox, the scenarios.

The agent loop (:mod:`.agent_loop`) reads it from verl's trainer config (the top-level key
``empathos``; ``examples/verl/mapo_qwen2_5_7b.yaml`` holds one) or from its entry in an agent
loop config file (``actor_rollout_ref.rollout.agent.agent_loop_config_path``)::

    empathos:
      roles:                     # user, judge (and director for `director: model`)
        user:     {kind: openai, base_url: http://roles:8001/v1, model: Qwen/Qwen2.5-72B-Instruct}
        judge:    {kind: openai, base_url: http://roles:8001/v1, model: Qwen/Qwen2.5-72B-Instruct}
        director: {kind: openai, base_url: http://roles:8001/v1, model: Qwen/Qwen2.5-72B-Instruct}
      sandbox: {max_turns: 15, min_turns: 8, eval_every: 1, reward: distance, director: model}
      scenarios: builtin          # or a directory of ours, or a published EMPA layout
      cache: null                 # path of a response cache (SQLite) shared by the roles
      max_reply_tokens: 512       # cap on one policy reply
      seed: 0                     # base of the per-rollout seeds

No verl import: the settings are validated and the role clients built here, once per process
(:func:`world_for`), because verl creates one agent loop object per rollout.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empathos.errors import ConfigError
from empathos.llm import ResponseCache
from empathos.llm.roles import RoleEndpoint, build_role_model
from empathos.sandbox.config import Roles, SandboxConfig
from empathos.scenarios import BUILTIN, Scenario, load_scenarios

__all__ = ["VerlSettings", "World", "parse_settings", "world_for"]


class VerlSettings(BaseModel):
    """The ``empathos:`` section (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    roles: dict[str, RoleEndpoint] = Field(
        description="Endpoint of each EMPA role: 'user' and 'judge', and 'director' when the "
        "sandbox's director is 'model'."
    )
    sandbox: SandboxConfig = Field(
        default_factory=SandboxConfig,
        description="The sandbox's settings (turn caps, K, reward, director); open_with_topic "
        "must stay true: the prepared prompt holds turn 1's user line.",
    )
    scenarios: str = Field(
        BUILTIN, description="'builtin', a directory of our scenarios, or a published layout."
    )
    cache: str | None = Field(None, description="Path of a response cache shared by the roles.")
    max_reply_tokens: int = Field(512, ge=1, description="Most tokens of one policy reply.")
    seed: int = Field(0, ge=0, description="Base of the per-rollout environment seeds.")


@dataclass(frozen=True)
class World:
    """What every rollout of one settings value shares: settings, role clients, scenarios."""

    settings: VerlSettings
    roles: Roles
    scenarios: dict[str, Scenario]


def _plain(raw: Any) -> dict[str, Any]:
    """A plain dict of ``raw``: a mapping, or the OmegaConf node verl hands over."""
    if type(raw).__module__.startswith("omegaconf"):
        from omegaconf import MissingMandatoryValue, OmegaConf

        try:
            raw = OmegaConf.to_container(raw, resolve=True, throw_on_missing=True)
        except MissingMandatoryValue as exc:
            raise ConfigError(
                "missing (???): pass it as a Hydra override on the command line (the launch "
                "script does, from the environment), so that it reaches every Ray node",
                field="empathos." + str(exc.full_key).removeprefix("empathos."),
            ) from None
    if not isinstance(raw, Mapping):
        raise ConfigError(f"must be a mapping, got {type(raw).__name__}", field="empathos")
    return dict(raw)


def parse_settings(raw: Any) -> VerlSettings:
    """Validate the section; one line naming the field on error."""
    if raw is None:
        raise ConfigError(
            "missing: the empathos agent loop needs the roles and the sandbox (a top-level "
            "'empathos:' section of the trainer config, as in examples/verl/mapo_qwen2_5_7b.yaml)",
            field="empathos",
        )
    data = _plain(raw)
    try:
        settings = VerlSettings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in ("empathos", *err["loc"]))
        raise ConfigError(err["msg"], field=where) from None
    if not settings.sandbox.open_with_topic:
        raise ConfigError(
            "must be true under verl: the prepared prompt holds the first user line",
            field="empathos.sandbox.open_with_topic",
        )
    needed = ["user", "judge"] + (["director"] if settings.sandbox.director == "model" else [])
    for role in needed:
        if role not in settings.roles:
            raise ConfigError("missing: give its endpoint", field=f"empathos.roles.{role}")
    return settings


def _build(settings: VerlSettings) -> World:
    cache = ResponseCache(Path(settings.cache)) if settings.cache else None
    names = ("user", "judge") + (("director",) if settings.sandbox.director == "model" else ())
    clients = {name: build_role_model(settings.roles[name], name, cache) for name in names}
    roles = Roles(user=clients["user"], judge=clients["judge"], director=clients.get("director"))
    source = settings.scenarios
    loaded = load_scenarios(source, kind="builtin" if source == BUILTIN else "own")
    scenarios = {s.id: s for s in loaded.scenarios}
    if not scenarios:
        raise ConfigError(f"no valid scenario in {source}", field="empathos.scenarios")
    return World(settings=settings, roles=roles, scenarios=scenarios)


_WORLDS: dict[str, World] = {}
_LOCK = threading.Lock()


def world_for(raw: Any) -> World:
    """The shared :class:`World` of a settings section (built on first use in a process)."""
    settings = parse_settings(raw)
    key = settings.model_dump_json()
    with _LOCK:
        if key not in _WORLDS:
            _WORLDS[key] = _build(settings)
        return _WORLDS[key]
