"""`empathos rejudge` as a run: the output directory, its manifest, the plan, the jobs.

:func:`prepare_rejudge` checks everything that can fail on bad input before any model is
called (the source run, its records, their scenarios, the judge) and opens the output run
directory (its lock, fingerprint and index: a rerun resumes, rating only what is missing);
:func:`execute_rejudge` re-judges the pending dialogues with the runner of ``empathos run``
(``concurrency`` at once, each written and indexed as it ends); the session is closed with
:func:`empathos.run.session.close_session`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from empathos.epm import EPMConfig
from empathos.errors import ConfigError, RecordError
from empathos.llm import ModelClient, build_model
from empathos.llm.offline import OFFLINE_MODEL_ID
from empathos.llm.roles import RoleEndpoint, load_handler
from empathos.prompts import load_template
from empathos.records import DialogueRecord, LoadedRecord, crash_record, load_records
from empathos.run.manifest import (
    Manifest,
    PromptInfo,
    RejudgeInfo,
    digest,
    new_manifest,
    read_manifest,
)
from empathos.run.prepared import PreparedSession, begin_session
from empathos.run.progress import RunProgress
from empathos.run.rejudge import Source, rejudge_record
from empathos.run.rundir import DialogueKey, RunDir, open_run_dir
from empathos.run.runner import Job, Plan, RunOutcome, run_jobs
from empathos.sandbox.agents import JudgeAgent
from empathos.sandbox.events import TurnEvent
from empathos.scenarios import Scenario, load_scenarios

__all__ = ["PreparedRejudge", "execute_rejudge", "prepare_rejudge", "rejudge_judge"]


@dataclass
class PreparedRejudge(PreparedSession):
    """A re-judging ready to execute (closed like a run: ``session.close_session``): the
    source run, its records and scenarios, and the judge, on the session's directory."""

    source: Path
    judge: RoleEndpoint
    keep_p0: bool
    concurrency: int
    originals: dict[str, LoadedRecord]
    scenarios: dict[str, Scenario]
    client: ModelClient


def _scenarios(sources: Sequence[str | Path], needed: dict[str, set[str]]) -> dict[str, Scenario]:
    """The scenario of every dialogue, by id; each as the dialogue was run with it (the same
    content hash), since the judge sees its card and story."""
    found: dict[str, Scenario] = {}
    for src in sources:
        for scenario in load_scenarios(src).scenarios:
            found.setdefault(scenario.id, scenario)
    missing = sorted(set(needed) - set(found))
    changed = sorted(
        k for k, hashes in needed.items() if k in found and hashes - {"", found[k].scenario_hash()}
    )
    for problem, ids in (("no scenario for", missing), ("changed since the run:", changed)):
        if ids:
            more = " ..." if len(ids) > 5 else ""
            raise ConfigError(
                f"{problem} {', '.join(ids[:5])}{more} (in {', '.join(map(str, sources))}); "
                "name the run's scenarios with --scenarios",
                field="--scenarios",
            )
    return {k: found[k] for k in needed}


def _key(item: LoadedRecord) -> DialogueKey:
    case, sep, trial = item.path.stem.rpartition("__t")
    if sep and trial.isdigit():
        return DialogueKey(case, int(trial))
    return DialogueKey(item.record.scenario_id, int(item.record.metadata.get("trial") or 0))


def _fingerprint(source: Path, judge: RoleEndpoint, keep_p0: bool) -> dict[str, str]:
    shaping = {
        "kind": judge.kind,
        "model": judge.model,
        "handler": judge.handler,
        "sampling": judge.sampling(),
        "prompt_style": judge.resolved_prompt_style(),
    }
    return {
        "protocol": digest("rejudge"),
        "source": digest(str(source.resolve())),
        "roles.judge": digest(shaping),
        "p0": digest("keep" if keep_p0 else "rerate"),
    }


def _plan(originals: dict[str, LoadedRecord], run_dir: RunDir) -> Plan:
    rows = run_dir.rows()
    pending, finished = [], []
    for dialogue_id, item in sorted(originals.items()):
        row = rows.get(dialogue_id)
        if row is not None and row.status == "done":
            finished.append(row)
        else:
            key = _key(item)
            pending.append(Job(key, Source(item.record, item.path)))
    return Plan(pending=pending, finished=finished)


