"""`empathos bench NAME` as a run: the cases, the run directory, the manifest, the jobs.

Everything but the items is ``empathos run``'s: the config (endpoints, concurrency, retries,
the call cache, prices) from :func:`empathos.run.config.load_run_config`, the locked and
resumable run directory (:func:`empathos.run.rundir.open_run_dir`, reading bench item
records with :func:`read_row`), the manifest (with its ``bench`` part), the concurrent runner
(:func:`empathos.run.runner.run_jobs`) and the session's close. A rerun plays only the items
the directory does not hold yet (and, by default, those that ended as errors).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from empathos.bench.play import BenchCase, Roles, roles_of
from empathos.bench.protocol import benchmark
from empathos.bench.record import BenchItemRecord, BenchName
from empathos.canonical import file_hashes
from empathos.errors import ConfigError, RecordError
from empathos.llm import ModelClient, ResponseCache
from empathos.llm.roles import build_role_model
from empathos.run.config import RunConfig
from empathos.run.manifest import (
    BenchInfo,
    Manifest,
    PromptInfo,
    RunUsage,
    ScenarioInfo,
    digest,
    new_manifest,
    read_manifest,
)
from empathos.run.prepared import PreparedSession, begin_session
from empathos.run.progress import RunProgress
from empathos.run.roles import check_api_keys, priced
from empathos.run.rundir import DialogueKey, IndexRow, open_run_dir
from empathos.run.runner import Job, RunOutcome, plan_jobs, run_jobs
from empathos.scoring.usage import count_calls, usage_summary

__all__ = [
    "PreparedBench",
    "bench_cases",
    "bench_usage",
    "execute_bench",
    "prepare_bench",
    "read_item",
    "read_row",
]


def read_item(file: Path) -> BenchItemRecord:
    """One bench item record; a RecordError naming the file when it cannot be read."""
    try:
        return BenchItemRecord.model_validate_json(file.read_bytes())
    except (OSError, ValidationError) as exc:
        problem = str(exc).splitlines()[0] if isinstance(exc, ValidationError) else str(exc)
        raise RecordError(f"not a bench item record ({problem})", file=file) from None


def read_row(file: Path, key: DialogueKey, relative: str) -> IndexRow:
    """The index row of a bench item record file (the run directory's row reader)."""
    return read_item(file).index_row(key, relative)


def bench_cases(
    name: BenchName, data: Path, protocol: str = ""
) -> tuple[list[BenchCase], list[Path]]:
    """Every item of the benchmark at ``data`` as a case (run by ``protocol``, default the
    benchmark's first), and the files they were read from."""
    bench = benchmark(name)
    return bench.cases(data, protocol or bench.protocols[0])


@dataclass
class PreparedBench(PreparedSession):
    """A bench run ready to execute (closed like a run: ``session.close_session``): the
    benchmark's cases and roles on the session's directory, manifest and plan."""

    name: BenchName
    config: RunConfig
    cases: list[BenchCase]
    roles: Roles
    clients: list[ModelClient]


def _fingerprint(
    name: BenchName, config: RunConfig, files: Sequence[Path], protocol: str = ""
) -> dict[str, str]:
    parts: dict[str, object] = {"bench": name}
    if protocol:  # a run's items are all of one protocol
        parts["protocol"] = protocol
    for role in benchmark(name).roles:
        ep = config.role(role)
        parts[f"roles.{role}"] = {"kind": ep.kind, "model": ep.model, "sampling": ep.sampling()}
    return {k: digest(v) for k, v in parts.items()}


def _manifest(
    name: BenchName, config: RunConfig, data: Path, hashes: dict[str, str],
    cases: Sequence[BenchCase], fingerprint: dict[str, str], old: Manifest | None,
) -> Manifest:  # fmt: skip
    return new_manifest(
        old, config, fingerprint,
        prompts=[
            PromptInfo(role="bench", language="any", id=path, version=sha)
            for path, sha in hashes.items()
        ],
        scenarios=[
            ScenarioInfo(id=c.id, hash=c.digest, language=c.language or "", source=str(data))
            for c in cases
        ],
        bench=BenchInfo(
            name=name, data=str(data), files=hashes, protocol=cases[0].protocol or None
        ),
    )  # fmt: skip


#: The role model's label in its calls, per run-config role a benchmark can call.
_LABELS = {"model_under_test": "tested", "judge": "judge", "user": "user"}


def _roles(
    name: BenchName, config: RunConfig, cache: ResponseCache | None
) -> tuple[Roles, list[ModelClient]]:
    models = []
    for role in benchmark(name).roles:  # the model under test first
        ep = priced(config, role)
        models.append((role, build_role_model(ep, _LABELS[role], cache, name=role), ep.model))
    return roles_of(models), [m for _, m, _ in models]


def prepare_bench(
    name: BenchName, data: Path, config: RunConfig, *, limit: int | None = None,
    force: bool = False, protocol: str = "",
) -> PreparedBench:  # fmt: skip
    """Read the benchmark, check the endpoints, open the run directory, plan the items."""
    check_api_keys(config)
    cases, files = bench_cases(name, data, protocol)
    cases = cases[:limit] if limit else cases
    if not cases:
        raise ConfigError("selects no item", field="--limit")
    assert config.out is not None
    out = Path(config.out)
    fingerprint = _fingerprint(name, config, files, cases[0].protocol)
    run_dir = open_run_dir(out, fingerprint, force=force, read_row=read_row)
    try:
        unreadable = run_dir.reconcile()
        hashes = file_hashes(data, files)
        old = read_manifest(out)
        same = old is not None and old.bench is not None and old.bench.files == hashes
        plan = plan_jobs(cases, 1, run_dir, retry_errors=config.retry_errors, same_source=same)
        cache = None
        if any(config.role(r).cache for r in ("model_under_test", "judge", "user")):
            cache = ResponseCache(config.cache_path or out / "cache.sqlite")
        roles, clients = _roles(name, config, cache)
        manifest = _manifest(name, config, data, hashes, cases, fingerprint, old)
        begin_session(manifest, plan, out)
    except BaseException:
        run_dir.close()
        raise
    return PreparedBench(
        name=name, config=config, cases=cases, roles=roles, clients=clients, run_dir=run_dir,
        manifest=manifest, plan=plan, unreadable=unreadable, cache=cache,
    )  # fmt: skip


async def execute_bench(prepared: PreparedBench, progress: RunProgress) -> RunOutcome:
    """Play the pending items; close the model clients whatever happens."""

    async def one(job: Job) -> BenchItemRecord:
        case = job.scenario
        assert isinstance(case, BenchCase)
        return await case.play(case, prepared.roles)

    try:
        return await run_jobs(
            prepared.plan.pending,
            prepared.run_dir,
            one,
            concurrency=prepared.config.concurrency,
            progress=progress,
            outcome=prepared.outcome,
        )
    finally:
        for client in prepared.clients:
            await client.aclose()


def bench_usage(records: Sequence[tuple[str, BenchItemRecord]]) -> RunUsage:
    """Tokens and cost of a bench directory's items (as a run's usage, per item)."""
    summary = usage_summary([r for _, r in records])
    by_item = {key: count_calls(r.model_calls) for key, r in sorted(records)}
    return RunUsage(**summary.model_dump(), by_dialogue=by_item)
