"""EMPA as a verifiers v1 environment: a taskset of scenarios and the dialogue as an ``Env``.

Follows verifiers' ``user_sim`` pattern: the scenario is the user's side of the world. Each
task's data holds the scenario card (:class:`EmpaTaskData`, ``scenario``) and no prompt; the
assistant (the one trainable agent, on verifiers' tool-less chat harness) gets only its system
prompt and the person's lines, turn by turn, never the card or the hidden story. The
simulated person, the director and the judge are EMPA's own roles on the endpoints the config
names (``sandbox_base_url`` for all three, ``roles.<role>`` per role): each of their calls is a
fresh prompt rendered from what the role may see (the released story, the director's
guidance, the EPM state), which a verifiers agent's continuing chat does not express, so they
are called directly and never produce training tokens. Their calls are in the dialogue
record on the assistant's trace.

Per turn the environment steps :class:`~empathos.sandbox.EmpathyEnv` with the assistant's
reply: the judge's ratings move the EPM, the director paces the story, termination is
checked. On the assistant's trace it records (names in :mod:`.turns`): the reward ``epmq``
(the dialogue's EPM-Q) or ``success`` (1/0), by ``reward``; the metrics ``success``,
``turns``, ``unscored_turns``, ``final_distance``, ``epmq`` and one ``termination_<kind>``
set to 1; and ``info["empathos"]`` with the per-turn rewards and distances and the record.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
import verifiers.v1 as vf
from pydantic import Field

from empathos.errors import ConfigError
from empathos.integrations.verifiers.turns import INFO_KEY, DialogueLog
from empathos.llm.roles import RoleEndpoint, build_role_model
from empathos.records import DialogueRecord
from empathos.sandbox import EmpathyEnv, Roles, SandboxConfig, state_packet
from empathos.scenarios import Scenario, load_scenarios

__all__ = ["EmpaEnv", "EmpaEnvConfig", "EmpaTask", "EmpaTaskData", "EmpaTaskset",
           "EmpaTasksetConfig"]  # fmt: skip

SANDBOX_ROLES = ("user", "judge", "director")
TERMINATIONS = ("success", "failure", "timeout", "error", "truncated")


class EmpaTasksetConfig(vf.TasksetConfig):  # type: ignore[misc]  # verifiers is untyped
    """Which scenarios load, under ``--env.taskset.*``."""

    scenarios: str = "builtin"
    """'builtin', a scenario file, a folder of ours or of the published EMPA layout."""
    cases: str | None = None
    """Scenario ids (comma-separated), 'official' or 'all' (default: all)."""
    language: Literal["en", "zh"] | None = None
    """Keep only scenarios in this language."""


class EmpaTaskData(vf.TaskData):  # type: ignore[misc]
    """One scenario: its card (persona, hidden story, P_0) as ``scenario``; no prompt (the
    person opens the conversation)."""

    scenario: dict[str, Any] = Field(default_factory=dict)


class EmpaTask(vf.Task[EmpaTaskData, vf.State, vf.TaskConfig]):  # type: ignore[misc]
    """A scenario to talk through; its rewards are recorded by :class:`EmpaEnv`."""

    @property
    def key(self) -> str:
        return str(self.data.id)


class EmpaTaskset(vf.Taskset[EmpaTask, EmpaTasksetConfig]):  # type: ignore[misc]
    """The scenarios of ``--env.taskset.scenarios`` (EMPA's loaders and selection)."""

    def load(self) -> Iterator[EmpaTask]:
        config = self.config
        loaded = load_scenarios(config.scenarios)
        if not loaded.scenarios and loaded.errors:
            raise ConfigError(loaded.errors[0].line(), field="env.taskset.scenarios")
        cases = config.cases
        ids: list[str] | Literal["official"] | None
        if cases is None or cases == "all":
            ids = None
        elif cases == "official":
            ids = "official"
        else:
            ids = [c.strip() for c in cases.split(",") if c.strip()]
        for scenario in loaded.select(ids, language=config.language):
            data = EmpaTaskData(id=scenario.id, name=scenario.id,
                                scenario=scenario.model_dump(mode="json"))  # fmt: skip
            yield EmpaTask(data, config.task)


class EmpaEnvConfig(vf.EnvConfig):  # type: ignore[misc]
    """The environment's knobs, under ``--env.*`` (docs/verifiers.md)."""

    assistant: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The model under test: the run's model (``--model``, ``--client.*``)."""
    sandbox_base_url: str | None = None
    """One OpenAI-compatible endpoint for the person, the director and the judge."""
    sandbox_model: str = ""
    """The model id sent to ``sandbox_base_url``."""
    sandbox_api_key_var: str | None = None
    """NAME of the environment variable holding its key (None: no key, local servers)."""
    roles: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per role (user, judge, director): an empathos endpoint (docs/run.md), over the above."""
    sandbox: dict[str, Any] = Field(default_factory=dict)
    """SandboxConfig fields (docs/sandbox.md): max_turns, min_turns, eval_every, director..."""
    reward: Literal["epmq", "success"] = "epmq"
    """The trace's reward: the dialogue's EPM-Q, or 1/0 for success."""
    seed: int = 0
    """Base of the dialogues' seeds (recorded in each record)."""


def _sandbox_roles(config: EmpaEnvConfig, sandbox: SandboxConfig) -> Roles:
    """The person, judge and (director 'model') director on the configured endpoints."""
    unknown = sorted(set(config.roles) - set(SANDBOX_ROLES))
    if unknown:
        raise ConfigError(f"unknown role(s) {unknown}: use {list(SANDBOX_ROLES)}", field="roles")
    shared: dict[str, Any] = {}
    if config.sandbox_base_url:
        shared = {
            "kind": "openai",
            "base_url": config.sandbox_base_url,
            "model": config.sandbox_model,
            "api_key_env": config.sandbox_api_key_var,
        }
    models = {}
    for role in SANDBOX_ROLES:
        if role == "director" and sandbox.director == "rules":
            continue
        spec = {**shared, **config.roles.get(role, {})}
        if not spec:
            raise ConfigError(
                f"no endpoint for the {role}: set --env.sandbox-base-url (one endpoint for "
                f"every sandbox role) or env.roles.{role}",
                field=f"env.roles.{role}",
            )
        models[role] = build_role_model(RoleEndpoint.model_validate(spec), role)
    return Roles(user=models["user"], judge=models["judge"], director=models.get("director"))


class EmpaEnv(vf.Env[EmpaEnvConfig]):  # type: ignore[misc]
    """One EMPA dialogue per episode (see the module docstring)."""

    def __init__(self, config: EmpaEnvConfig) -> None:
        super().__init__(config)
        try:
            self.sandbox = SandboxConfig.model_validate(config.sandbox)
        except ValueError as exc:
            raise ConfigError(f"invalid: {exc}", field="env.sandbox") from None
        self.roles = _sandbox_roles(config, self.sandbox)

    async def run(self, task: EmpaTask, agents: Any) -> None:
        scenario = Scenario.model_validate(task.data.scenario)
        seeds = np.random.SeedSequence([self.config.seed, task.data.idx or 0])
        seed = int(seeds.generate_state(1)[0])
        name = str(agents.assistant.config.model or "assistant")
        env = EmpathyEnv(self.roles, self.sandbox, model_name=name)
        await env.reset(scenario, seed=seed)
        if env.done:
            term = env.state.termination
            raise RuntimeError(f"scenario {scenario.id}: the dialogue could not start: "
                               f"{term.reason if term else 'unknown'}")  # fmt: skip
        log = DialogueLog(scenario.id, seed, start_distance=state_packet(env.state).distance)
        opening = env.observation()
        system = next((m.content for m in opening if m.role == "system"), None)
        # the assistant's task: its system prompt, no prompt (the person opens), the card
        # kept on the data for scoring only
        own = task.with_data(system_prompt=system, prompt=None)
        truncated = False
        async with agents.assistant.interaction(own) as chat:
            line = opening[-1].content
            while not env.done:
                segment = await chat.turn(line)
                if segment.terminated:
                    truncated = _ended_by_harness(env, chat.trace)
                    break
                step = await env.step(segment.last_reply)
                log.add(step)
                if step.done or not step.observation:
                    break
                line = step.observation[-1].content
            trace = chat.trace
        _record_outcome(trace, log, env.record(), self.config.reward, self.sandbox, truncated)


def _ended_by_harness(env: EmpathyEnv, trace: Any) -> bool:
    """The assistant's run ended before the dialogue: True when its own limits ended it (the
    dialogue is ``truncated``); a failed model call ends the dialogue as ``error``. Either way
    the record ends as ``error`` with the reason."""
    if not trace.errors:
        env.abort(f"truncated: the assistant's harness stopped ({trace.stop_condition})")
        return True
    last = trace.errors[-1]
    env.abort(f"the assistant's model call failed: {last.type}: {last.message}")
    return False


def _record_outcome(
    trace: Any,
    log: DialogueLog,
    record: DialogueRecord,
    reward: str,
    sandbox: SandboxConfig,
    truncated: bool,
) -> None:
    """The reward, the metrics and ``info[INFO_KEY]`` on the assistant's trace."""
    info = log.info(record, sandbox.epm().name, truncated)
    trace.info[INFO_KEY] = info
    success = 1.0 if info["termination"] == "success" else 0.0
    epmq = info["epmq"]
    if reward == "success":
        trace.record_reward("success", success)
    else:
        trace.record_reward("epmq", epmq if epmq is not None else 0.0)
    trace.record_metric("success", success)
    trace.record_metric("turns", float(info["turns"]))
    trace.record_metric("unscored_turns", float(sum(r is None for r in info["turn_rewards"])))
    final = info["final_distance"]
    trace.record_metric("final_distance", final if final is not None else math.nan)
    trace.record_metric("epmq", epmq if epmq is not None else math.nan)
    for kind in TERMINATIONS:
        trace.record_metric(f"termination_{kind}", 1.0 if info["termination"] == kind else 0.0)
