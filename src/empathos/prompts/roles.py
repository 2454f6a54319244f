"""One builder per role: scenario + what the role may see -> a rendered, versioned prompt.

These are the entry points the sandbox uses. Each takes exactly what its role is allowed to
see (the user agent gets released stage numbers, never the story itself), renders the slot
blocks and fills the role's template. The language defaults to the scenario's.

``style="compact"`` fills the role's compact template instead (a few sentences, for small
local models; see :mod:`empathos.prompts.compact`). The compact user prompt leaves the chat
out: send it as chat messages after the prompt (:func:`user_messages`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from empathos.errors import ConfigError
from empathos.prompts import blocks, compact
from empathos.prompts.render import PromptStyle, RenderedPrompt, fragments, render
from empathos.rubric.forms import IEDRForm, MDEPForm, form_skeleton
from empathos.scenarios.model import Scenario

__all__ = [
    "director_prompt",
    "judge_iedr_prompt",
    "judge_mdep_prompt",
    "model_under_test_prompt",
    "user_messages",
    "user_prompt",
]


def user_prompt(
    scenario: Scenario,
    *,
    released_stages: Iterable[int] = (),
    newest_stage: int | None = None,
    memories: Sequence[str] = (),
    newest_memory: str | None = None,
    guidance: str | None = None,
    history: Sequence[blocks.Turn] = (),
    language: str | None = None,
    style: PromptStyle = "full",
) -> RenderedPrompt:
    """The user agent's prompt: its card (without the memory periods), only the released
    stages and memories, the latest guidance, and the chat with its own lines as "me".

    Compact: name, age, what happened, what is on its mind now and the director's note; the
    chat is not in the text (see :func:`user_messages`)."""
    lang = language or scenario.labels.language
    if style == "compact":
        mind, note = compact.on_mind(
            scenario,
            released_stages,
            lang,
            newest_stage=newest_stage,
            memories=memories,
            newest_memory=newest_memory,
            guidance=guidance,
        )
        return render(
            "user",
            lang,
            style="compact",
            name=scenario.persona.identity.name,
            age=compact.user_age(scenario, lang),
            situation=compact.situation(scenario, lang),
            on_mind=mind,
            guidance=note,
        )
    return render(
        "user",
        lang,
        persona=blocks.persona_card(scenario, lang, memories=False),
        revealed_story=blocks.revealed_story(scenario, released_stages, lang, newest=newest_stage),
        memories=blocks.memories(scenario, memories, lang, newest=newest_memory),
        guidance=guidance.strip()
        if guidance and guidance.strip()
        else fragments(lang)["guidance.none"],
        history=blocks.transcript(history, lang, viewer="user"),
    )


def user_messages(prompt: RenderedPrompt, history: Sequence[blocks.Turn]) -> list[dict[str, str]]:
    """The compact user agent's chat: its prompt as the system message, then the chat with
    its own lines as the assistant's and the other side's as the user's, so that a small
    chat model answers the other side's last line in the person's voice."""
    roles = {"user": "assistant", "model": "user"}
    return [
        {"role": "system", "content": prompt.text},
        *({"role": roles[speaker], "content": text} for speaker, text in history),
    ]


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
) -> RenderedPrompt:
    """The director's prompt. ``state`` is the EPM state packet, already rendered as text.

    Compact: the person's name, the stage titles marked released or not, and the turn (no
    state packet, no history: a small model cannot use them)."""
    lang = language or scenario.labels.language
    if style == "compact":
        return render(
            "director",
            lang,
            style="compact",
            name=scenario.persona.identity.name,
            story=compact.director_story(scenario, released_stages, lang),
            turn=str(turn),
            min_turns=str(min_turns),
            max_turns=str(max_turns),
        )
    return render(
        "director",
        lang,
        priorities=blocks.priorities(scenario, lang),
        story=blocks.director_story(scenario, released_stages, lang),
        memories=blocks.director_memories(scenario, memories, lang),
        state=state,
        history=blocks.transcript(history, lang, viewer="observer"),
        turn=str(turn),
        min_turns=str(min_turns),
        max_turns=str(max_turns),
    )


def judge_iedr_prompt(
    scenario: Scenario, *, language: str | None = None, style: PromptStyle = "full"
) -> RenderedPrompt:
    """The judge's one-off IEDR prompt: the persona card and the whole story (compact: one
    line about the person and the stages' text). The output shape is the same in both."""
    lang = language or scenario.labels.language
    if style == "compact":
        return render(
            "judge_iedr",
            lang,
            style="compact",
            person=compact.case_line(scenario, lang),
            story=compact.whole_story(scenario, lang),
            indicators=blocks.indicator_list("iedr", lang),
            output_format=form_skeleton(IEDRForm),
        )
    return render(
        "judge_iedr",
        lang,
        persona=blocks.persona_card(scenario, lang),
        story=blocks.director_story(scenario, range(1, len(scenario.story.stages) + 1), lang),
        indicators=blocks.indicator_list("iedr", lang),
        output_format=form_skeleton(IEDRForm),
    )


def judge_mdep_prompt(
    scenario: Scenario,
    *,
    history: Sequence[blocks.Turn],
    window: Sequence[blocks.Turn],
    k: int,
    language: str | None = None,
    style: PromptStyle = "full",
) -> RenderedPrompt:
    """The judge's MDEP prompt: condensed profile, whole history, and the window to rate
    (compact: one line about the person and the window only). Same output shape in both."""
    lang = language or scenario.labels.language
    if style == "compact":
        return render(
            "judge_mdep",
            lang,
            style="compact",
            person=compact.person_line(scenario, lang),
            window=blocks.transcript(window, lang, viewer="observer"),
            indicators=blocks.indicator_list("mdep", lang),
            output_format=form_skeleton(MDEPForm),
        )
    return render(
        "judge_mdep",
        lang,
        profile=blocks.condensed_profile(scenario, lang),
        history=blocks.transcript(history, lang, viewer="observer"),
        window=blocks.transcript(window, lang, viewer="observer"),
        k=str(k),
        indicators=blocks.indicator_list("mdep", lang),
        output_format=form_skeleton(MDEPForm),
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
