"""The run manifest (``manifest.json``): what a run directory was made with, without secrets.

It records the resolved config (endpoints name their key's environment variable, never the
key; addresses lose any user:password and query string), the fingerprint that decides
whether a rerun may resume, package versions, the git commit when known, the prompt
templates used, every scenario's id and content hash, and one entry per session (start,
end, outcome).
"""

from __future__ import annotations

import json
import platform
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empathos.canonical import canonical_digest
from empathos.errors import ConfigError
from empathos.llm.config import redact_url
from empathos.records import DialogueRecord
from empathos.records.io import RUN_MANIFEST_NAME, write_text_atomic
from empathos.run.config import REQUIRED_ROLES, RunConfig
from empathos.scoring.usage import TokenCount, Usage, count_calls, usage_summary

__all__ = [
    "MANIFEST_NAME",
    "MANIFEST_SCHEMA_VERSION",
    "BenchInfo",
    "Manifest",
    "PromptInfo",
    "RejudgeInfo",
    "RunUsage",
    "ScenarioInfo",
    "Session",
    "digest",
    "fingerprint_parts",
    "git_commit",
    "is_bench_dir",
    "new_manifest",
    "package_versions",
    "read_manifest",
    "redact_url",
    "redacted_config",
    "run_usage",
    "utc_now",
    "write_manifest",
]

MANIFEST_NAME = RUN_MANIFEST_NAME
MANIFEST_SCHEMA_VERSION = 1
_PACKAGES = ("empathos", "pydantic", "openai", "numpy", "torch", "transformers", "typer")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PromptInfo(_Model):
    """One prompt template a run uses."""

    role: str = Field(description="Role the template prompts.")
    language: str = Field(description="Language of the template.")
    id: str = Field(description="Template id (or 'custom:<file>').")
    version: str = Field(description="Template version (content hash for a custom file).")


class ScenarioInfo(_Model):
    """One scenario of the run."""

    id: str = Field(description="Scenario id.")
    hash: str = Field(description="sha256 of the scenario content.")
    language: str = Field(description="Language of the scenario.")
    source: str = Field(description="File it was read from.")


class Session(_Model):
    """One invocation of ``empathos run`` on this directory."""

    started_at: str = Field(description="UTC start, ISO 8601.")
    finished_at: str | None = Field(None, description="UTC end, ISO 8601 (None while running).")
    status: Literal["running", "completed", "interrupted", "failed"] = Field(
        description="How the session ended."
    )
    planned: int = Field(0, ge=0, description="Dialogues selected by this session.")
    skipped: int = Field(0, ge=0, description="Finished earlier, so not run again.")
    ran: int = Field(0, ge=0, description="Dialogues finished by this session.")
    errors: int = Field(
        0, ge=0, description="Of those, dialogues that ended as errors (crashes included)."
    )
    crashed: int = Field(
        0, ge=0, description="Of those, dialogues an exception crashed (a bug; error records)."
    )
    failure: str | None = Field(
        None,
        description="Why the session failed (status 'failed'): e.g. every dialogue crashed "
        "or ended as an error, with the counts. None otherwise.",
    )


class RejudgeInfo(_Model):
    """What an ``empathos rejudge`` directory re-judged, and with which judge."""

    source: str = Field(description="The run directory whose dialogues were re-judged.")
    judge: str = Field(description="Model id of the new judge.")
    keep_p0: bool = Field(description="P_0 kept from the original (else the new IEDR).")


class BenchInfo(_Model):
    """What an ``empathos bench`` directory ran: the benchmark and the user's copy of it."""

    name: str = Field(
        description="The benchmark: a name in empathos.bench.protocol's registry (checked where "
        "the directory is read as a bench run, since run/ sits below bench/)."
    )
    data: str = Field(description="The user's copy it read (--data).")
    files: dict[str, str] = Field(
        description="Each file it read (path relative to --data) -> sha256 of its content."
    )
    protocol: str | None = Field(
        None,
        description="How it was run: EmoBench 'official' or 'paper'; EQ-Bench 'v2.1' or "
        "'revise' (docs/bench.md). None: before protocols were recorded.",
    )


class RunUsage(Usage):
    """Tokens and cost of every dialogue a run directory holds: in all, per dialogue (the
    mean, and each dialogue's own totals) and per role."""

    by_dialogue: dict[str, TokenCount] = Field(
        default_factory=dict, description="Each dialogue's totals, by id (<case>__t<trial>)."
    )


def run_usage(records: Sequence[tuple[str, DialogueRecord]]) -> RunUsage:
    """The usage of a run's records, given as (dialogue id, record)."""
    summary = usage_summary([r for _, r in records])
    by_dialogue = {key: count_calls(r.model_calls) for key, r in sorted(records)}
    return RunUsage(**summary.model_dump(), by_dialogue=by_dialogue)


