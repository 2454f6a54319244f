"""Prompts built for prefix caches: a role's prompt at turn t+1 begins with its prompt at turn t
minus the part documented as changing (its tail), for every role, style and language.

A dialogue is driven through the sandbox's own state transitions (the user line, the reply,
the judge's evaluation, the director's action, in the environment's order), with a director
that releases stages and memories, re-releases a stage, changes its guidance and stays
silent; at each call the role's agent builds its prompt from its view, as ``act`` does.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import replace

import pytest

from empathos.epm import init_state
from empathos.llm import ChatRequest, EndpointConfig, ModelClient, ScriptedBackend, as_messages
from empathos.prompts import LANGUAGES, STYLES, ChatPrompt, model_under_test_prompt
from empathos.records import IndicatorRating
from empathos.sandbox import state as views
from empathos.sandbox.actions import (
    AdjustFocus,
    ContinueAction,
    IntroduceTurningPoint,
    Observe,
    RevealMemory,
    RevealStoryStage,
)
from empathos.sandbox.agents import DirectorAgent, DirectorDecision, JudgeAgent, UserAgent
from empathos.sandbox.config import SandboxConfig
from empathos.sandbox.state import DialogueState, director_view, judge_view, user_view
from empathos.sandbox.transitions import apply_director, apply_evaluation
from empathos.scenarios import Scenario, load_builtin

TURNS = 8
ACTIONS = {
    1: RevealStoryStage(stage=1, reason="r1", guidance="GUIDE-1"),
    2: AdjustFocus(axis="affective", reason="r2", guidance="GUIDE-2"),
    3: RevealMemory(period="childhood", reason="r3", guidance="GUIDE-3"),
    4: RevealStoryStage(stage=2, reason="r4", guidance="GUIDE-4"),
    5: IntroduceTurningPoint(stage=1, axis="cognitive", reason="r5", guidance="GUIDE-5"),
    6: ContinueAction(focus="FOCUS-6", reason="r6"),
    7: Observe(observation="o7", reason="r7"),
}
RATINGS = {
    k: IndicatorRating(level=lv)
    for k, lv in {
        "C.Prog": 1,
        "C.Neg": 0,
        "A.Prog": 0,
        "A.Neg": -1,
        "P.Prog": 0,
        "P.Neg": 0,
    }.items()
}

Calls = dict[str, list[tuple[list[dict[str, str]], list[dict[str, str]]]]]


def _open(messages: list[dict[str, str]]) -> str:
    """The messages as a chat template lays them out, the last one left open (so that a last
    message whose text grows still counts as a prefix)."""
    return "".join(f"<|{m['role']}|>{m['content']}" for m in messages)


def _model(style: str, role: str) -> ModelClient:
    return ModelClient(ScriptedBackend(), EndpointConfig(kind="scripted", prompt_style=style), role)


def _dialogue(scenario: Scenario, style: str, language: str) -> tuple[Calls, list[ChatPrompt]]:
    """Each role's (messages, messages without the tail) at every call of a dialogue."""
    user = UserAgent(_model(style, "user"))
    judge = JudgeAgent(_model(style, "judge"))
    director = DirectorAgent(_model(style, "director"))
    cfg = SandboxConfig(min_turns=TURNS, max_turns=TURNS).epm()
    system = model_under_test_prompt("default", language, style)  # type: ignore[arg-type]
    state = DialogueState(scenario=scenario, language=language, epm_config=cfg)
    state = replace(state, epm=init_state((-2.0, -3.0, -1.0), cfg))
    state = state.with_user_line(scenario.persona.topic)
    calls: Calls = defaultdict(list)
    prompts: list[ChatPrompt] = []

    def keep(role: str, prompt: ChatPrompt) -> None:
        calls[role].append((prompt.messages(), prompt.stable_messages()))
        prompts.append(prompt)

    for t in range(1, TURNS):
        mut = [
            {"role": m.role, "content": m.content}
            for m in views.tested_view(state, system).messages
        ]
        calls["model_under_test"].append((mut, mut))
        state = state.with_reply("" if t == 3 else f"REPLY-{t}: that sounds hard.")
        keep("judge", judge.prompt(judge_view(state, "mdep", since=t - 1)))
        state, _ = apply_evaluation(state, RATINGS, t)
        keep("director", director.prompt(director_view(state)))
        state, _ = apply_director(state, DirectorDecision(ACTIONS[t], "model"))
        keep("user", user.prompt(user_view(state)))
        state = state.with_user_line(f"LINE-{t + 1}: I keep thinking about it.")
    return calls, prompts


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("style", STYLES)
def test_each_prompt_begins_with_the_previous_minus_its_tail(style: str, language: str) -> None:
    scenario = next(s for s in load_builtin().scenarios if s.labels.language == language)
    calls, prompts = _dialogue(scenario, style, language)
    assert set(calls) == {"user", "director", "judge", "model_under_test"}
    for role, seq in calls.items():
        assert len(seq) == TURNS - 1
        for t, ((_, before), (after, _)) in enumerate(itertools.pairwise(seq), start=1):
            assert _open(after).startswith(_open(before)), (
                f"{role} ({style}, {language}): the prompt of call {t + 1} does not begin with "
                f"that of call {t} minus its tail"
            )
    # the system message is fixed through the dialogue; what changes is the tail
    for role in ("user", "director", "judge"):
        systems = {msgs[0]["content"] for msgs, _ in calls[role]}
        assert len(systems) == 1, f"{role} ({style}, {language}): the system message changed"
    tails = [p.tail for p in prompts]
    assert all(tails) and len(set(tails)) > TURNS  # every turn brings its own news


