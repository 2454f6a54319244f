"""The typed run configuration of ``empathos run``: YAML file + environment + CLI flags.

Layers, lowest first (:mod:`empathos.layered_config`, shared by every command): the defaults,
the YAML file (``--config``), environment variables ``EMPATHOS_<FIELD>`` (nested with ``__``:
``EMPATHOS_ROLES__JUDGE__MODEL``), then CLI flags. Every problem becomes one
:class:`~empathos.errors.ConfigError` naming where the bad value came from (the file and
field, the variable, or the flag). API keys are never part of the config: each role names
the *environment variable* that holds its key.

With no roles anywhere, every role runs on the bundled offline model (the offline default).
A ``roles:`` section in the file must name every role the run needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from empathos.errors import ConfigError
from empathos.layered_config import ConfigLayers, closest, load_layers
from empathos.llm.config import ModelPrice, local_model_id
from empathos.llm.offline import OFFLINE_MODEL_ID
from empathos.llm.roles import RoleEndpoint

__all__ = [
    "DEMO_MAX_TURNS",
    "DEMO_OUT",
    "ENV_PREFIX",
    "REQUIRED_ROLES",
    "SANDBOX_ROLES",
    "RoleEndpoint",
    "RolesConfig",
    "RunConfig",
    "load_run_config",
]

ENV_PREFIX = "EMPATHOS_"
REQUIRED_ROLES: tuple[str, ...] = ("user", "director", "judge", "model_under_test")
#: The roles of the sandbox (everything but the model under test); --roles-* set all three.
SANDBOX_ROLES: tuple[str, ...] = ("user", "director", "judge")
# The offline default (the README's main job): a turn cap that fits about 2 minutes on an idle
# 2-core machine (6 turns in 114 s with two torch threads; 3 turns took 95 s on one: docs/run.md).
DEMO_MAX_TURNS = 6
DEMO_OUT = Path("runs/offline-demo")
# Per-role output caps of the offline default (for structured output: per free-text field):
# SmolLM2-135M is slow on CPU and rambles.
_DEMO_MAX_TOKENS = {"user": 40, "model_under_test": 48, "director": 24, "judge": 12}
_FLAGS = {
    "protocol": "--protocol",
    "scenarios": "--scenarios",
    "cases": "--cases",
    "limit": "--limit",
    "trials": "--trials",
    "concurrency": "--concurrency",
    "max_turns": "--max-turns",
    "min_turns": "--min-turns",
    "language": "--language",
    "out": "--out",
    "retry_errors": "--no-retry-errors",
    "roles.model_under_test.model": "--model",
    "roles.model_under_test.base_url": "--base-url",
    "roles.model_under_test.api_key_env": "--api-key-env",
    "roles.model_under_test.kind": "--base-url",
    "roles.model_under_test.path": "--policy",
    **{f"roles.{r}.model": "--roles-model" for r in SANDBOX_ROLES},
    **{f"roles.{r}.base_url": "--roles-base-url" for r in SANDBOX_ROLES},
    **{f"roles.{r}.kind": "--roles-base-url" for r in SANDBOX_ROLES},
    **{f"roles.{r}.api_key_env": "--roles-api-key-env" for r in SANDBOX_ROLES},
}


class RolesConfig(BaseModel):
    """The endpoint of every role; None means the role is not configured."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    user: RoleEndpoint | None = Field(None, description="The simulated user (user agent).")
    director: RoleEndpoint | None = Field(None, description="The director (story pacing).")
    judge: RoleEndpoint | None = Field(None, description="The judge (IEDR and MDEP forms).")
    model_under_test: RoleEndpoint | None = Field(
        None, description="The model under test (writes the supportive replies)."
    )
    distiller: RoleEndpoint | None = Field(
        None, description="Reserved for the Real-to-Sim distiller; not used by runs."
    )

    def get(self, role: str) -> RoleEndpoint:
        """The endpoint of a required role (resolved configs have all of them)."""
        value = getattr(self, role)
        if value is None:
            raise ConfigError("missing", field=f"roles.{role}")
        assert isinstance(value, RoleEndpoint)
        return value