class Manifest(_Model):
    """What a run directory was made with."""

    schema_version: Literal[1] = Field(1, description="Version of the manifest format.")
    created_at: str = Field(description="UTC time the directory was created, ISO 8601.")
    updated_at: str = Field(description="UTC time of the last write, ISO 8601.")
    config: RunConfig = Field(description="The resolved run config (no secrets).")
    fingerprint: dict[str, str] = Field(
        description="Hash of each config part that shapes a dialogue; a rerun resumes only "
        "when these match."
    )
    versions: dict[str, str] = Field(description="Python and package versions.")
    git_commit: str | None = Field(None, description="Commit of the empathos checkout, if any.")
    prompts: list[PromptInfo] = Field(description="Prompt templates used.")
    scenarios: list[ScenarioInfo] = Field(description="Scenarios selected, with hashes.")
    skipped_scenarios: list[str] = Field(
        default_factory=list, description="Invalid scenarios skipped: 'file: field: problem'."
    )
    sessions: list[Session] = Field(default_factory=list, description="Every invocation.")
    score_warning: str | None = Field(
        None,
        description="Why this run's scores are not meaningful (sandbox roles on the bundled "
        "135M model); None: no known reason. Every record carries the same warning.",
    )
    rejudge: RejudgeInfo | None = Field(
        None,
        description="Set on the directories `empathos rejudge` writes: the source run and "
        "the judge. None: an ordinary run.",
    )
    offline: dict[str, str] | None = Field(
        None,
        description="What the bundled offline model computed with: weights (float32 or "
        "bfloat16), torch threads, prefix cache bound in MiB. None: written before these "
        "were recorded.",
    )
    bench: BenchInfo | None = Field(
        None,
        description="Set on the directories `empathos bench` writes (their records are bench "
        "items, not dialogues). None: a run of EMPA dialogues.",
    )
    usage: RunUsage | None = Field(
        None,
        description="Tokens (cached prompt tokens apart) and cost of the dialogues the "
        "directory holds, in all, per dialogue and per role; written when a session ends.",
    )


def utc_now() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def redacted_config(config: RunConfig) -> RunConfig:
    """The config with every role's base URL redacted."""
    if config.roles is None:
        return config
    roles = config.roles
    update: dict[str, Any] = {}
    for name in type(roles).model_fields:
        endpoint = getattr(roles, name)
        if endpoint is not None and endpoint.base_url:
            update[name] = endpoint.model_copy(update={"base_url": redact_url(endpoint.base_url)})
    return config.model_copy(update={"roles": roles.model_copy(update=update)})


def package_versions() -> dict[str, str]:
    """Python and the installed versions of the packages a run depends on."""
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def git_commit() -> str | None:
    """The commit of the checkout empathos is imported from (None outside a git checkout)."""
    here = Path(__file__).resolve().parent
    if "site-packages" in here.parts or "dist-packages" in here.parts:
        return None  # an installed copy: any repository around it is not empathos's
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else None


def write_manifest(manifest: Manifest, run_dir: Path) -> None:
    """Write ``manifest.json`` atomically, stamping ``updated_at``."""
    manifest.updated_at = utc_now()
    manifest.config = redacted_config(manifest.config)
    write_text_atomic(run_dir / MANIFEST_NAME, manifest.model_dump_json(indent=1))


def read_manifest(run_dir: Path) -> Manifest | None:
    """The manifest of ``run_dir`` (None if it has none); a damaged one is a ConfigError."""
    path = run_dir / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"unreadable manifest: {exc}", file=path) from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != MANIFEST_SCHEMA_VERSION:
        raise ConfigError(
            f"unsupported manifest schema_version {version!r} (supported: 1)",
            file=path,
            field="schema_version",
        )
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(x) for x in first["loc"])
        raise ConfigError(first["msg"], file=path, field=field) from None


def fingerprint_parts(config: RunConfig, system_prompt_version: str) -> dict[str, str]:
    """What shapes a dialogue's content, part by part (hash each for a readable diff).

    Addresses, keys, timeouts, limits, retries and the cache do not count: the same model
    served on another port resumes the same run."""
    parts: dict[str, Any] = {}
    for role in REQUIRED_ROLES:
        ep = config.role(role)
        shaping = {
            "kind": ep.kind,
            "model": ep.model,
            "handler": ep.handler,
            "sampling": ep.sampling(),
        }
        if ep.resolved_prompt_style() != "full":  # full-style runs keep their old fingerprint
            shaping["prompt_style"] = ep.resolved_prompt_style()
        parts[f"roles.{role}"] = shaping
    if config.on_empty != "reply":  # only when set, so that older run directories resume
        parts["on_empty"] = config.on_empty
    parts.update(
        max_turns=config.max_turns,
        min_turns=config.min_turns,
        eval_every=config.eval_every,
        director_mode=config.director_mode,
        epm_preset=config.epm_preset,
        system_prompt=system_prompt_version,
    )
    return {k: digest(v) for k, v in parts.items()}


def digest(value: Any) -> str:
    """The first 16 hex digits of the sha256 of ``value``'s canonical JSON
    (:func:`empathos.canonical.canonical_digest`)."""
    return canonical_digest(value, 16)


def is_bench_dir(path: Path) -> bool:
    """True for a directory ``empathos bench`` wrote (its manifest names a benchmark)."""
    if not path.is_dir():
        return False
    try:
        manifest = read_manifest(path)
    except ConfigError:  # a damaged manifest: not ours to judge here
        return False
    return manifest is not None and manifest.bench is not None


def new_manifest(
    old: Manifest | None,
    config: RunConfig,
    fingerprint: dict[str, str],
    *,
    prompts: list[PromptInfo],
    scenarios: list[ScenarioInfo],
    earlier: list[Session] | None = None,
    **parts: Any,
) -> Manifest:
    """The manifest header every campaign writes as a session starts: created when ``old``
    was (else now), this installation's versions and commit, the sessions before (``earlier``,
    default ``old``'s) and this one, running; ``parts``: the campaign's own fields
    (``skipped_scenarios``, ``bench``, ``rejudge``, ...)."""
    now = utc_now()
    before = earlier if earlier is not None else (old.sessions if old else [])
    return Manifest(
        created_at=old.created_at if old else now,
        updated_at=now,
        config=config,
        fingerprint=fingerprint,
        versions=package_versions(),
        git_commit=git_commit(),
        prompts=prompts,
        scenarios=scenarios,
        sessions=[*before, Session(started_at=now, status="running")],
        **parts,
    )
