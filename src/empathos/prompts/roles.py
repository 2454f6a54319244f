"""One builder per role: scenario + what the role may see -> a rendered, versioned prompt.

These are the entry points the sandbox uses. Each takes exactly what its role is allowed to
see (the user agent gets released stage numbers, never the story itself), renders the slot
blocks and fills the role's template. The language defaults to the scenario's.

The roles that speak every turn get a :class:`~empathos.prompts.render.ChatPrompt` built for
prefix caches: the system message (instructions, card, rubric) is fixed through a dialogue,
the dialogue so far follows and only grows at its end, and what is new this turn (the
director's note, the measured state, the window to rate) comes last. ``style="compact"``
fills the role's compact template instead (a few sentences, for small local models; see
:mod:`empathos.prompts.compact`), laid out the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from empathos.errors import ConfigError
from empathos.prompts import blocks, compact
from empathos.prompts.render import (
    ChatPrompt,
    PromptStyle,
    RenderedPrompt,
    fragment,
    fragments,
    render,
    render_chat,
)
from empathos.rubric.forms import IEDRForm, MDEPForm, form_skeleton
from empathos.scenarios.model import Scenario

__all__ = [
    "director_prompt",
    "judge_iedr_prompt",
    "judge_mdep_prompt",
    "model_under_test_prompt",
    "user_prompt",
]


def _surfaced(
    released: list[int], memories: Sequence[str], surfaced: Sequence[blocks.Surfaced] | None
) -> list[blocks.Surfaced]:
    """What the user agent's chat shows as surfaced: only released stages and memories. With
    no timeline given, the released ones surface before the first line."""
    if surfaced is None:
        return [blocks.Surfaced(0, stage=s) for s in released] + [
            blocks.Surfaced(0, memory=m) for m in dict.fromkeys(memories)
        ]
    return [
        e
        for e in surfaced
        if (e.stage is not None and e.stage in released)
        or (e.memory is not None and e.memory in memories)
    ]


def _now(
    scenario: Scenario,
    released: list[int],
    newest_stage: int | None,
    memories: Sequence[str],
    newest_memory: str | None,
    lang: str,
) -> str:
    """The user agent's lines about this moment: what has just come up, or that nothing has."""
    lines = []
    if newest_stage in released and newest_stage is not None:
        title = scenario.story.stages[newest_stage - 1].title
        heading = fragment(lang, "stage.heading", index=newest_stage, title=title)
        lines.append(fragment(lang, "now.stage", heading=heading))
    if newest_memory is not None and newest_memory in memories:
        period = fragment(lang, f"period.{newest_memory}")
        lines.append(fragment(lang, "now.memory", period=period))
    if not released:
        lines.append(fragments(lang)["stage.none"])
    return "".join(line + "\n" for line in lines)


def user_prompt(
    scenario: Scenario,
    *,
    released_stages: Iterable[int] = (),
    newest_stage: int | None = None,
    memories: Sequence[str] = (),
    newest_memory: str | None = None,
    guidance: str | None = None,
    history: Sequence[blocks.Turn] = (),
    surfaced: Sequence[blocks.Surfaced] | None = None,
    language: str | None = None,
    style: PromptStyle = "full",
) -> ChatPrompt:
    """The user agent's prompt. System: its card (without the memory periods) and how to
    write. Then the chat (its own lines as "me") with each released stage and memory where
    it surfaced (``surfaced``: the director's timeline; without it they come first). Last:
    what has just come up and the director's latest note.

    Compact: name, age and what happened as the system message, the chat as chat messages
    (its own lines as the assistant's), and what is on its mind now and the note last."""
    lang = language or scenario.labels.language
    released = blocks.revealed_stage_numbers(scenario, released_stages)
    if style == "compact":
        mind, note = compact.on_mind(
            scenario,
            released,
            lang,
            newest_stage=newest_stage,
            memories=memories,
            newest_memory=newest_memory,
            guidance=guidance,
        )
        return render_chat(
            "user",
            lang,
            style="compact",
            chat=compact.user_chat(history),
            name=scenario.persona.identity.name,
            age=compact.user_age(scenario, lang),
            situation=compact.situation(scenario, lang),
            on_mind=mind,
            guidance=note,
        )
    log = blocks.user_log(scenario, history, _surfaced(released, memories, surfaced), lang)
    # the chat opened with the card's topic verbatim: the card need not repeat it
    opened = bool(history) and history[0] == ("user", scenario.persona.topic)
    note = guidance.strip() if guidance and guidance.strip() else fragments(lang)["guidance.none"]
    return render_chat(
        "user",
        lang,
        chat=(("user", log),),
        persona=blocks.persona_card(scenario, lang, memories=False, topic=not opened),
        now=_now(scenario, released, newest_stage, memories, newest_memory, lang),
        guidance=note,
    )


def _released(stages: Iterable[int], memories: Sequence[str], lang: str) -> str:
    """'stages 1, 2; memories: childhood' (or 'nothing yet')."""
    join = fragments(lang)["list.join"]
    parts = []
    shown = sorted(set(stages))
    if shown:
        parts.append(fragment(lang, "released.stages", list=join.join(map(str, shown))))
    if memories:
        names = join.join(fragment(lang, f"period.{m}") for m in dict.fromkeys(memories))
        parts.append(fragment(lang, "released.memories", list=names))
    return fragments(lang)["released.join"].join(parts) or fragments(lang)["released.none"]