class RunConfig(BaseModel):
    """Everything that defines a run. Fields left None get their value in :meth:`resolved`."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    roles: RolesConfig | None = Field(
        None, description="Per-role endpoints. None: every role on the bundled offline model."
    )
    protocol: Literal["empathos", "empa-release"] = Field(
        "empathos",
        description="'empathos': our own prompts, agents and loop (the sandbox). "
        "'empa-release': the published EMPA release's own agents, prompts and loop, from the "
        "user's installed copy of the package 'empa' (see docs/run.md).",
    )
    scenarios: str = Field(
        "builtin", description="Scenario source: 'builtin', a file, a directory of ours, or "
        "the directory of the published EMPA layout.",
    )  # fmt: skip
    cases: list[str] | Literal["official", "all"] | None = Field(
        None,
        description="Which scenarios: ids (list or comma-separated), 'official' (the "
        "published 30-case list), 'all'. None: the default pair for the bundled set on the "
        "offline default, else all.",
    )
    limit: int | None = Field(None, ge=1, description="Run at most this many scenarios.")
    trials: int = Field(1, ge=1, le=1000, description="Dialogues per scenario (seeds 0..n-1).")
    concurrency: int = Field(4, ge=1, le=4096, description="Dialogues in flight at once.")
    max_turns: int | None = Field(
        None, ge=1, le=1000, description="Turn cap. None: 3 on the offline default, else the "
        "EPM preset's (45).",
    )  # fmt: skip
    min_turns: int | None = Field(
        None, ge=0, description="No success or failure before this turn. None: the preset's "
        "(12), capped at max_turns.",
    )  # fmt: skip
    eval_every: int = Field(1, ge=1, le=100, description="K: the judge rates every K turns.")
    language: Literal["en", "zh"] | None = Field(
        None, description="Keep only scenarios in this language (prompts follow the scenario)."
    )
    system_prompt: str = Field(
        "default",
        description="System prompt of the model under test: 'default' (the bundled companion "
        "prompt), 'none' (the model's own behaviour) or a path to a text file.",
    )
    director_mode: Literal["model", "rules"] = Field(
        "model", description="'model': the director role's model chooses; 'rules': rule-based."
    )
    epm_preset: Literal["reference", "paper"] = Field(
        "reference", description="EPM preset for dynamics, termination and scoring."
    )
    out: Path | None = Field(
        None, description="Run directory. None: runs/offline-demo on the offline default, "
        "else runs/<model id>.",
    )  # fmt: skip
    retry_errors: bool = Field(
        True, description="On resume, run again the dialogues that ended as errors."
    )
    on_empty: Literal["reply", "error"] = Field(
        "reply",
        description="A reply of the model under test without text (null content, a blank "
        "one, finish_reason 'length' with nothing written): 'reply' records an empty reply "
        "that the judge rates and the score counts; 'error' ends the dialogue as an error.",
    )
    judge_failures_limit: int = Field(
        3,
        ge=1,
        le=1000,
        description="A dialogue whose judge could not rate this many evaluations in a row "
        "(after retries and re-asks) ends as an error at once, quoting the judge's last reply.",
    )
    cache_path: Path | None = Field(
        None, description="SQLite response cache for roles with cache: true. None: "
        "<out>/cache.sqlite.",
    )  # fmt: skip
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="Price table: model id -> USD per million input, cached input and "
        "output tokens. Every role whose model id is listed is priced (its calls' cost_usd); "
        "a role's own `price` wins. Empty: only roles with prices of their own are priced.",
    )

    @field_validator("cases", mode="before")
    @classmethod
    def _split_cases(cls, value: Any) -> Any:
        if isinstance(value, str) and value not in ("official", "all"):
            ids = [x.strip() for x in value.split(",") if x.strip()]
            if not ids:
                raise ValueError("give ids (comma-separated), 'official' or 'all'")
            return ids
        return value

    # -- resolution ---------------------------------------------------------------------
    @property
    def offline_default(self) -> bool:
        """True when every required role runs on the bundled offline model."""
        roles = self.roles or RolesConfig()
        return all(
            getattr(roles, r) is None or getattr(roles, r).kind == "offline" for r in REQUIRED_ROLES
        )

    @property
    def offline_sandbox(self) -> bool:
        """True when user, director and judge all run on the bundled offline model and the
        model under test is offline too or a local policy (``--policy``, ``kind: local``):
        such a run gets the offline default's turn cap, scenarios and reply cap."""
        roles = self.roles or RolesConfig()
        mut = roles.model_under_test
        return (mut is None or mut.kind in ("offline", "local")) and all(
            getattr(roles, r) is None or getattr(roles, r).kind == "offline"
            for r in REQUIRED_ROLES
            if r != "model_under_test"
        )

    def resolved(self) -> RunConfig:
        """A copy with every role filled and every None default replaced by its value."""
        offline = self.offline_default
        sandbox_offline = self.offline_sandbox
        roles = self.roles or RolesConfig()
        filled = {r: getattr(roles, r) or _offline_role(r) for r in REQUIRED_ROLES}
        mut = filled["model_under_test"]
        if sandbox_offline and mut.kind == "local" and mut.max_tokens is None:
            filled["model_under_test"] = mut.model_copy(
                update={"max_tokens": _DEMO_MAX_TOKENS["model_under_test"]}
            )
        max_turns = self.max_turns or (DEMO_MAX_TURNS if sandbox_offline else 45)
        min_turns = self.min_turns if self.min_turns is not None else min(12, max_turns)
        if min_turns > max_turns:
            raise ConfigError(
                f"min_turns ({min_turns}) is above max_turns ({max_turns})", field="min_turns"
            )
        mut = filled["model_under_test"]
        return self.model_copy(
            update={
                "roles": RolesConfig(**filled, distiller=roles.distiller),
                "max_turns": max_turns,
                "min_turns": min_turns,
                "out": self.out or (DEMO_OUT if offline else Path("runs") / _slug(mut.model)),
            }
        )

    def role(self, name: str) -> RoleEndpoint:
        """The endpoint of a required role of a resolved config."""
        return (self.roles or RolesConfig()).get(name)

    def offline_sandbox_roles(self) -> list[str]:
        """The sandbox roles of a resolved config that run on the bundled offline model
        (the director only when it is a model, not the rules)."""
        return [
            r
            for r in SANDBOX_ROLES
            if self.role(r).kind == "offline"
            and not (r == "director" and self.director_mode == "rules")
        ]

    def score_warning(self) -> str | None:
        """Why the scores of this run are not meaningful (None: no known reason).

        The bundled 135M model is far too small to play the simulated user, the director or
        the judge: any of them on it makes the scores a demonstration, not a measurement."""
        offline = self.offline_sandbox_roles()
        if not offline:
            return None
        return (
            f"{', '.join(offline)} ran on the bundled 135M offline model; point them at a "
            "capable model (--roles-model/--roles-base-url, or roles in --config)"
        )


