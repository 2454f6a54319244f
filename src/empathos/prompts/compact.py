"""Slot text of the compact templates: a few sentences per role, for small local models.

A 135M-parameter model given a two-page role prompt copies the prompt back or loops; given
who it is, what happened and how to answer in a few sentences, it writes lines that read
like a conversation. These renderers keep only that much of a scenario. Like the full
blocks, the user agent's pieces are built from released stage numbers only, never from the
story itself; every phrase around scenario text comes from the language's fragments.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from empathos.prompts.blocks import Turn, memory_text, revealed_stage_numbers
from empathos.prompts.render import ChatRole, fragments
from empathos.prompts.render import fragment as _f
from empathos.scenarios.model import Scenario

__all__ = [
    "case_line",
    "on_mind",
    "person_line",
    "situation",
    "stage_titles",
    "user_age",
    "user_chat",
    "whole_story",
]


def user_age(scenario: Scenario, language: str) -> str:
    """The persona's age as the compact prompts write it ('29', '29岁', 'age not stated')."""
    age = scenario.persona.identity.age
    if age is None:
        return _f(language, "card.age_unknown")
    return _f(language, "compact.age", age=age)


def situation(scenario: Scenario, language: str) -> str:
    """What just happened and what weighs on the person, from their card."""
    p = scenario.persona
    return _f(language, "compact.situation", trigger=p.trigger, vent=p.needs.vent)


def on_mind(
    scenario: Scenario,
    released: Iterable[int],
    language: str,
    *,
    newest_stage: int | None,
    memories: Sequence[str],
    newest_memory: str | None,
    guidance: str | None,
) -> tuple[str, str]:
    """(what is on the person's mind, the director's note) for the compact user prompt.

    What is on their mind is the newest released stage (else the latest released one) and a
    memory that has just come back; both are empty before anything was released."""
    shown = revealed_stage_numbers(scenario, released)
    text = ""
    if shown:
        index = newest_stage if newest_stage in shown else shown[-1]
        content = scenario.story.stages[index - 1].content
        text = _f(language, "compact.on_mind", text=content)
    memory = newest_memory if newest_memory in memories else None
    if memory is not None:
        text += _f(language, "compact.memory", text=memory_text(scenario, memory))
    note = guidance.strip() if guidance and guidance.strip() else ""
    return text, _f(language, "compact.guidance", text=note) if note else ""


def person_line(scenario: Scenario, language: str) -> str:
    """The judge's one line about the person: name, age and what they hope for."""
    p = scenario.persona
    return _f(
        language,
        "compact.person",
        name=p.identity.name,
        age=user_age(scenario, language),
        hoped_for=p.needs.hoped_for,
    )


def case_line(scenario: Scenario, language: str) -> str:
    """The IEDR judge's one line about the case: name, age, what happened, what weighs."""
    p = scenario.persona
    return _f(
        language,
        "compact.case",
        name=p.identity.name,
        age=user_age(scenario, language),
        trigger=p.trigger,
        vent=p.needs.vent,
    )


def stage_titles(scenario: Scenario, language: str) -> str:
    """The stage titles, one a line (the director's compact story)."""
    return "\n".join(
        _f(language, "stage.heading", index=index, title=stage.title)
        for index, stage in enumerate(scenario.story.stages, start=1)
    )


def user_chat(history: Sequence[Turn]) -> tuple[tuple[ChatRole, str], ...]:
    """The compact user agent's chat: its own lines as the assistant's and the other side's
    as the user's, so that a small chat model answers the other side's last line in the
    person's voice."""
    roles: dict[str, ChatRole] = {"user": "assistant", "model": "user"}
    return tuple((roles[speaker], text) for speaker, text in history)


def whole_story(scenario: Scenario, language: str) -> str:
    """Every stage's text in one paragraph (the IEDR judge's compact story)."""
    return fragments(language)["compact.join"].join(s.content for s in scenario.story.stages)
