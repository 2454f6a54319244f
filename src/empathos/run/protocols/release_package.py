"""The EMPA release as a package: importing it, its cases, and what a run records of it.

- :func:`load_release` imports ``empa`` (only when the ``empa-release`` protocol is chosen)
  and checks the API the protocol drives.
- :func:`select_cases` resolves ``--cases official|all|ids`` through the release's loader.
- :func:`fingerprint` and :func:`manifest_parts`: the run's fingerprint (the release's
  version included) and the manifest's scenarios and prompts.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from empathos.canonical import canonical_digest
from empathos.errors import ConfigError
from empathos.run.config import RunConfig
from empathos.run.manifest import PromptInfo, ScenarioInfo, fingerprint_parts

__all__ = [
    "INSTALL_HINT",
    "PROTOCOL",
    "Release",
    "ReleaseCase",
    "fingerprint",
    "load_release",
    "manifest_parts",
    "release_system_prompt",
    "select_cases",
    "system_prompt_version",
]

PROTOCOL = "empa-release"
INSTALL_HINT = (
    "install your copy of the EMPA release with: pip install -e PATH "
    "(PATH: the release's checkout, the folder with its pyproject.toml or setup.py)"
)
_API: dict[str, tuple[str, ...]] = {
    "empa.llm.base": ("LLMClient", "Message", "ToolCall", "LLMResponse"),
    "empa.agents": ("Actor", "Judger", "Director", "TestModel"),
    "empa.rubric.empathy_v2.config": ("EmpathyRubricV2",),
    "empa.data.loader": ("load_config", "load_official_cases"),
    "empa.orchestrator.chat_loop": ("run_chat_loop",),
}


# -- the package ------------------------------------------------------------------------
@dataclass(frozen=True)
class Release:
    """The imported release: its modules, version and where it is installed."""

    modules: Mapping[str, ModuleType]
    version: str
    location: str

    def attr(self, module: str, name: str) -> Any:
        """``name`` of the release's module ``module`` (a name of the public API)."""
        return getattr(self.modules[module], name)


def _version(package: ModuleType) -> str:
    found = getattr(package, "__version__", None)
    if isinstance(found, str) and found:
        return found
    for dist in metadata.packages_distributions().get("empa", []):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


def load_release() -> Release:
    """Import the user's ``empa`` and check it has the API this protocol drives.

    Missing or incompatible: one ConfigError saying how to install it."""
    modules: dict[str, ModuleType] = {}
    try:
        package = importlib.import_module("empa")
        for name in _API:
            modules[name] = importlib.import_module(name)
    except ImportError as exc:
        if exc.name == "empa":
            what = "is not installed"
        elif (exc.name or "").startswith("empa.") and "empa" in sys.modules:
            what = f"installed is not a compatible EMPA release ({exc})"
        else:
            what = f"cannot be imported ({exc})"
        raise ConfigError(
            f"the package 'empa' (the EMPA release) {what}; {INSTALL_HINT}", field="--protocol"
        ) from None
    location = str(Path(package.__file__ or ".").resolve().parent)
    missing = [f"{m}.{n}" for m, names in _API.items() for n in names if not hasattr(modules[m], n)]
    if missing:
        raise ConfigError(
            f"the 'empa' package at {location} is not a compatible EMPA release (missing: "
            f"{', '.join(missing)}); {INSTALL_HINT}",
            field="--protocol",
        )
    return Release(modules=modules, version=_version(package), location=location)


# -- cases ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReleaseCase:
    """One case as the release's loader returns it (``scenario`` and ``actor_prompt``)."""

    id: str
    digest: str
    config: Mapping[str, Any] = field(compare=False, repr=False)

    def scenario_hash(self) -> str:
        """sha256 of the loaded case (a changed case is not resumed)."""
        return self.digest


def _all_ids(release: Release) -> list[str]:
    """Every case id of the release's data folder (``cases/<id>.md`` under ``empa/data``).

    The API has no listing function: this reads the published layout's file names."""
    data_dir = Path(release.modules["empa.data.loader"].__file__ or ".").resolve().parent
    ids = sorted({p.stem for p in data_dir.glob("**/cases/*.md")})
    if not ids:
        raise ConfigError(
            f"cannot list the release's cases (no cases/*.md under {data_dir}); give "
            "--cases official or case ids",
            field="--cases",
        )
    return ids


