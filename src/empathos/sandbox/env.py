"""The EMPA environment: ``reset(scenario, seed)`` and ``step(reply)`` (SANDBOX_SPEC section 4).

The turn loop of :func:`empathos.sandbox.run_dialogue` is this environment driven by the
model-under-test agent (:meth:`EmpathyEnv.step_agent`); RL code calls :meth:`EmpathyEnv.step`
with the policy's reply. Both go through the same ``_advance``. Per turn, in order: the
reply closes turn t; every K turns (and at max_turns) the judge rates the window and the EPM
steps; termination is checked; the director acts; the user agent writes turn t+1's line.

Pure asyncio: no threads, no events; many environments run concurrently in one loop.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from empathos.epm import (
    EPMPoint,
    EPMState,
    Termination,
    TerminationKind,
    check_termination,
    init_state,
    start_problem,
)
from empathos.errors import ConfigError
from empathos.llm import Message, prompt_style_of
from empathos.prompts import RenderedPrompt, model_under_test_prompt
from empathos.records import DialogueRecord, IndicatorRating, InitialDeficit
from empathos.rubric import EMPATHY_RUBRIC, p0_from_iedr
from empathos.sandbox.agents import (
    Agent,
    DirectorAgent,
    Failure,
    JudgeAgent,
    Ratings,
    TestedReply,
    UserAgent,
    clip,
)
from empathos.sandbox.config import Roles, SandboxConfig
from empathos.sandbox.emotion import EmotionSource
from empathos.sandbox.events import DialogueObserver, TurnEvent
from empathos.sandbox.state import (
    DialogueState,
    StatePacket,
    TestedView,
    director_view,
    judge_view,
    state_packet,
    tested_view,
    user_view,
)
from empathos.sandbox.transitions import apply_director, apply_evaluation, current_epm
from empathos.scenarios import Scenario

__all__ = ["EmpathyEnv", "EnvStep", "StepInfo", "initial_deficit"]


class StepInfo(BaseModel):
    """What :meth:`EmpathyEnv.step` reports besides the observation and reward."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int = Field(description="The turn the reply closed.")
    evaluated: bool = Field(description="The judge rated a window at this turn.")
    scored: bool | None = Field(description="The evaluation was scored (None: no evaluation).")
    reward_valid: bool = Field(
        description="False when the turn is unscored (no evaluation at this turn, or an "
        "unscored one): the reward is NaN, not a value."
    )
    unscored_reason: str | None = Field(description="Why the turn is unscored.")
    ratings: Ratings = Field(description="The judge's ratings at this turn (empty if none).")
    packet: StatePacket | None = Field(description="The EPM state packet after this turn.")
    termination: Termination | None = Field(description="How the dialogue ended, if it did.")
    director_action: str | None = Field(description="The director's action at this turn.")


class EnvStep(NamedTuple):
    """``(observation, reward, done, info)``. Reward: see :class:`EmpathyEnv`."""

    observation: list[Message]
    reward: float
    done: bool
    info: StepInfo