def _manifest(
    old: Manifest | None, base: Manifest, judge: RoleEndpoint, info: RejudgeInfo, fp: dict[str, str]
) -> Manifest:
    config = base.config
    roles = config.roles.model_copy(update={"judge": judge}) if config.roles else None
    langs = sorted({s.language for s in base.scenarios}) or ["en"]
    style = judge.resolved_prompt_style()
    prompts = [
        PromptInfo(role=role, language=lang, id=tpl.id, version=tpl.version)
        for lang in langs
        for role in ("judge_iedr", "judge_mdep")
        for tpl in (load_template(role, lang, style),)
    ]
    return new_manifest(
        old, config.model_copy(update={"roles": roles}), fp, prompts=prompts,
        scenarios=base.scenarios, score_warning=base.score_warning, rejudge=info,
    )  # fmt: skip


def rejudge_judge(judge: RoleEndpoint | None, base: RoleEndpoint) -> RoleEndpoint:
    """The judge to re-rate with: ``judge`` as given, the run's own when None; a judge named
    by its model id alone (no endpoint: no base URL, no kind) is asked at the run's own judge
    endpoint (its URL, key variable, limits and sampling), refused when the run's judge is no
    HTTP endpoint (never the bundled 135M model recorded under another name)."""
    if judge is None:
        return base
    if judge.kind != "offline" or judge.model == OFFLINE_MODEL_ID:
        return judge
    if base.kind != "openai":
        raise ConfigError(
            f"judge {judge.model!r} names no endpoint and the run's own judge "
            f"({base.model}, kind {base.kind}) has none to ask it at; give its endpoint with "
            "--judge-base-url (or judge: base_url in --config)",
            field="--judge-model",
        )
    update: dict[str, object] = {"model": judge.model, "price": None, "name": None}
    if judge.api_key_env is not None:
        update["api_key_env"] = judge.api_key_env
    return base.model_copy(update=update)


def _check_out(out: Path, source: Path) -> None:
    """``out`` may only be new, empty, or a re-judging of ``source`` (which ``--force`` may
    start over): never another run, whose records starting over would delete."""
    if out.resolve() == source.resolve():
        raise ConfigError("is the run being re-judged; choose another --out", field="--out")
    old = read_manifest(out) if out.is_dir() else None
    if old is None:
        return
    if old.rejudge is None:
        raise ConfigError(
            "is a run directory (made by empathos run), not a re-judging: its records are "
            "never touched; choose another --out",
            file=out,
            field="--out",
        )
    if Path(old.rejudge.source).resolve() != source.resolve():
        raise ConfigError(
            f"holds a re-judging of another run ({old.rejudge.source}), not of {source}; "
            "choose another --out",
            file=out,
            field="--out",
        )


def _damage(record: DialogueRecord) -> str | None:
    """Why a stored dialogue cannot be re-judged (turns missing, evaluations that do not
    match its turns), else None: re-judging it would score a dialogue that is not there."""
    n = len(record.turns)
    if record.total_turns > n:
        return f"holds {n} of the {record.total_turns} turn(s) it ran (turns missing)"
    cfg = record.epm_config or EPMConfig()
    due = {t for t in range(1, n + 1) if t % cfg.eval_every == 0 or t >= cfg.max_turns}
    wrong = [e.turn for e in record.evaluations if e.turn not in due]
    turns = [e.turn for e in record.evaluations]
    if wrong or turns != sorted(set(turns)):
        shown = ", ".join(map(str, (wrong or turns)[:5]))
        return (
            f"its evaluations (at turn(s) {shown}) do not match its {n} turn(s) "
            f"(an evaluation every {cfg.eval_every} turns)"
        )
    return None


def _sound(loaded: Sequence[LoadedRecord]) -> tuple[list[LoadedRecord], list[RecordError]]:
    """The records that can be re-judged, and one error naming each damaged one."""
    good: list[LoadedRecord] = []
    damaged: list[RecordError] = []
    for item in loaded:
        problem = _damage(item.record)
        if problem is None:
            good.append(item)
        else:
            damaged.append(RecordError(f"damaged, not re-judged: {problem}", file=item.path))
    return good, damaged


def _close_unused(client: ModelClient) -> None:
    """Close a client no call was made with (outside an event loop, as prepare runs)."""
    asyncio.run(client.aclose())


