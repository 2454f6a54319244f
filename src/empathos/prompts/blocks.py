"""Render pieces of a scenario (and of a conversation) into slot text for the templates.

Every phrase placed around the scenario's own text comes from the language's
``fragments.yaml``, so adding a language means adding a folder, not code. The user agent's
blocks only ever receive what has been revealed: :func:`revealed_story` is handed the stage
numbers released so far and renders nothing else.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Literal, TypeVar

from empathos.prompts.render import fragment as _f
from empathos.prompts.render import fragments
from empathos.rubric import EMPATHY_RUBRIC
from empathos.scenarios.model import Axis, Scenario

__all__ = [
    "MEMORY_PERIODS",
    "Speaker",
    "Turn",
    "condensed_profile",
    "director_memories",
    "director_story",
    "indicator_list",
    "memories",
    "memory_text",
    "persona_card",
    "priorities",
    "revealed_stage_numbers",
    "revealed_story",
    "transcript",
]

Speaker = Literal["user", "model"]
Turn = tuple[Speaker, str]
MEMORY_PERIODS: tuple[str, ...] = ("childhood", "adolescence", "young_adulthood", "current")


F = TypeVar("F", bound=Callable[..., str])


def _per_scenario(render: F) -> F:
    """Memoise a block that depends only on a (frozen) scenario and the other arguments: a
    dialogue renders the same card into every prompt of every turn. Keyed by the scenario's
    identity (kept alive beside its entry, so an id is never reused while cached)."""
    memo: dict[tuple[object, ...], tuple[Scenario, str]] = {}

    @functools.wraps(render)
    def wrapper(scenario: Scenario, *args: object, **kwargs: object) -> str:
        key = (id(scenario), *args, *sorted(kwargs.items()))
        hit = memo.get(key)
        if hit is not None and hit[0] is scenario:
            return hit[1]
        text = render(scenario, *args, **kwargs)
        if len(memo) >= 1024:
            memo.clear()
        memo[key] = (scenario, text)
        return text

    return wrapper  # type: ignore[return-value]


def _sep(language: str) -> str:
    return fragments(language)["sep"]


def _age(scenario: Scenario, language: str) -> str:
    age = scenario.persona.identity.age
    return str(age) if age is not None else _f(language, "card.age_unknown")


@_per_scenario
def priorities(scenario: Scenario, language: str) -> str:
    """The C/A/P priorities, one line per axis (plus the ordering when the card has one)."""
    pri = scenario.persona.priorities
    lines = []
    for axis in Axis:
        item = getattr(pri, axis.value)
        lines.append(
            _f(
                language,
                "priority.line",
                axis=_f(language, f"axis.{axis.value}"),
                level=_f(language, f"level.{item.level.value}"),
                rationale=item.rationale,
            ).rstrip()
        )
    if pri.order:
        lines.append(_f(language, "priority.order", order=" > ".join(a.key for a in pri.order)))
    return "\n".join(lines)


def _experience_lines(scenario: Scenario, language: str, *, memories: bool) -> list[str]:
    exp = scenario.persona.experience
    pairs = (
        ("childhood", exp.childhood),
        ("adolescence", exp.adolescence),
        ("young_adulthood", exp.young_adulthood),
        ("growth_arc", exp.growth_arc),
        ("current", exp.current_situation),
        ("main_goal", exp.main_goal),
        ("vision", exp.vision),
    )
    return [
        f"- {_f(language, f'period.{key}')}{_sep(language)}{text}"
        for key, text in pairs
        if text and (memories or key not in MEMORY_PERIODS)
    ]


@_per_scenario
def persona_card(scenario: Scenario, language: str, *, memories: bool = True) -> str:
    """The persona card (never the hidden story).

    A published-layout scenario uses its verbatim card; ours is rendered in the second
    person from the structured fields. With ``memories=False`` (the user agent's card) the
    memory periods (:data:`MEMORY_PERIODS`) are left out, so that only the director's
    ``reveal_memory`` brings one to mind (in the memories block); a verbatim card has each
    period's text replaced by a note that it is not on the persona's mind yet.
    """
    if scenario.raw_persona_prompt:
        card = scenario.raw_persona_prompt.strip()
        if not memories:
            for period in MEMORY_PERIODS:
                text = _memory_text(scenario, period).strip()
                if text:
                    card = card.replace(text, _f(language, "memory.held_back"))
        return card
    p = scenario.persona
    threshold = _f(language, f"threshold.{p.threshold.value}")
    pri = priorities(scenario, language)
    parts = [
        _f(
            language,
            "card.intro",
            name=p.identity.name,
            gender=p.identity.gender,
            age=_age(scenario, language),
        ),
        f"{_f(language, 'card.outer')}{_sep(language)}{p.traits.outer}",
        f"{_f(language, 'card.inner')}{_sep(language)}{p.traits.inner}",
        f"{_f(language, 'card.threshold')}{_sep(language)}{threshold}",
        f"{_f(language, 'card.vent')}{_sep(language)}{p.needs.vent}",
        f"{_f(language, 'card.hoped_for')}{_sep(language)}{p.needs.hoped_for}",
        f"{_f(language, 'card.sensitivities')}{_sep(language)}{p.needs.sensitivities}",
        f"{_f(language, 'card.priorities')}{_sep(language).rstrip()}\n{pri}",
        f"{_f(language, 'card.experience')}{_sep(language)}\n"
        + "\n".join(_experience_lines(scenario, language, memories=memories)),
        f"{_f(language, 'card.trigger')}{_sep(language)}{p.trigger}",
        f"{_f(language, 'card.topic')}{_sep(language)}{p.topic}",
    ]
    return "\n".join(parts)


@_per_scenario
def condensed_profile(scenario: Scenario, language: str) -> str:
    """The judge's short profile: traits, threshold, needs and priorities, growth arc."""
    p = scenario.persona
    pri = "; ".join(f"{a.key} {_f(language, f'level.{p.priorities.level(a).value}')}" for a in Axis)
    if p.priorities.order:
        pri += " (" + " > ".join(a.key for a in p.priorities.order) + ")"
    return "\n".join(
        [
            _f(
                language,
                "profile.person",
                name=p.identity.name,
                gender=p.identity.gender,
                age=_age(scenario, language),
            ),
            _f(language, "profile.traits", outer=p.traits.outer, inner=p.traits.inner),
            _f(
                language,
                "profile.threshold",
                threshold=_f(language, f"threshold.{p.threshold.value}"),
            ),
            _f(
                language,
                "profile.needs",
                hoped_for=p.needs.hoped_for,
                sensitivities=p.needs.sensitivities,
            ),
            _f(language, "profile.priorities", priorities=pri),
            _f(language, "profile.growth", growth=p.experience.growth_arc),
        ]
    )


def revealed_stage_numbers(scenario: Scenario, stages: Iterable[int]) -> list[int]:
    """The stage numbers, sorted and checked to be 1..len(stages) (ValueError otherwise)."""
    return _check_stages(scenario, stages)


def _check_stages(scenario: Scenario, stages: Iterable[int]) -> list[int]:
    out = sorted(set(stages))
    bad = [s for s in out if not 1 <= s <= len(scenario.story.stages)]
    if bad:
        raise ValueError(f"stage numbers out of range 1..{len(scenario.story.stages)}: {bad}")
    return out


def revealed_story(
    scenario: Scenario, released: Iterable[int], language: str, *, newest: int | None = None
) -> str:
    """Only the released stages (1-based), the newest one marked; nothing else of the story."""
    shown = _check_stages(scenario, released)
    if not shown:
        return _f(language, "stage.none")
    lines = []
    for index in shown:
        stage = scenario.story.stages[index - 1]
        lines.append(_f(language, "stage.heading", index=index, title=stage.title))
        lines.append(stage.content)
        if index == newest:
            lines.append(_f(language, "stage.new"))
    return "\n".join(lines)


def memory_text(scenario: Scenario, period: str) -> str:
    """The text of one memory period (ValueError for an unknown period)."""
    return _memory_text(scenario, period)


def _memory_text(scenario: Scenario, period: str) -> str:
    exp = scenario.persona.experience
    texts = {
        "childhood": exp.childhood,
        "adolescence": exp.adolescence,
        "young_adulthood": exp.young_adulthood,
        "current": exp.current_situation,
    }
    if period not in texts:
        raise ValueError(f"unknown memory period {period!r}; valid: {list(texts)}")
    return texts[period]


def memories(
    scenario: Scenario, periods: Sequence[str], language: str, *, newest: str | None = None
) -> str:
    """The memories the director has surfaced, for the user agent."""
    if not periods:
        return _f(language, "memory.none")
    lines = []
    for period in dict.fromkeys(periods):
        mark = f" {_f(language, 'memory.new')}" if period == newest else ""
        text = _memory_text(scenario, period)
        lines.append(f"- {_f(language, f'period.{period}')}{_sep(language)}{text}{mark}")
    return "\n".join(lines)


def director_story(scenario: Scenario, released: Iterable[int], language: str) -> str:
    """The whole story for the director, each stage marked released or not."""
    shown = set(_check_stages(scenario, released))
    lines = []
    for index, stage in enumerate(scenario.story.stages, start=1):
        status = _f(language, "status.released" if index in shown else "status.hidden")
        lines.append(f"{_f(language, 'stage.heading', index=index, title=stage.title)} {status}")
        lines.append(stage.content)
    lines.append(f"{_f(language, 'story.outcome')}{_sep(language)}{scenario.story.outcome}")
    lines.append(f"{_f(language, 'story.interlude')}{_sep(language)}{scenario.story.interlude}")
    return "\n".join(lines)


def director_memories(scenario: Scenario, released: Sequence[str], language: str) -> str:
    """Every memory period for the director, each marked released or not."""
    lines = []
    for period in MEMORY_PERIODS:
        status = _f(language, "status.released" if period in released else "status.hidden")
        lines.append(f"- {period} {status}{_sep(language)}{_memory_text(scenario, period)}")
    return "\n".join(lines)


def transcript(turns: Sequence[Turn], language: str, *, viewer: Literal["user", "observer"]) -> str:
    """The conversation as text. The user agent sees "me" / "stranger"; others see roles."""
    if not turns:
        return _f(language, "history.none")
    names = (
        {"user": _f(language, "speaker.self"), "model": _f(language, "speaker.stranger")}
        if viewer == "user"
        else {"user": _f(language, "speaker.person"), "model": _f(language, "speaker.supporter")}
    )
    return "\n".join(f"{names[speaker]}{_sep(language)}{text}" for speaker, text in turns)


@cache
def indicator_list(family: Literal["iedr", "mdep"], language: str) -> str:
    """The rubric's indicators of one family, with names, meanings and allowed levels."""
    frags = fragments(language)
    lines = []
    for ind in EMPATHY_RUBRIC.iedr if family == "iedr" else EMPATHY_RUBRIC.mdep:
        lines.append(
            _f(
                language,
                "indicator.line",
                key=ind.key,
                name=frags.get(f"name.{ind.key}", ind.name),
                meaning=frags.get(f"meaning.{ind.key}", ind.meaning),
                levels=", ".join(str(lv) for lv in sorted(ind.levels, key=abs)),
            )
        )
    return "\n".join(lines)
