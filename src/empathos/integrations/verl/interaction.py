"""The EMPA sandbox as a verl multi-turn interaction (verl's ``BaseInteraction``).

verl's tool agent loop generates the policy's turn, then calls ``generate_response`` with the
conversation so far; we feed the policy's last reply to an :class:`EmpathyEnv`, which runs
the judge (the turn's reward), the EPM, termination, the director and the simulated user's
next line. verl appends the user line (masked out of the loss) and the turn's score to the
sample's ``turn_scores``; :class:`~empathos.integrations.verl.reward.TurnRewardManager`
puts each score on the last token of its turn for the estimator.

The interaction's ``config`` (from verl's interaction config file; every key optional)::

    roles:                     # user, judge, director: an empathos endpoint each
      user:     {kind: openai, base_url: http://roles:8000/v1, model: Qwen2.5-72B-Instruct}
      judge:    {kind: openai, base_url: http://roles:8000/v1, model: Qwen2.5-72B-Instruct}
      director: {kind: openai, base_url: http://roles:8000/v1, model: Qwen2.5-72B-Instruct}
    sandbox: {max_turns: 15, min_turns: 8, eval_every: 1, reward: distance, director: model}
    scenarios: builtin          # or a directory of ours, or a published EMPA layout
    cache: null                 # path of a response cache (SQLite) shared by the roles

Each sample names its scenario in ``extra_info.interaction_kwargs.scenario_id`` (written by
``empathos verl prepare``). The first user line is the persona's chat topic, which the
prepared prompt already holds (``open_with_topic``), so the policy and the environment agree
on turn 1.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from verl.interactions.base import BaseInteraction

from empathos.errors import ConfigError
from empathos.llm import EndpointConfig, ModelClient, ResponseCache, build_model
from empathos.llm.roles import load_handler
from empathos.sandbox import EmpathyEnv
from empathos.sandbox.config import Roles, SandboxConfig
from empathos.scenarios import BUILTIN, Scenario, load_scenarios

__all__ = ["EmpathyInteraction"]

_ROLE_NAMES = {"user": "user", "judge": "judge", "director": "director"}


def _client(spec: dict[str, Any], role: str, cache: ResponseCache | None) -> ModelClient:
    spec = dict(spec)
    handler = spec.get("handler")
    endpoint = EndpointConfig.model_validate(spec)
    loaded = load_handler(handler, role) if handler else None
    return build_model(endpoint, role, cache, handler=loaded)


class EmpathyInteraction(BaseInteraction):  # type: ignore[misc]  # verl is untyped
    """One :class:`EmpathyEnv` per rollout, keyed by verl's request id."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        sandbox = dict(config.get("sandbox") or {})
        sandbox.setdefault("open_with_topic", True)
        self.sandbox = SandboxConfig.model_validate(sandbox)
        if not self.sandbox.open_with_topic:
            raise ConfigError(
                "must be true under verl: the prepared prompt holds the first user line",
                field="sandbox.open_with_topic",
            )
        cache_path = config.get("cache")
        self.cache = ResponseCache(Path(cache_path)) if cache_path else None
        roles_cfg = dict(config.get("roles") or {})
        offline = {"kind": "offline"}
        clients = {
            name: _client(dict(roles_cfg.get(name) or offline), role, self.cache)
            for name, role in _ROLE_NAMES.items()
            if not (name == "director" and self.sandbox.director == "rules")
        }
        self.roles = Roles(
            user=clients["user"], judge=clients["judge"], director=clients.get("director")
        )
        source = str(config.get("scenarios") or BUILTIN)
        loaded = load_scenarios(source, kind="builtin" if source == BUILTIN else "own")
        self.scenarios: dict[str, Scenario] = {s.id: s for s in loaded.scenarios}
        if not self.scenarios:
            raise ConfigError(f"no valid scenario in {source}", field="scenarios")
        self._envs: dict[str, EmpathyEnv] = {}

    async def start_interaction(
        self, instance_id: str | None = None, *, scenario_id: str | None = None, **kwargs: Any
    ) -> str:
        """Reset a fresh environment on the sample's scenario (P_0 from the card or the IEDR)."""
        instance = await super().start_interaction(instance_id)
        if scenario_id not in self.scenarios:
            raise ConfigError(
                f"unknown scenario {scenario_id!r} (have {len(self.scenarios)})",
                field="interaction_kwargs.scenario_id",
            )
        env = EmpathyEnv(self.roles, self.sandbox, model_name=str(kwargs.get("model", "policy")))
        await env.reset(self.scenarios[scenario_id], seed=int(kwargs.get("seed", 0)))
        self._envs[str(instance)] = env
        return str(instance)

    def env(self, instance_id: str) -> EmpathyEnv:
        """The environment of a running rollout."""
        return self._envs[instance_id]

    async def generate_response(
        self, instance_id: str, messages: list[dict[str, Any]], **kwargs: Any
    ) -> tuple[bool, str, float, dict[str, Any]]:
        """Step with the policy's last reply: (done, next user line, reward, info).

        The reward is NaN for an unscored evaluation (the reward manager keeps it out of the
        loss); a turn without an evaluation (K > 1) reports NaN too: it was not scored."""
        env = self._envs[instance_id]
        if env.done:
            return True, "", math.nan, {"termination": _termination(env)}
        reply = _last_assistant(messages)
        step = await env.step(reply)
        info: dict[str, Any] = {"turn": step.info.turn, "evaluated": step.info.evaluated}
        reward = step.reward if step.info.evaluated and step.info.reward_valid else math.nan
        if step.done:
            info["termination"] = _termination(env)
            return True, "", reward, info
        user_line = step.observation[-1].content if step.observation else ""
        return False, user_line, reward, info

    async def calculate_score(self, instance_id: str | None = None, **kwargs: Any) -> float:
        """The dialogue's total distance decrease so far (for verl's logging)."""
        env = self._envs.get(instance_id or "")
        if env is None or env.state.epm is None:
            return 0.0
        return float(env.state.epm.points[0].distance - env.state.epm.points[-1].distance)

    async def finalize_interaction(self, instance_id: str | None = None, **kwargs: Any) -> None:
        """Release the rollout's environment."""
        self._envs.pop(instance_id or "", None)


def _last_assistant(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return str(message.get("content") or "")
    return ""


def _termination(env: EmpathyEnv) -> str | None:
    term = env.state.termination
    return None if term is None else term.kind.value
