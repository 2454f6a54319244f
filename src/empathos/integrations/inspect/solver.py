"""The EMPA dialogue as an Inspect solver: ``empathos run``'s sandbox with Inspect's models.

The model under test is the eval's model (``--model``); the simulated user, the director
and the judge are the model roles ``user``, ``director`` and ``judge`` (``--model-role``).
Each sample runs :func:`empathos.sandbox.run_dialogue`, the one turn loop ``empathos run``
runs, with every role's :class:`~empathos.llm.ModelClient` over an Inspect model
(:mod:`.backend`). The epoch is the trial: epoch 1 runs trial 0 with seed 0, as
``empathos run --trials``.

A role call that fails after Inspect's retries is handled as ``empathos run`` handles a failed
call (:mod:`.backend`): a judge's is an unscored evaluation and the dialogue goes on. A
dialogue that ends as ``error`` (a failed user or model-under-test call, output that stayed
invalid after re-asks, ``judge_failures_limit`` evaluations in a row unscored) raises, so the
sample is an error in Inspect's terms, its message the ending's reason in one line; its
record stays in the store either way.
"""

from __future__ import annotations

from collections.abc import Mapping

from inspect_ai.model import get_model, model_roles
from inspect_ai.solver import Generate, Solver, TaskState, solver

from empathos.epm import TerminationKind
from empathos.errors import EmpathosError
from empathos.integrations.inspect.backend import InspectBackend, role_client
from empathos.integrations.inspect.dataset import EmpaSettings
from empathos.integrations.inspect.preflight import missing_roles_line, prerequisite
from empathos.integrations.inspect.transcript import keep_record
from empathos.llm import ModelClient
from empathos.records import DialogueRecord, crash_record
from empathos.run.rundir import DialogueKey
from empathos.sandbox import Roles, run_dialogue
from empathos.scenarios import Scenario

__all__ = [
    "SANDBOX_ROLES",
    "TESTED_ROLE",
    "DialogueEndedInError",
    "empa_dialogue",
    "needed_roles",
]

#: The Inspect model roles of the sandbox.
SANDBOX_ROLES = ("user", "director", "judge")
#: The role the model under test's events carry (its model is the eval's, ``--model``).
TESTED_ROLE = "tested"


class DialogueEndedInError(EmpathosError):
    """The dialogue ended as ``error``: the sample is an error in Inspect's terms."""


def needed_roles(director: str) -> tuple[str, ...]:
    """The model roles a dialogue calls (no director model when the director is 'rules')."""
    return SANDBOX_ROLES if director == "model" else ("user", "judge")


def _clients(director: str) -> dict[str, ModelClient]:
    """Our client of every role that is called, over the Inspect model bound to it; a role
    bound to nothing fails here, naming the flag that binds it."""
    bound = model_roles()
    missing = [role for role in needed_roles(director) if role not in bound]
    if missing:  # a task built in Python, given its roles by eval(): checked only now
        raise prerequisite(missing_roles_line(missing))
    # the eval's model under a role of its own, so its events are labelled too (Inspect
    # gives the eval's model no role); --model, unless a role "tested" is bound
    tested = get_model(role=TESTED_ROLE, default=get_model())
    clients = {"tested": role_client(tested, TESTED_ROLE)}
    for role in needed_roles(director):
        clients[role] = role_client(get_model(role=role, required=True), role)
    return clients


def _show_transcript(state: TaskState, tested: ModelClient) -> None:
    """The model under test's last request and reply become the sample's messages."""
    backend = tested.backend
    if isinstance(backend, InspectBackend) and backend.last_output is not None:
        state.messages = [*backend.last_input, backend.last_output.message]
        state.output = backend.last_output


async def _dialogue(
    scenario: Scenario, trial: int, settings: EmpaSettings, state: TaskState
) -> DialogueRecord:
    key = DialogueKey(scenario.id, trial)
    meta = {"dialogue_id": key.id, "trial": trial, "inspect_epoch": state.epoch}
    sandbox = settings.sandbox()
    clients: dict[str, ModelClient] = {}
    try:
        clients = _clients(settings.director)
        roles = Roles(
            user=clients["user"],
            judge=clients["judge"],
            director=clients.get("director"),
            tested=clients["tested"],
        )
        record = await run_dialogue(scenario, roles, sandbox, seed=trial)
    except Exception as exc:  # Inspect's model errors and limits: recorded, then re-raised
        crashed = crash_record(
            scenario_id=scenario.id,
            scenario_hash=scenario.scenario_hash(),
            exc=exc,
            model=str(get_model()),
            roles={role: c.config.model for role, c in clients.items() if role != "tested"},
            config=sandbox.epm(),
            metadata=meta,
        )
        keep_record(state.store, crashed)
        raise
    finally:
        if "tested" in clients:
            _show_transcript(state, clients["tested"])
    return record.model_copy(update={"metadata": {**record.metadata, **meta}})


def _ended(record: DialogueRecord) -> str:
    """Why the dialogue ended as ``error``, in one line: its reason and, when evaluations
    went unscored, the judge's own failure (the last one)."""
    reason = " ".join(record.termination.reason.split())
    why = [e.unscored_reason for e in record.evaluations if not e.scored and e.unscored_reason]
    return f"{reason}; last unscored: {' '.join(why[-1].split())}" if why else reason


@solver
def empa_dialogue(settings: EmpaSettings | None = None) -> Solver:
    """One EMPA dialogue per sample (its id is the scenario id), under the ``empa`` task's
    parameters (see :func:`empathos.integrations.inspect.task.empa`)."""
    settings = settings or EmpaSettings()
    table: Mapping[str, Scenario] = {s.id: s for s in settings.select()}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = table[str(state.sample_id)]
        record = await _dialogue(scenario, state.epoch - 1, settings, state)
        keep_record(state.store, record)
        if record.termination.kind is TerminationKind.ERROR:
            raise DialogueEndedInError(_ended(record), field="termination")
        return state

    return solve
