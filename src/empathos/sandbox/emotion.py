"""SAGE's emotion as the environment's reward source (``SandboxConfig.reward``: ``sage_emotion``
or ``sage_outcome``; docs/bench.md, "SAGE's emotion as a reward").

As in SAGE, the simulated user grades itself: at each evaluation the user role's model gets
SAGE's analyser prompt (read from the user's copy of SAGE, ``SandboxConfig.sage_data``), with
the scenario's persona card as the person, its trigger and hidden story as the scene, the
emotion so far (40 at the start) and the dialogue; the ``Change:`` of its answer (clamped to
-10..10) moves the emotion (capped at 100). The EMPA sandbox still runs the dialogue (user,
director, judge, EPM termination): only the reward changes.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from empathos.errors import ModelCallError
from empathos.llm import ChatModel, Message, record_of
from empathos.records import ModelCallRecord
from empathos.sage.copy import read_sage
from empathos.sage.rules import (
    START_EMOTION,
    SimulatorPrompts,
    analyser_prompt,
    move_emotion,
    parse_analysis,
)
from empathos.scenarios import Scenario

__all__ = ["EmotionSource", "sage_profile"]


@cache
def _prompts(sage_data: str) -> SimulatorPrompts:
    return read_sage(Path(sage_data)).prompts


def sage_profile(scenario: Scenario) -> dict[str, str]:
    """The scenario as SAGE's analyser sees a profile: the persona card, and the trigger with
    the hidden story as the scene."""
    persona = scenario.persona
    stages = "\n".join(f"{s.title}: {s.content}" for s in scenario.story.stages)
    return {
        "player": persona.model_dump_json(indent=1, exclude={"topic"}),
        "scene": f"{persona.trigger}\n{stages}",
    }


class EmotionSource:
    """The simulated user's emotion of one dialogue (see the module)."""

    def __init__(self, prompts: SimulatorPrompts, model: ChatModel) -> None:
        self.prompts = prompts
        self.model = model
        self.emotion = START_EMOTION

    @classmethod
    def from_copy(cls, sage_data: str, model: ChatModel) -> EmotionSource:
        """The source with the prompts of the user's copy of SAGE at ``sage_data`` (read once
        per process and path)."""
        return cls(_prompts(sage_data), model)

    def reset(self) -> None:
        """A new dialogue starts at emotion 40."""
        self.emotion = START_EMOTION

    async def step(
        self, scenario: Scenario, turns: list[tuple[str, str]], turn: int
    ) -> tuple[int | None, ModelCallRecord | None]:
        """Ask the analyser about the dialogue so far ((user, reply) per turn); the emotion
        moves by its change. Returns the change (None: the call failed or its answer has no
        change; the emotion stays) and the call's record."""
        from empathos.sandbox.agents import call_record

        history = []
        for user, reply in turns:
            history += [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
        prompt = analyser_prompt(self.prompts, sage_profile(scenario), self.emotion, history)
        sent = [Message(role="user", content=prompt)]
        try:
            result = await self.model.chat(sent, allow_empty=True)
        except ModelCallError as exc:
            failed = record_of(exc)
            rec = None if failed is None else call_record(failed, turn=turn, prompt=None,
                                                          messages=sent)  # fmt: skip
            return None, rec
        analysis = parse_analysis(result.text)
        rec = call_record(result.record, turn=turn, prompt=None, messages=sent)
        if analysis is None:
            return None, rec
        self.emotion = move_emotion(self.emotion, analysis["change"])
        return int(analysis["change"]), rec
