"""The ``empa-release`` protocol: the published EMPA release's own loop under our runner.

The release (the package ``empa``, installed by the user from their own copy under its own
licence; never shipped or copied here) brings the prompts, the agents and the dialogue loop.
empathos brings the rest: each agent's ``LLMClient`` is a bridge to empathos's model client
of that role (:mod:`~empathos.run.protocols.release_bridge`), and the runner gives
concurrency, atomic records, resume, progress and the leaderboard.

- :mod:`~empathos.run.protocols.release_package`: importing the release, its cases, the
  run's fingerprint and manifest parts (re-exported here).
- :func:`release_dialogue` is the runner's dialogue function: the release's synchronous
  ``run_chat_loop`` runs in a worker thread per dialogue; the bridge calls back into the event
  loop; what the release prints goes to ``<out>/logs/<case>__t<k>.log``; the returned result
  (the published format) is stored as it is, plus an ``empathos`` object (protocol, release
  version, scenario hash, model calls). A dialogue in which any model call failed ends as an
  error naming the first failure, whatever the release's loop did with it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from empathos.errors import EmpathosError, RecordError
from empathos.llm import ModelClient
from empathos.records.io import record_from_data
from empathos.run.config import RunConfig
from empathos.run.protocols.release_bridge import (
    RELEASE_PENALTY,
    DialogueCalls,
    bridge_client,
)
from empathos.run.protocols.release_package import (
    INSTALL_HINT,
    PROTOCOL,
    Release,
    ReleaseCase,
    fingerprint,
    load_release,
    manifest_parts,
    release_system_prompt,
    select_cases,
    system_prompt_version,
)
from empathos.run.protocols.thread_logs import ThreadLogRouter
from empathos.run.runner import DialogueFn, Job, StoredRecord
from empathos.sandbox.config import Roles

__all__ = [
    "INSTALL_HINT",
    "LOGS_DIR",
    "PROTOCOL",
    "RELEASE_PENALTY",
    "Release",
    "ReleaseCase",
    "bridge_client",
    "fingerprint",
    "load_release",
    "manifest_parts",
    "release_dialogue",
    "select_cases",
    "system_prompt_version",
]

LOGS_DIR = "logs"


def _clients(roles: Roles) -> dict[str, ModelClient]:
    by_agent = {
        "actor": roles.user,
        "director": roles.director,
        "judger": roles.judge,
        "test_model": roles.tested,
    }
    out: dict[str, ModelClient] = {}
    for agent, model in by_agent.items():
        if not isinstance(model, ModelClient):
            raise TypeError(f"the {agent}'s model is not an empathos ModelClient: {model!r:.60}")
        out[agent] = model
    return out


def _run_loop(
    release: Release,
    case: ReleaseCase,
    config: RunConfig,
    bridges: Mapping[str, Any],
) -> Any:
    """The release's own loop, with its own agents (runs in a worker thread)."""
    rubric = release.attr("empa.rubric.empathy_v2.config", "EmpathyRubricV2")()
    prompt = release_system_prompt(config, rubric)
    agents = release.modules["empa.agents"]
    director = agents.Director(
        bridges["director"],
        scenario=case.config["scenario"],
        actor_prompt=case.config["actor_prompt"],
    )
    run_chat_loop = release.attr("empa.orchestrator.chat_loop", "run_chat_loop")
    return run_chat_loop(
        agents.Actor(bridges["actor"]),
        director,
        agents.Judger(bridges["judger"]),
        agents.TestModel(bridges["test_model"], system_prompt=prompt),
        rubric,
        case.id,
        max_turns=config.max_turns,
        K=config.eval_every,
        test_model_name=config.role("model_under_test").model,
    )


def _error_document(case: ReleaseCase, config: RunConfig) -> dict[str, Any]:
    """A published-format stand-in for a dialogue that ended in an error (never scored)."""
    zero = [0, 0, 0]
    return {
        "script_id": case.id,
        "test_model_name": config.role("model_under_test").model,
        "total_turns": 0,
        "termination_reason": "error",
        "status": "error",
        "history": [],
        "epj": {
            "P_0_initial_deficit": zero,
            "trajectory": [
                {
                    "turn": 0,
                    "P_t": zero,
                    "v_t": zero,
                    "distance": 0.0,
                    "in_zone": False,
                    "epm": {"P_norm": 0.0, "E_total": 0.0, "projection": 0.0, "alignment": 0.0},
                }
            ],
            "K": config.eval_every,
            "epm_params": {"alpha": 0.1},
        },
    }


def _reason(exc: BaseException) -> str:
    if isinstance(exc, EmpathosError):
        return exc.line()
    return f"the release's loop raised {type(exc).__name__}: {exc}"[:500]


def release_dialogue(
    release: Release, config: RunConfig, roles: Roles, run_dir: Path
) -> DialogueFn:
    """The runner's dialogue function for this protocol (call it inside the event loop)."""
    loop = asyncio.get_running_loop()
    # One worker thread per dialogue in flight (the default pool is sized by CPU count);
    # asyncio.run shuts it down at the end.
    loop.set_default_executor(
        ThreadPoolExecutor(max_workers=config.concurrency + 4, thread_name_prefix="empa-release")
    )
    clients = _clients(roles)
    router = ThreadLogRouter()

    async def dialogue(job: Job) -> StoredRecord:
        case = job.scenario
        if not isinstance(case, ReleaseCase):
            raise TypeError(f"not a case of the release: {case!r:.60}")
        log = Path(LOGS_DIR) / f"{job.key.id}.log"
        state = DialogueCalls(loop=loop)
        bridges = {
            agent: bridge_client(release, client, agent, state) for agent, client in clients.items()
        }

        def work() -> Any:
            with router.capture(run_dir / log):
                return _run_loop(release, case, config, bridges)

        error: str | None = None
        with router.installed():
            try:
                document = await loop.run_in_executor(None, work)
            except asyncio.CancelledError:
                state.cancelled.set()
                raise
            except Exception as exc:
                error, document = _reason(exc), _error_document(case, config)
        if state.failure is not None:  # the release may have caught it and gone on
            error, document = state.failure, _error_document(case, config)
        elif not isinstance(document, dict) or "epj" not in document:
            error = f"the release's loop returned no published-format result: {document!r:.80}"
            document = _error_document(case, config)
        return _stored(document, error, case, job, release, state, run_dir / log, config)

    return dialogue


def _stored(
    document: dict[str, Any],
    error: str | None,
    case: ReleaseCase,
    job: Job,
    release: Release,
    state: DialogueCalls,
    log: Path,
    config: RunConfig,
) -> StoredRecord:
    """The record file's text (the release's result plus our mark) and the record read back."""
    mark: dict[str, Any] = {
        "protocol": PROTOCOL,
        "release_version": release.version,
        "dialogue_id": job.key.id,
        "trial": job.key.trial,
        "scenario_hash": case.digest,
        "log": f"{LOGS_DIR}/{log.name}",
        "model_calls": [c.model_dump(mode="json", exclude_none=True) for c in state.calls],
    }
    if error is not None:
        mark["error"] = error
    text = json.dumps({**document, "empathos": mark}, ensure_ascii=False, indent=1, default=str)
    try:
        record = record_from_data(json.loads(text), file=log)
    except RecordError as exc:
        mark["error"] = f"the release's result cannot be read: {exc.line()}"
        fallback = {**_error_document(case, config), "empathos": mark}
        text = json.dumps(fallback, ensure_ascii=False, indent=1, default=str)
        record = record_from_data(json.loads(text), file=log)
    return StoredRecord(record=record, text=text)