def prepare_rejudge(
    source: Path,
    out: Path,
    judge: RoleEndpoint | None,
    *,
    scenarios: Sequence[str | Path] = (),
    keep_p0: bool = False,
    concurrency: int = 4,
    force: bool = False,
) -> PreparedRejudge:
    """Check the source run, its scenarios and the judge (the run's own when None); open
    ``out`` (resuming what it holds) and write its manifest."""
    base = read_manifest(source)
    if base is None:
        raise ConfigError("is not a run directory (no manifest.json)", file=source, field="RUN")
    judge = rejudge_judge(judge, base.config.role("judge"))
    price = base.config.prices.get(judge.model)
    if price is not None and judge.price is None:  # the run's price table prices it too
        judge = judge.model_copy(update={"price": price})
    handler = load_handler(judge.handler, "judge") if judge.handler else None
    everything, unreadable = load_records([source / "records"])
    loaded, damaged = _sound(everything)
    unreadable += damaged
    originals = {_key(x).id: x for x in loaded}
    if not originals:
        what = "no dialogue record that can be re-judged" if everything else "no dialogue records"
        raise ConfigError(f"holds {what}", file=source / "records", field="RUN")
    sources: list[str | Path] = list(scenarios) or [base.config.scenarios]
    needed: dict[str, set[str]] = {}
    for x in loaded:
        needed.setdefault(x.record.scenario_id, set()).add(x.record.scenario_hash or "")
    found = _scenarios(sources, needed)
    _check_out(out, source)
    # The judge's client before ``out`` is made: a judge that cannot be asked (its key unset)
    # leaves no folder behind; closed again when the directory is refused.
    client = build_model(judge, "judge", None, handler=handler)
    fp = _fingerprint(source, judge, keep_p0)
    try:
        run_dir = open_run_dir(out, fp, force=force)
    except BaseException:
        _close_unused(client)
        raise
    try:
        problems = run_dir.reconcile()
        plan = _plan(originals, run_dir)
        info = RejudgeInfo(source=str(source), judge=judge.model, keep_p0=keep_p0)
        manifest = _manifest(read_manifest(out), base, judge, info, fp)
        begin_session(manifest, plan, out)
    except BaseException:
        _close_unused(client)
        run_dir.close()
        raise
    return PreparedRejudge(
        source=source, judge=judge, keep_p0=keep_p0, concurrency=concurrency,
        originals=originals, scenarios=found, client=client, run_dir=run_dir,
        manifest=manifest, plan=plan, unreadable=unreadable + problems,
    )  # fmt: skip


def _event(record: DialogueRecord) -> TurnEvent:
    """What a re-judged dialogue adds to the progress bar: its turns, the judge's tokens."""
    calls = record.model_calls
    return TurnEvent(
        scenario_id=record.scenario_id,
        turn=record.total_turns,
        done=True,
        termination=record.termination.kind,
        n_calls=len(calls),
        input_tokens=sum(c.prompt_tokens or 0 for c in calls),
        output_tokens=sum(c.completion_tokens or 0 for c in calls),
        cost_usd=sum(c.cost_usd or 0.0 for c in calls),
    )


async def execute_rejudge(prepared: PreparedRejudge, progress: RunProgress) -> RunOutcome:
    """Re-judge the pending dialogues; close the judge's client whatever happens."""
    agent = JudgeAgent(prepared.client)
    judge_name = prepared.judge.model

    async def one(job: Job) -> DialogueRecord:
        assert isinstance(job.scenario, Source)
        scenario = prepared.scenarios[job.scenario.record.scenario_id]
        record = await rejudge_record(
            job.scenario, scenario, agent, judge_name, keep_p0=prepared.keep_p0
        )
        progress.observer(job.key)(_event(record))
        return record

    def crashed(job: Job, exc: Exception) -> DialogueRecord:
        assert isinstance(job.scenario, Source)
        rec = job.scenario.record
        return crash_record(
            scenario_id=rec.scenario_id, scenario_hash=rec.scenario_hash, exc=exc,
            model=rec.model, roles={**rec.roles, "judge": judge_name},
            config=rec.epm_config or EPMConfig(),
            metadata={**rec.metadata, "rejudged_from": str(job.scenario.path)},
        )  # fmt: skip

    try:
        return await run_jobs(
            prepared.plan.pending,
            prepared.run_dir,
            one,
            concurrency=prepared.concurrency,
            progress=progress,
            crash_record=crashed,
            outcome=prepared.outcome,
        )
    finally:
        await prepared.client.aclose()