class EmpathyEnv:
    """One dialogue as an environment. Reward per step (``config.reward``):

    - ``distance`` (default): d(P_{t-1}) - d(P_t), the decrease of the half-space distance;
    - ``delta_e``: the energy increment delta_E_t.

    A turn without an evaluation (K > 1) is unscored: nobody judged it, so its reward is NaN
    with ``info.reward_valid`` false (its effect is in the reward of the next evaluation,
    which rates the whole window). An unscored evaluation is NaN the same way. Never a
    silent 0.
    """

    def __init__(
        self,
        roles: Roles,
        config: SandboxConfig | None = None,
        *,
        model_name: str = "policy",
        observer: DialogueObserver | None = None,
    ) -> None:
        self.config = config or SandboxConfig()
        self.epm_config = self.config.epm()
        if self.config.director == "model" and roles.director is None:
            raise ConfigError("the director is 'model' but no director model is given",
                              field="roles.director")  # fmt: skip
        self.roles = roles
        self.model_name = model_name
        self.observer = observer
        self.user = UserAgent(roles.user)
        self.judge = JudgeAgent(roles.judge)
        director = roles.director if self.config.director == "model" else None
        self.director = DirectorAgent(director, reveal_every=self.config.reveal_every)
        self.emotion = (  # SAGE's emotion as the reward source (sandbox/emotion.py)
            EmotionSource.from_copy(self.config.sage_data, roles.user)
            if self.config.reward.startswith("sage_") and self.config.sage_data
            else None
        )
        self.system_prompt: RenderedPrompt | None = None
        self._state: DialogueState | None = None
        self._last_eval = 0
        self._seen_calls = 0
        self._seed = 0
        self._started = ""

    # -- public API -------------------------------------------------------------------------
    @property
    def state(self) -> DialogueState:
        """The current (frozen) dialogue state."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    @property
    def done(self) -> bool:
        """Whether the dialogue has ended."""
        return self._state is not None and self._state.termination is not None

    def observation(self) -> list[Message]:
        """The messages the policy sees: its system prompt (if any) and the chat."""
        return list(tested_view(self.state, self.system_prompt).messages)

    def tested_view(self) -> TestedView:
        """The model under test's view of the current state."""
        return tested_view(self.state, self.system_prompt)

    async def reset(self, scenario: Scenario, seed: int = 0) -> list[Message]:
        """Start a dialogue: P_0 (stored, else the judge's IEDR) and turn 1's user line."""
        language = self.config.language or scenario.labels.language
        style = prompt_style_of(self.roles.tested) if self.roles.tested is not None else "full"
        self.system_prompt = model_under_test_prompt(self.config.system_prompt, language, style)
        self._seed, self._last_eval, self._seen_calls = seed, 0, 0
        if self.emotion is not None:
            self.emotion.reset()
        self._started = datetime.now(UTC).isoformat()
        state = DialogueState(scenario=scenario, language=language, epm_config=self.epm_config)
        iedr, state = await initial_deficit(self.judge, state)
        if iedr is not None:
            state = replace(state, iedr=iedr, epm=init_state(iedr.P0, self.epm_config))
        if state.termination is not None:  # no initial deficit, or a degenerate one
            self._state = state
            self._emit()
            return self.observation()
        self._state = await self._next_user_line(state)
        if self.done:
            self._emit()
        return self.observation()

    async def step(self, reply: str, *, finish_reason: str | None = None) -> EnvStep:
        """Close the current turn with ``reply`` (the policy's; a blank one is an empty reply
        the judge rates) and run the rest of the turn."""
        return await self._advance(self._open_state(), reply, finish_reason)

    async def step_agent(self, agent: Agent[TestedView, str | TestedReply]) -> EnvStep:
        """Like :meth:`step`, the reply coming from ``agent`` (the model under test)."""
        state = self._open_state()
        out, state = await agent.act(tested_view(state, self.system_prompt), state)
        if isinstance(out, Failure):
            self._state = state
            self.abort(out.reason)
            info = StepInfo(turn=state.turn, evaluated=False, scored=None, reward_valid=False,
                            unscored_reason=None, ratings={}, packet=None,
                            termination=self.state.termination, director_action=None)  # fmt: skip
            return self._result(math.nan, info)
        if isinstance(out, TestedReply):
            return await self._advance(state, out.text, out.finish_reason)
        return await self._advance(state, out)

    def abort(self, reason: str) -> None:
        """End the dialogue as ``error`` with ``reason`` (no-op when it has ended)."""
        if self._state is None or self.done:
            return
        term = Termination(kind=TerminationKind.ERROR, turn=self._state.turn, reason=reason)
        self._state = self._state.ended(term)
        self._emit()

    def record(self) -> DialogueRecord:
        """The dialogue record of the current state (complete once ``done``)."""
        s = self.state
        term = s.termination or Termination(
            kind=TerminationKind.ERROR, turn=s.turn, reason="the dialogue did not finish"
        )
        iedr = s.iedr or InitialDeficit(ratings={}, P0=(0.0,) * EMPATHY_RUBRIC.dim)
        epm = s.epm or init_state(iedr.P0, self.epm_config)
        prompt = self.system_prompt
        return DialogueRecord(
            scenario_id=s.scenario.id,
            scenario_hash=s.scenario.scenario_hash(),
            model=self.model_name,
            roles={k: v for k, v in self.roles.names().items() if k != "tested"},
            epm_config=self.epm_config,
            iedr=iedr,
            initial_state=epm.points[0],
            turns=list(s.turns),
            evaluations=list(s.evaluations),
            director=list(s.director),
            model_calls=list(s.calls),
            total_turns=term.turn,
            termination=term,
            success=term.kind.is_success,
            n_unscored=epm.n_unscored,
            created_at=self._started or None,
            metadata={
                "language": s.language,
                "seed": self._seed,
                "system_prompt": None
                if prompt is None
                else {"id": prompt.id, "version": prompt.version},
                "sandbox_config": self.config.model_dump(mode="json"),
                "p0_source": "unknown" if s.iedr is None else _p0_source(s.scenario),
            },
        )

    # -- the turn ---------------------------------------------------------------------------
    def _open_state(self) -> DialogueState:
        if self.done:
            raise RuntimeError("the dialogue has ended; call reset() to start another")
        return self.state

    async def _next_user_line(self, state: DialogueState) -> DialogueState:
        if state.turn == 0 and self.config.open_with_topic:
            return state.with_user_line(state.scenario.persona.topic)
        out, state = await self.user.act(user_view(state), state)
        if isinstance(out, Failure):
            return state.ended(Termination(kind=TerminationKind.ERROR, turn=state.turn,
                                           reason=out.reason))  # fmt: skip
        return state.with_user_line(out)

    async def _advance(
        self, state: DialogueState, reply: str, finish_reason: str | None = None
    ) -> EnvStep:
        cfg = self.epm_config
        state = state.with_reply(reply, finish_reason=finish_reason)
        t = state.turn
        info = StepInfo(turn=t, evaluated=False, scored=None, reward_valid=False,
                        unscored_reason=f"no evaluation at this turn (eval_every={cfg.eval_every})",
                        ratings={}, packet=None, termination=None,
                        director_action=None)  # fmt: skip
        reward, term = math.nan, None
        if t % cfg.eval_every == 0 or t >= cfg.max_turns:
            state, reward, info = await self._evaluate(state, info)
            term = self._judge_gave_up(state) or check_termination(current_epm(state), cfg)
        packet = None
        if term is None:
            view = director_view(state)
            decision, state = await self.director.act(view, state)
            state, term = apply_director(state, decision)
            info = info.model_copy(update={"director_action": state.director[-1].action})
            packet = view.packet  # the director changes neither the EPM state nor the turn
        if term is None and t >= cfg.max_turns:  # only reachable if max_turns is not evaluated
            term = Termination(kind=TerminationKind.TIMEOUT, turn=t, reason="max_turns reached")
        if packet is None:
            packet = state_packet(state)
        state = state.ended(term) if term is not None else await self._next_user_line(state)
        self._state = state
        self._emit()
        info = info.model_copy(update={"packet": packet, "termination": state.termination})
        if self.config.reward == "sage_outcome" and self.emotion is not None and info.reward_valid:
            reward = self.emotion.emotion / 100.0 if self.done else 0.0
        return self._result(reward, info)

    async def _evaluate(
        self, state: DialogueState, info: StepInfo
    ) -> tuple[DialogueState, float, StepInfo]:
        """The judge rates the window since the last evaluation; the EPM steps (or not)."""
        t = state.turn
        out, state = await self.judge.act(judge_view(state, "mdep", since=self._last_eval), state)
        self._last_eval = t
        before = current_epm(state).last
        state, reason = apply_evaluation(state, out, t)
        scored = reason is None
        info = info.model_copy(
            update={
                "evaluated": True,
                "scored": scored,
                "reward_valid": scored,
                "unscored_reason": reason,
                "ratings": out if scored and isinstance(out, dict) else {},
            }
        )
        reward = self._reward(before, current_epm(state)) if scored else math.nan
        if self.emotion is not None:
            return await self._emotion_reward(state, info)
        return state, reward, info

    async def _emotion_reward(
        self, state: DialogueState, info: StepInfo
    ) -> tuple[DialogueState, float, StepInfo]:
        """SAGE's emotion change since the last evaluation (/ 100) as the reward; NaN when the
        analyser gave none (sage_outcome: set once the dialogue's end is known)."""
        assert self.emotion is not None
        before = self.emotion.emotion
        turns = [(t.user, t.assistant) for t in state.turns]
        change, call = await self.emotion.step(state.scenario, turns, state.turn)
        if call is not None:
            state = state.with_call(call)
        if change is None:
            why = "SAGE's analyser gave no emotion change"
            info = info.model_copy(update={"reward_valid": False, "unscored_reason": why})
            return state, math.nan, info
        info = info.model_copy(update={"reward_valid": True})
        return state, (self.emotion.emotion - before) / 100.0, info

    def _judge_gave_up(self, state: DialogueState) -> Termination | None:
        """``error`` once the last ``judge_failures_limit`` evaluations were all unscored:
        a judge that never answers validly ends the dialogue now, not after every remaining
        turn's retries. The reason quotes the judge's last reply (kept, clipped, in the failed
        call's ``metadata.output``)."""
        limit = self.config.judge_failures_limit
        recent = state.evaluations[-limit:]
        if len(recent) < limit or any(ev.scored for ev in recent):
            return None
        roles = {self.judge.role, self.judge.model.role}
        judge_calls = [c for c in state.calls if c.role in roles]
        last = judge_calls[-1].metadata.get("output") if judge_calls else None
        said = f"; its last reply: {clip(str(last), 200)!r}" if last else ""
        reason = (
            f"the judge failed {limit} evaluations in a row (judge_failures_limit): "
            f"{recent[-1].unscored_reason}{said}"
        )
        return Termination(kind=TerminationKind.ERROR, turn=state.turn, reason=reason)

    def _reward(self, before: EPMPoint, after: EPMState) -> float:
        last = after.last
        if self.config.reward == "delta_e":
            return float(last.delta_E or 0.0)
        return float(before.distance - last.distance)

    def _result(self, reward: float, info: StepInfo) -> EnvStep:
        return EnvStep(self.observation(), reward, self.done, info)

    def _emit(self) -> None:
        if self.observer is None or self._state is None:
            return
        s = self._state
        new = s.calls[self._seen_calls :]
        self._seen_calls = len(s.calls)
        self.observer(
            TurnEvent(
                scenario_id=s.scenario.id,
                turn=s.termination.turn if s.termination else max(s.turn - 1, 0),
                done=s.termination is not None,
                termination=s.termination.kind if s.termination else None,
                n_calls=len(new),
                input_tokens=sum(c.prompt_tokens or 0 for c in new),
                output_tokens=sum(c.completion_tokens or 0 for c in new),
                cost_usd=sum(c.cost_usd or 0.0 for c in new),
            )
        )