def _offline_role(role: str) -> RoleEndpoint:
    return RoleEndpoint(kind="offline", max_tokens=_DEMO_MAX_TOKENS.get(role))


def _slug(text: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "-" for c in text)
    return keep.strip("-.") or "model"


# -- loading --------------------------------------------------------------------------
def _endpoint_flags(cli: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if cli.get(f"{prefix}model") is not None:
        out["model"] = cli[f"{prefix}model"]
    if cli.get(f"{prefix}base_url") is not None:
        out["base_url"] = cli[f"{prefix}base_url"]
        out["kind"] = "openai"
    if cli.get(f"{prefix}api_key_env") is not None:
        out["api_key_env"] = cli[f"{prefix}api_key_env"]
    return out


def _cli_layer(cli: Mapping[str, Any]) -> dict[str, Any]:
    """CLI values (None: not given); model shortcuts go to roles.model_under_test, the
    roles_* ones to each sandbox role (user, director, judge)."""
    layer: dict[str, Any] = {k: v for k, v in cli.items() if v is not None and k in _FLAGS}
    roles: dict[str, Any] = {}
    mut = _endpoint_flags(cli, "")
    if cli.get("policy") is not None:
        mut["kind"] = "local"
        mut["path"] = str(cli["policy"])
        mut.setdefault("model", local_model_id(cli["policy"]))
    if mut:
        roles["model_under_test"] = mut
    sandbox = _endpoint_flags(cli, "roles_")
    if sandbox:
        roles.update({r: dict(sandbox) for r in SANDBOX_ROLES})
    if roles:
        layer["roles"] = roles
    return layer


def load_run_config(
    path: Path | None = None,
    cli: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> RunConfig:
    """Build and resolve the run config from the YAML file, the environment and CLI values.

    ``cli`` maps field names (and ``model``, ``base_url``, ``api_key_env`` and their
    ``roles_`` forms for the sandbox roles) to values; None means "not given". Raises
    ConfigError naming the file/field, variable or flag at fault.
    """
    layers = load_layers(
        RunConfig,
        path=path,
        env_prefix=ENV_PREFIX,
        environ=environ,
        flags=_cli_layer(cli or {}),
        flag_names=_FLAGS,
        list_fields=("cases",),
    )
    _check_roles(layers)
    config = layers.validate(RunConfig)
    try:
        resolved = config.resolved()
    except ConfigError as exc:
        raise layers.error(exc.field or "", exc.problem) from None
    _check_model_flag(resolved, layers)
    return resolved


def _check_roles(layers: ConfigLayers) -> None:
    roles = layers.data.get("roles")
    if roles is None:
        return
    if not isinstance(roles, dict):
        raise layers.error("roles", "expected a mapping of role -> endpoint")
    known = RolesConfig.model_fields
    for key in roles:
        if key not in known:
            near = closest(str(key), known)
            hint = f"did you mean {near!r}?" if near else f"the roles are {', '.join(known)}"
            raise layers.error(f"roles.{key}", f"unknown role {key!r} ({hint})")
    if "roles" in layers.file_data:
        for role in REQUIRED_ROLES:
            if role not in roles:
                raise ConfigError(
                    "missing: every role needs an endpoint (kind: offline for the bundled model)",
                    file=layers.file,
                    field=f"roles.{role}",
                )
    mut = roles.get("model_under_test")
    given = layers.from_flag("roles.model_under_test.model") and isinstance(mut, dict)
    if given and isinstance(mut, dict) and not mut.get("base_url") and mut.get("kind") is None:
        if mut.get("model") != OFFLINE_MODEL_ID:
            raise ConfigError(
                "needs --base-url (an OpenAI-compatible endpoint) or a "
                "roles.model_under_test entry in --config",
                field="--model",
            )
        mut["kind"] = "offline"
    url_flag = layers.from_flag("roles.model_under_test.base_url")
    if url_flag and isinstance(mut, dict) and not mut.get("model"):
        raise ConfigError("needs --model (the model id at that endpoint)", field="--base-url")
    _check_roles_flags(roles, layers)


def _check_roles_flags(roles: dict[str, Any], layers: ConfigLayers) -> None:
    """--roles-model / --roles-base-url / --roles-api-key-env: one endpoint for the user,
    the director and the judge; the first two go together (or the file gives the URL)."""
    given = {
        flag
        for key, flag in _FLAGS.items()
        if flag.startswith("--roles-") and layers.from_flag(key) and key.startswith("roles.")
    }
    if not given:
        return
    for role in SANDBOX_ROLES:
        entry = roles.get(role)
        if not isinstance(entry, dict):
            continue
        if "--roles-base-url" in given and not entry.get("model"):
            raise ConfigError("needs --roles-model (the model id at that endpoint)",
                              field="--roles-base-url")  # fmt: skip
        if entry.get("kind", "openai") == "openai" and not entry.get("base_url"):
            raise ConfigError(
                "needs --roles-base-url (an OpenAI-compatible endpoint) or the roles' "
                "base_url in --config",
                field=", ".join(sorted(given)),
            )


def _check_model_flag(config: RunConfig, layers: ConfigLayers) -> None:
    mut = config.role("model_under_test")
    if mut.kind == "offline" and mut.model != OFFLINE_MODEL_ID:
        raise layers.error(
            "roles.model_under_test.model",
            f"the offline backend serves only {OFFLINE_MODEL_ID}; give --base-url (an "
            "OpenAI-compatible endpoint) or a roles.model_under_test entry in --config",
        )
