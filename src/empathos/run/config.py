"""The typed run configuration of ``empathos run``: YAML file + environment + CLI flags.

Layers, lowest first: the defaults, the YAML file (``--config``), environment variables
``EMPATHOS_<FIELD>`` (nested with ``__``: ``EMPATHOS_ROLES__JUDGE__MODEL``), then CLI flags.
Every problem becomes one :class:`~empathos.errors.ConfigError` naming where the bad value
came from (the file and field, the variable, or the flag). API keys are never part of the
config: each role names the *environment variable* that holds its key.

With no roles anywhere, every role runs on the bundled offline model (the offline default).
A ``roles:`` section in the file must name every role the run needs.

The layers are merged here rather than by ``pydantic-settings``: its sources merge before
validation, so an error could no longer say which layer (file, variable or flag) set the bad
value, and the CLI's flags (typer) and the file's role rules would still need code of their own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from empathos.errors import ConfigError
from empathos.llm.config import local_model_id
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
# The offline default (the README's main job): a turn cap that fits about 5 minutes on 2 cores.
DEMO_MAX_TURNS = 3
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

    model_config = ConfigDict(extra="forbid", frozen=True)

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

    model_config = ConfigDict(extra="forbid", frozen=True)

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
def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    except yaml.YAMLError as exc:
        problem = " ".join(str(exc).split())
        raise ConfigError(f"not valid YAML: {problem}", file=path) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping, got {type(data).__name__}", file=path)
    return data


def _env_layer(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """``EMPATHOS_<FIELD>`` variables that name a config field (others are left alone)."""
    layer: dict[str, Any] = {}
    names: dict[str, str] = {}
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        parts = name[len(ENV_PREFIX) :].lower().split("__")
        if parts[0] not in RunConfig.model_fields:
            continue  # e.g. EMPATHOS_CACHE_DIR belongs to another part of the package
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            value = raw
        if isinstance(value, (dict, list)) and parts[0] != "cases":
            value = raw
        _set(layer, parts, value)
        names[".".join(parts)] = name
    return layer, names


def _set(tree: dict[str, Any], parts: list[str], value: Any) -> None:
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = value
    return out


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        keys.append(path)
        if isinstance(value, Mapping):
            keys.extend(_flatten(value, path + "."))
    return keys


class _Sources:
    """Which layer set each dotted field, to name it in error messages."""

    def __init__(self, file: Path | None, yaml_keys: list[str], env: dict[str, str]) -> None:
        self.file = file
        self.yaml_keys = set(yaml_keys)
        self.env = env
        self.cli: set[str] = set()

    def error(self, loc: str, problem: str) -> ConfigError:
        prefixes = [loc]
        while "." in prefixes[-1]:
            prefixes.append(prefixes[-1].rsplit(".", 1)[0])
        for key in prefixes:
            if key in self.cli:
                return ConfigError(problem, field=_FLAGS.get(key, key))
            if key in self.env:
                return ConfigError(problem, field=f"{self.env[key]} (environment)")
        return ConfigError(problem, file=self.file, field=loc or None)


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
    file_layer = _read_yaml(path) if path is not None else {}
    env_layer, env_names = _env_layer(os.environ if environ is None else environ)
    cli_layer = _cli_layer(cli or {})
    sources = _Sources(path, _flatten(file_layer), env_names)
    sources.cli = set(_flatten(cli_layer))
    merged = _merge(_merge(file_layer, env_layer), cli_layer)
    _check_roles(merged, file_layer, sources)
    try:
        config = RunConfig.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"] if not isinstance(x, int))
        raise sources.error(loc, first["msg"]) from None
    try:
        resolved = config.resolved()
    except ConfigError as exc:
        raise sources.error(exc.field or "", exc.problem) from None
    _check_model_flag(resolved, sources)
    return resolved


def _check_roles(merged: dict[str, Any], file_layer: dict[str, Any], sources: _Sources) -> None:
    roles = merged.get("roles")
    if roles is None:
        return
    if not isinstance(roles, dict):
        raise sources.error("roles", "expected a mapping of role -> endpoint")
    if "roles" in file_layer:
        for role in REQUIRED_ROLES:
            if role not in roles:
                raise ConfigError(
                    "missing: every role needs an endpoint (kind: offline for the bundled model)",
                    file=sources.file,
                    field=f"roles.{role}",
                )
    mut = roles.get("model_under_test")
    given = "roles.model_under_test.model" in sources.cli and isinstance(mut, dict)
    if given and isinstance(mut, dict) and not mut.get("base_url") and mut.get("kind") is None:
        if mut.get("model") != OFFLINE_MODEL_ID:
            raise ConfigError(
                "needs --base-url (an OpenAI-compatible endpoint) or a "
                "roles.model_under_test entry in --config",
                field="--model",
            )
        mut["kind"] = "offline"
    url_flag = "roles.model_under_test.base_url" in sources.cli
    if url_flag and isinstance(mut, dict) and not mut.get("model"):
        raise ConfigError("needs --model (the model id at that endpoint)", field="--base-url")
    _check_roles_flags(roles, sources)


def _check_roles_flags(roles: dict[str, Any], sources: _Sources) -> None:
    """--roles-model / --roles-base-url / --roles-api-key-env: one endpoint for the user,
    the director and the judge; the first two go together (or the file gives the URL)."""
    given = {
        flag
        for key, flag in _FLAGS.items()
        if flag.startswith("--roles-") and key in sources.cli and key.startswith("roles.")
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


def _check_model_flag(config: RunConfig, sources: _Sources) -> None:
    mut = config.role("model_under_test")
    if mut.kind == "offline" and mut.model != OFFLINE_MODEL_ID:
        raise sources.error(
            "roles.model_under_test.model",
            f"the offline backend serves only {OFFLINE_MODEL_ID}; give --base-url (an "
            "OpenAI-compatible endpoint) or a roles.model_under_test entry in --config",
        )