@pytest.mark.parametrize("style", STYLES)
def test_what_changes_comes_last(style: str) -> None:
    """The guidance, the released stages, the state packet and the window are in the tail,
    never before the dialogue so far."""
    scenario = next(s for s in load_builtin().scenarios if s.labels.language == "en")
    _calls, prompts = _dialogue(scenario, style, "en")
    users = [p for p in prompts if p.id.startswith("user.")]
    assert "GUIDE-2" in users[1].tail and "GUIDE-2" not in users[2].text
    if style == "full":
        # a released stage enters the chat where it surfaced, once, and stays there
        stage1 = scenario.story.stages[0].content
        assert all(p.text.count(stage1) == 1 for p in users)
        assert all(stage1 in p.chat[0][1] for p in users)
        directors = [p for p in prompts if p.id.startswith("director.")]
        assert all("latest evaluation: turn" in p.tail for p in directors)
        judges = [p for p in prompts if p.id.startswith("judge_mdep.")]
        assert judges[2].tail.endswith("reply in turn 3.") and "REPLY-3" not in judges[2].tail


@pytest.mark.parametrize("style", STYLES)
async def test_the_agents_send_exactly_their_prompts(style: str) -> None:
    """What goes on the wire is the prompt's messages: nothing is added before the tail (a
    schema or an instruction inserted into the system message would break the prefix)."""
    scenario = next(s for s in load_builtin().scenarios if s.labels.language == "en")
    backends = {role: ScriptedBackend() for role in ("user", "judge", "director")}
    config = EndpointConfig(kind="scripted", prompt_style=style)
    models = {role: ModelClient(b, config, role) for role, b in backends.items()}
    cfg = SandboxConfig(min_turns=4, max_turns=4).epm()
    state = DialogueState(scenario=scenario, language="en", epm_config=cfg)
    state = replace(state, epm=init_state((-2.0, -3.0, -1.0), cfg))
    state = state.with_user_line(scenario.persona.topic).with_reply("A reply.")
    judge, director = JudgeAgent(models["judge"]), DirectorAgent(models["director"])
    user = UserAgent(models["user"])
    jv = judge_view(state, "mdep", since=0)
    _, state = await judge.act(jv, state)
    dv = director_view(state)
    decision, state = await director.act(dv, state)
    state, _ = apply_director(state, decision)
    uv = user_view(state)
    await user.act(uv, state)
    for role, prompt in (("judge", judge.prompt(jv)), ("director", director.prompt(dv)),
                         ("user", user.prompt(uv))):  # fmt: skip
        requests: list[ChatRequest] = backends[role].requests
        assert [r.messages for r in requests] == [as_messages(prompt.messages())], role
