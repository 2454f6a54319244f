"""The EMPA sandbox: the four agents, the environment, and the turn loop built on it.

- :func:`run_dialogue`: one dialogue of a model under test -> a complete ``DialogueRecord``;
- :class:`EmpathyEnv`: ``reset(scenario, seed)`` / ``step(reply)`` for RL and custom loops;
- :class:`SandboxConfig`, :class:`Roles`: what a dialogue runs with;
- the agents (``UserAgent``, ``TestedAgent``, ``JudgeAgent``, ``DirectorAgent``) and the
  rule-based director (:func:`rule_action`). See ``docs/sandbox.md``.
"""

from empathos.sandbox.agents import (
    Agent,
    DirectorAgent,
    DirectorDecision,
    Failure,
    JudgeAgent,
    TestedAgent,
    TestedReply,
    UserAgent,
)
from empathos.sandbox.config import DirectorMode, RewardKind, Roles, SandboxConfig, model_name
from empathos.sandbox.director_rules import deepest_axis, rule_action
from empathos.sandbox.env import EmpathyEnv, EnvStep, StepInfo
from empathos.sandbox.events import DialogueObserver, TurnEvent
from empathos.sandbox.loop import run_dialogue
from empathos.sandbox.state import (
    DialogueState,
    DirectorView,
    JudgeView,
    StatePacket,
    TestedView,
    UserView,
    state_packet,
)

__all__ = [
    "Agent",
    "DialogueObserver",
    "DialogueState",
    "DirectorAgent",
    "DirectorDecision",
    "DirectorMode",
    "DirectorView",
    "EmpathyEnv",
    "EnvStep",
    "Failure",
    "JudgeAgent",
    "JudgeView",
    "RewardKind",
    "Roles",
    "SandboxConfig",
    "StatePacket",
    "StepInfo",
    "TestedAgent",
    "TestedReply",
    "TestedView",
    "TurnEvent",
    "UserAgent",
    "UserView",
    "deepest_axis",
    "model_name",
    "rule_action",
    "run_dialogue",
    "state_packet",
]