def director_prompt(
    scenario: Scenario,
    *,
    state: str,
    released_stages: Iterable[int] = (),
    memories: Sequence[str] = (),
    history: Sequence[blocks.Turn] = (),
    turn: int,
    min_turns: int,
    max_turns: int,
    language: str | None = None,
    style: PromptStyle = "full",
) -> ChatPrompt:
    """The director's prompt. System: its instructions, the priorities, the whole story and
    every memory, the turn limits. Then the conversation so far. Last: the turn, what is
    released and the EPM state packet (``state``, already rendered as text).

    Compact: the person's name and the stage titles as the system message; the turn and what
    is released last (no state packet, no history: a small model cannot use them)."""
    lang = language or scenario.labels.language
    released = blocks.revealed_stage_numbers(scenario, released_stages)
    if style == "compact":
        return render_chat(
            "director",
            lang,
            style="compact",
            name=scenario.persona.identity.name,
            story=compact.stage_titles(scenario, lang),
            min_turns=str(min_turns),
            max_turns=str(max_turns),
            turn=str(turn),
            released=_released(released, (), lang),
        )
    return render_chat(
        "director",
        lang,
        chat=(("user", blocks.observer_log(history, lang)),),
        priorities=blocks.priorities(scenario, lang),
        story=blocks.full_story(scenario, lang),
        memories=blocks.memory_list(scenario, lang),
        min_turns=str(min_turns),
        max_turns=str(max_turns),
        turn=str(turn),
        released=_released(released, memories, lang),
        state=state,
    )


def judge_iedr_prompt(
    scenario: Scenario, *, language: str | None = None, style: PromptStyle = "full"
) -> ChatPrompt:
    """The judge's one-off IEDR prompt: its instructions, the indicators and the output shape
    as the system message (the same for every case), then the persona card and the whole
    story (compact: one line about the person and the stages' text). Same output shape."""
    lang = language or scenario.labels.language
    if style == "compact":
        return render_chat(
            "judge_iedr",
            lang,
            style="compact",
            indicators=blocks.indicator_list("iedr", lang),
            output_format=form_skeleton(IEDRForm),
            person=compact.case_line(scenario, lang),
            story=compact.whole_story(scenario, lang),
        )
    return render_chat(
        "judge_iedr",
        lang,
        indicators=blocks.indicator_list("iedr", lang, levels=False),  # the heading has them
        persona=blocks.persona_card(scenario, lang),
        story=blocks.full_story(scenario, lang),
    )


def _window(
    history: Sequence[blocks.Turn], window: Sequence[blocks.Turn], k: int, lang: str
) -> str:
    """The window to rate: by its turn numbers when it is the end of ``history`` (its text is
    there already), else as text."""
    n = sum(speaker == "user" for speaker, _ in history)
    if window and len(window) <= len(history) and list(history[-len(window) :]) == list(window):
        first = n - sum(speaker == "user" for speaker, _ in window) + 1
        if first == n:
            return fragment(lang, "window.one", last=n)
        return fragment(lang, "window.many", first=first, last=n, k=n - first + 1)
    text = blocks.transcript(window, lang, viewer="observer")
    return fragment(lang, "window.text", k=k, text=text)


def judge_mdep_prompt(
    scenario: Scenario,
    *,
    history: Sequence[blocks.Turn],
    window: Sequence[blocks.Turn],
    k: int,
    language: str | None = None,
    style: PromptStyle = "full",
) -> ChatPrompt:
    """The judge's MDEP prompt. System: its instructions, the condensed profile, the
    indicators, the levels and the output shape. Then the whole conversation so far (turns
    numbered). Last: the window to rate, named by its turns (its text is the end of the
    conversation). Compact: one line about the person as the system message and the window's
    lines last (no history). Same output shape in both."""
    lang = language or scenario.labels.language
    if style == "compact":
        return render_chat(
            "judge_mdep",
            lang,
            style="compact",
            person=compact.person_line(scenario, lang),
            indicators=blocks.indicator_list("mdep", lang),
            output_format=form_skeleton(MDEPForm),
            window=blocks.transcript(window, lang, viewer="observer"),
        )
    return render_chat(
        "judge_mdep",
        lang,
        chat=(("user", blocks.observer_log(history, lang)),),
        profile=blocks.condensed_profile(scenario, lang),
        window=_window(history, window, k, lang),
    )


def model_under_test_prompt(
    spec: Literal["default", "none"] | str | Path, language: str, style: PromptStyle = "full"
) -> RenderedPrompt | None:
    """The system prompt of the model under test.

    ``"default"``: the bundled companion prompt of ``language`` (in ``style``); ``"none"``: no
    system prompt
    (the model's own behaviour), returned as ``None``; anything else: a path to a text file
    whose content is used verbatim (id ``custom:<file name>``, version = content hash).
    """
    if spec == "default":
        return render("model_under_test", language, style=style)
    if spec == "none":
        return None
    path = Path(spec)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read system prompt file: {exc}", file=path, field="system_prompt"
        ) from None
    if not text.strip():
        raise ConfigError("system prompt file is empty", file=path, field="system_prompt")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return RenderedPrompt(id=f"custom:{path.name}", version=digest, text=text)
