"""One invocation of a run: select scenarios, open the run directory, run, close the session.

:func:`prepare_run` does everything that can fail on bad input before any model is called
(config, keys, handlers, scenarios, the run directory's config check) and writes the
manifest; :func:`execute` runs the pending dialogues; :func:`close_session` stamps the
session's outcome into the manifest (``run.leaderboard`` scores what the run holds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from empathos.errors import ConfigError, ScenarioError
from empathos.llm import ModelClient, ResponseCache
from empathos.llm.offline.model import offline_settings
from empathos.prompts import load_template, model_under_test_prompt
from empathos.records import DialogueRecord, crash_record, load_records
from empathos.run.config import RunConfig
from empathos.run.manifest import (
    Manifest,
    PromptInfo,
    RunUsage,
    ScenarioInfo,
    Session,
    digest,
    fingerprint_parts,
    new_manifest,
    read_manifest,
    run_usage,
    utc_now,
    write_manifest,
)
from empathos.run.prepared import PreparedSession, begin_session
from empathos.run.progress import RunProgress
from empathos.run.protocols import empa_release
from empathos.run.roles import build_roles, check_api_keys, check_handlers
from empathos.run.rundir import IndexRow, open_run_dir
from empathos.run.runner import (
    Case,
    DialogueFn,
    Job,
    RunOutcome,
    failure_reason,
    plan_jobs,
    run_jobs,
)
from empathos.sandbox.config import Roles, SandboxConfig
from empathos.scenarios import BUILTIN, DEFAULT_BUILTIN_IDS, Scenario, load_scenarios

__all__ = [
    "PreparedRun",
    "close_session",
    "execute",
    "prepare_run",
    "sandbox_config",
    "select_scenarios",
    "usage_of",
]

# Template role -> the config role whose endpoint decides its prompt style.
_TEMPLATE_ROLES = {
    "user": "user",
    "director": "director",
    "judge_iedr": "judge",
    "judge_mdep": "judge",
}


@dataclass
class PreparedRun(PreparedSession):
    """A run ready to execute: its config, scenarios and roles on the session's directory,
    manifest and plan (:class:`~empathos.run.prepared.PreparedSession`)."""

    config: RunConfig
    scenarios: Sequence[Case]  # Scenario; a ReleaseCase for --protocol empa-release
    invalid: list[ScenarioError]
    roles: Roles
    clients: list[ModelClient]

    @property
    def invalid_selected(self) -> list[ScenarioError]:
        """The invalid scenarios the run could have selected: they change its exit code.

        None when the run names its cases (they were all found) or when its limit was
        filled by valid scenarios; otherwise (every case, or the official set short of the
        limit) every invalid scenario counts, since its id may be unreadable."""
        cfg = self.config
        named = isinstance(cfg.cases, list) or (
            cfg.cases is None and cfg.scenarios == BUILTIN and cfg.offline_sandbox
        )
        filled = cfg.limit is not None and len(self.scenarios) >= cfg.limit
        return [] if named or filled else list(self.invalid)


def select_scenarios(config: RunConfig) -> tuple[list[Scenario], list[ScenarioError]]:
    """Load the scenario source and apply cases, language and limit.

    Invalid scenarios are returned apart (reported and skipped); the rest still run."""
    loaded = load_scenarios(config.scenarios)
    if not loaded.scenarios and loaded.errors:
        # nothing readable at all (a missing path, an empty folder): say why, not "no case"
        first, more = loaded.errors[0], len(loaded.errors) - 1
        extra = f" (and {more} more: see empathos scenarios check)" if more else ""
        raise ScenarioError(first.problem + extra, file=first.file, field=first.field)
    cases = config.cases
    ids: list[str] | Literal["official"] | None
    if cases is None and config.scenarios == BUILTIN and config.offline_sandbox:
        ids = list(DEFAULT_BUILTIN_IDS)
    elif cases is None or cases == "all":
        ids = None
    else:
        ids = cases
    chosen = loaded.select(ids, limit=config.limit, language=config.language)
    if not chosen:
        raise ConfigError(
            f"no scenario selected from {config.scenarios} "
            f"(cases={cases or 'default'}, language={config.language or 'any'})",
            field="--cases",
        )
    return chosen, list(loaded.errors)


def _languages(config: RunConfig, scenarios: list[Scenario]) -> list[str]:
    return sorted({config.language or s.labels.language for s in scenarios})


def _prompts(config: RunConfig, languages: list[str]) -> list[PromptInfo]:
    out: list[PromptInfo] = []
    for lang in languages:
        for role, owner in _TEMPLATE_ROLES.items():
            tpl = load_template(role, lang, config.role(owner).resolved_prompt_style())
            out.append(PromptInfo(role=role, language=lang, id=tpl.id, version=tpl.version))
        style = config.role("model_under_test").resolved_prompt_style()
        mut = model_under_test_prompt(config.system_prompt, lang, style)
        out.append(
            PromptInfo(
                role="model_under_test",
                language=lang,
                id=mut.id if mut else "none",
                version=mut.version if mut else "-",
            )
        )
    return out


def _templates(prompts: Sequence[PromptInfo]) -> str:
    """The fingerprint part of the sandbox roles' templates (id and version of each; the model
    under test's is the ``system_prompt`` part): a resume after a template changed is refused,
    naming ``templates``, rather than mixing versions in one run."""
    return digest(sorted(f"{p.role}:{p.language}:{p.id}@{p.version}" for p in prompts
                         if p.role != "model_under_test"))  # fmt: skip


def _to_check(fingerprint: dict[str, str], out: Path) -> dict[str, str]:
    """The fingerprint ``out`` is checked against: a run directory made before the templates
    were fingerprinted is checked against the versions its manifest lists instead."""
    old = read_manifest(out) if out.is_dir() else None
    if old is None or "templates" in old.fingerprint:
        return fingerprint
    if _templates(old.prompts) != fingerprint.get("templates"):
        return fingerprint  # refused: "differs in: templates"
    return {k: v for k, v in fingerprint.items() if k != "templates"}


def sandbox_config(config: RunConfig) -> SandboxConfig:
    """The sandbox settings of every dialogue of the run."""
    return SandboxConfig(
        preset=config.epm_preset,
        min_turns=config.min_turns,
        max_turns=config.max_turns,
        eval_every=config.eval_every,
        language=config.language,
        system_prompt=config.system_prompt,
        director=config.director_mode,
        on_empty=config.on_empty,
        judge_failures_limit=config.judge_failures_limit,
    )


def _utc(stamp: str) -> datetime:
    when = datetime.fromisoformat(stamp)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _settle_killed(sessions: list[Session], rows: dict[str, IndexRow]) -> list[Session]:
    """Earlier sessions still marked ``running`` were killed (we hold the directory's lock,
    so none is running): mark them ``interrupted``, counting the dialogues they finished
    from the index (a record's time is its dialogue's start)."""
    out: list[Session] = []
    for session in sessions:
        if session.status == "running":
            start = _utc(session.started_at)
            mine = [r for r in rows.values() if _utc(r.finished_at) >= start]
            errors = sum(r.status == "error" for r in mine)
            session = session.model_copy(
                update={"status": "interrupted", "ran": len(mine), "errors": errors}
            )
        out.append(session)
    return out


def _scenario_infos(scenarios: list[Scenario]) -> dict[str, ScenarioInfo]:
    return {
        s.id: ScenarioInfo(
            id=s.id,
            hash=s.scenario_hash(),
            language=s.labels.language,
            source=s.source.path,
        )
        for s in scenarios
    }


def _new_manifest(
    config: RunConfig,
    old: Manifest | None,
    fingerprint: dict[str, str],
    infos: dict[str, ScenarioInfo],
    prompts: list[PromptInfo],
    invalid: list[ScenarioError],
    rows: dict[str, IndexRow],
) -> Manifest:
    if old is not None:  # keep the scenarios of earlier sessions on record
        infos = {**{s.id: s for s in old.scenarios}, **infos}
    return new_manifest(
        old, config, fingerprint, prompts=prompts, scenarios=list(infos.values()),
        earlier=_settle_killed(old.sessions if old else [], rows),
        skipped_scenarios=[e.line() for e in invalid], score_warning=config.score_warning(),
        offline=offline_settings(),
    )  # fmt: skip


def prepare_run(config: RunConfig, *, force: bool = False) -> PreparedRun:
    """Check everything, open the run directory, write the manifest, plan the dialogues."""
    check_api_keys(config)
    check_handlers(config)
    scenarios: Sequence[Case]
    release = empa_release.load_release() if config.protocol == empa_release.PROTOCOL else None
    if release is None:
        sandbox_config(config).epm()  # fails now on turn settings the EPM refuses
        ours, invalid = select_scenarios(config)
        prompts = _prompts(config, _languages(config, ours))
        prompt_version = ";".join(
            f"{p.language}:{p.id}@{p.version}" for p in prompts if p.role == "model_under_test"
        )
        fingerprint = {
            **fingerprint_parts(config, prompt_version),
            "templates": _templates(prompts),
        }
        scenarios, infos = ours, _scenario_infos(ours)
    else:
        cases = empa_release.select_cases(config, release)
        fingerprint = empa_release.fingerprint(config, release)
        scenarios, invalid = cases, []
        infos, prompts = empa_release.manifest_parts(config, release, cases)
    assert config.out is not None
    out = Path(config.out)
    run_dir = open_run_dir(out, _to_check(fingerprint, out), force=force)
    try:
        unreadable = run_dir.reconcile()
        plan = plan_jobs(scenarios, config.trials, run_dir, retry_errors=config.retry_errors)
        cache = None
        if any(config.role(r).cache for r in ("user", "director", "judge", "model_under_test")):
            cache = ResponseCache(config.cache_path or out / "cache.sqlite")
        roles, clients = build_roles(config, cache)
        manifest = _new_manifest(
            config, read_manifest(out), fingerprint, infos, prompts, invalid, run_dir.rows()
        )
        if release is not None:
            manifest.versions["empa"] = release.version
        begin_session(manifest, plan, out)
    except BaseException:
        run_dir.close()  # releases the directory's lock
        raise
    return PreparedRun(
        config=config, scenarios=scenarios, invalid=invalid, roles=roles, clients=clients,
        run_dir=run_dir, manifest=manifest, plan=plan, cache=cache, unreadable=unreadable,
    )  # fmt: skip


async def execute(prepared: PreparedRun, progress: RunProgress) -> RunOutcome:
    """Run the pending dialogues; close the model clients whatever happens."""
    from empathos.sandbox import run_dialogue

    settings = sandbox_config(prepared.config)
    warning = prepared.config.score_warning()

    async def dialogue(job: Job) -> DialogueRecord:
        assert isinstance(job.scenario, Scenario)
        record = await run_dialogue(
            job.scenario,
            prepared.roles,
            settings,
            seed=job.key.trial,
            observer=progress.observer(job.key),
        )
        meta = {**record.metadata, "dialogue_id": job.key.id, "trial": job.key.trial}
        return record.model_copy(update={"metadata": meta, "score_warning": warning})

    def crashed(job: Job, exc: Exception) -> DialogueRecord:
        names = prepared.roles.names()
        return crash_record(
            scenario_id=job.scenario.id,
            scenario_hash=job.scenario.scenario_hash(),
            exc=exc,
            model=names.get("tested"),
            roles={k: v for k, v in names.items() if k != "tested"},
            config=settings.epm(),
            metadata={"dialogue_id": job.key.id, "trial": job.key.trial},
        ).model_copy(update={"score_warning": warning})

    chosen: DialogueFn = dialogue
    if prepared.config.protocol == empa_release.PROTOCOL:
        release = empa_release.load_release()
        chosen = empa_release.release_dialogue(
            release, prepared.config, prepared.roles, prepared.run_dir.path
        )
    try:
        return await run_jobs(
            prepared.plan.pending,
            prepared.run_dir,
            chosen,
            concurrency=prepared.config.concurrency,
            progress=progress,
            crash_record=crashed,
            outcome=prepared.outcome,
        )
    finally:
        for client in prepared.clients:
            await client.aclose()


def close_session(
    prepared: PreparedSession,
    outcome: RunOutcome | None,
    status: Literal["completed", "interrupted", "failed"],
) -> None:
    """Stamp this session's end and counts into the manifest; close the index and cache."""
    session = prepared.session
    session.finished_at = utc_now()
    session.status = status
    if outcome is not None:
        session.ran = len(outcome.rows)
        session.errors = outcome.errors
        session.crashed = len(outcome.crashed)
        session.failure = failure_reason(outcome)
        if session.failure is not None and status == "completed":
            session.status = "failed"
    prepared.manifest.usage = usage_of(prepared)
    write_manifest(prepared.manifest, prepared.run_dir.path)
    prepared.run_dir.close()
    if prepared.cache is not None:
        prepared.cache.close()


def usage_of(prepared: PreparedSession) -> RunUsage:
    """Tokens and cost of every dialogue the run directory holds (computed once)."""
    if prepared.usage is None:
        records, _ = load_records([prepared.run_dir.records])
        prepared.usage = run_usage([(x.path.stem, x.record) for x in records])
    return prepared.usage