def select_cases(config: RunConfig, release: Release) -> list[ReleaseCase]:
    """``--cases`` (default: official) through the release's own loader; ours are refused."""
    if config.scenarios != "builtin":
        raise ConfigError(
            "the empa-release protocol runs the release's own cases (from its data folder), "
            "not scenario files; drop --scenarios and choose with --cases official|all|ids",
            field="--scenarios",
        )
    if config.language is not None:
        raise ConfigError(
            "does not apply to the empa-release protocol (choose cases with --cases)",
            field="--language",
        )
    if config.director_mode != "model":
        raise ConfigError(
            "the empa-release protocol runs the release's own director (a model)",
            field="director_mode",
        )
    loader = release.modules["empa.data.loader"]
    if config.cases is None or config.cases == "official":
        ids = [str(x) for x in loader.load_official_cases()]
    elif config.cases == "all":
        ids = _all_ids(release)
    else:
        ids = list(config.cases)
    ids = ids[: config.limit] if config.limit else ids
    if not ids:
        raise ConfigError("no case selected", field="--cases")
    cases: list[ReleaseCase] = []
    for case_id in ids:
        try:
            loaded = loader.load_config(case_id)
        except Exception as exc:
            raise ConfigError(
                f"the release's loader cannot load case {case_id!r} ({type(exc).__name__}: {exc})",
                field="--cases",
            ) from None
        if not isinstance(loaded, Mapping) or not {"scenario", "actor_prompt"} <= set(loaded):
            raise ConfigError(
                f"the release's load_config({case_id!r}) did not return scenario and "
                f"actor_prompt; {INSTALL_HINT}",
                field="--protocol",
            )
        digest = canonical_digest(loaded)
        cases.append(ReleaseCase(id=case_id, digest=digest, config=dict(loaded)))
    return cases


def release_system_prompt(config: RunConfig, rubric: Any) -> str:
    """The model under test's system prompt: the rubric's own, none, or a file's text."""
    if config.system_prompt == "default":
        return str(rubric.generate_test_model_system_prompt())
    if config.system_prompt == "none":
        return ""
    try:
        return Path(config.system_prompt).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", file=config.system_prompt) from None


def system_prompt_version(config: RunConfig) -> str:
    """What the model under test's system prompt is, for the run's fingerprint."""
    if config.system_prompt in ("default", "none"):
        return f"{PROTOCOL}:{config.system_prompt}"
    try:
        text = Path(config.system_prompt).read_bytes()
    except OSError as exc:
        problem = f"cannot read: {exc.strerror or exc}"
        raise ConfigError(problem, file=config.system_prompt) from None
    return f"{PROTOCOL}:custom:{hashlib.sha256(text).hexdigest()[:16]}"


def fingerprint(config: RunConfig, release: Release) -> dict[str, str]:
    """The run's fingerprint: the roles and turn settings as for our protocol, plus the
    protocol and the release's version (a directory resumes only with the same release)."""
    parts = fingerprint_parts(config, system_prompt_version(config))
    return {**parts, "protocol": f"{PROTOCOL}@{release.version}"}


def manifest_parts(
    config: RunConfig, release: Release, cases: Sequence[ReleaseCase]
) -> tuple[dict[str, ScenarioInfo], list[PromptInfo]]:
    """The manifest's scenarios and prompts: the release's cases, its prompts by version."""
    source = f"empa {release.version} ({release.location})"
    infos = {
        c.id: ScenarioInfo(id=c.id, hash=c.digest, language="release", source=source) for c in cases
    }
    prompts = [
        PromptInfo(role="all", language="release", id=PROTOCOL, version=release.version),
        PromptInfo(
            role="model_under_test",
            language="release",
            id=f"{PROTOCOL}:{config.system_prompt}"
            if config.system_prompt in ("default", "none")
            else f"custom:{config.system_prompt}",
            version=system_prompt_version(config),
        ),
    ]
    return infos, prompts