async def initial_deficit(
    judge: JudgeAgent, state: DialogueState
) -> tuple[InitialDeficit | None, DialogueState]:
    """P_0 of a dialogue: stored with the scenario, else the judge's IEDR rating. None (and
    the state ended as ``error``) when the judge's call failed; the state has also ended as
    ``error`` when P_0 is degenerate (:func:`empathos.epm.start_problem`)."""
    scenario = state.scenario
    p0 = scenario.initial_state()
    if p0 is not None:
        stored = {
            k: IndicatorRating(level=v, reasoning="stored IEDR")
            for k, v in (scenario.iedr or {}).items()
        }
        iedr, source = InitialDeficit(ratings=stored, P0=tuple(p0)), "stored"
    else:
        out, state = await judge.act(judge_view(state, "iedr"), state)
        if isinstance(out, Failure):
            reason = f"no initial deficit: {out.reason}"
            return None, state.ended(Termination(kind=TerminationKind.ERROR, turn=0, reason=reason))
        vec = p0_from_iedr({k: r.level for k, r in out.items()}, EMPATHY_RUBRIC)
        iedr, source = InitialDeficit(ratings=out, P0=tuple(vec.tolist())), "judged"
    problem = start_problem(iedr.P0, state.epm_config.zone_eps)
    if problem is not None:
        reason = f"scenario {scenario.id!r}: {source} IEDR gives a {problem}"
        state = state.ended(Termination(kind=TerminationKind.ERROR, turn=0, reason=reason))
    return iedr, state


def _p0_source(scenario: Scenario) -> str:
    return "stored" if scenario.initial_state() is not None else "judge_iedr"
