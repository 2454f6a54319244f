"""Render pieces of a scenario (and of a conversation) into slot text for the templates.

Every phrase placed around the scenario's own text comes from the language's
``fragments.yaml``, so adding a language means adding a folder, not code. The user agent's
blocks only ever receive what has been revealed: :func:`user_log` shows the stages and
memories its ``surfaced`` timeline names and nothing else of the story.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal, TypeVar

from empathos.prompts.render import fragment as _f
from empathos.prompts.render import fragments
from empathos.rubric import EMPATHY_RUBRIC
from empathos.scenarios.model import Axis, Scenario

__all__ = [
    "MEMORY_PERIODS",
    "Speaker",
    "Surfaced",
    "Turn",
    "condensed_profile",
    "full_story",
    "indicator_list",
    "memory_list",
    "memory_text",
    "observer_log",
    "persona_card",
    "priorities",
    "revealed_stage_numbers",
    "transcript",
    "user_log",
]

Speaker = Literal["user", "model"]
Turn = tuple[Speaker, str]
MEMORY_PERIODS: tuple[str, ...] = ("childhood", "adolescence", "young_adulthood", "current")


@dataclass(frozen=True, slots=True)
class Surfaced:
    """A story stage or a memory the director released, and after which turn: the user
    agent's chat shows its text where it first surfaced."""

    turn: int
    stage: int | None = None
    memory: str | None = None


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
def persona_card(
    scenario: Scenario, language: str, *, memories: bool = True, topic: bool = True
) -> str:
    """The persona card (never the hidden story), in the second person from the structured
    fields, for our scenarios and published ones alike: a published card's verbatim text adds
    only the release's own acting rules, which the user agent's template gives, to the facts
    its fields hold. A published card whose parse left a field empty is used verbatim, so
    that nothing it says is lost. With ``memories=False`` (the user agent's card) the memory
    periods (:data:`MEMORY_PERIODS`) are left out (in a verbatim card, each replaced by a
    note that it is not on the persona's mind yet), so that only the director's
    ``reveal_memory`` brings one to mind (in the chat, where it surfaced). With
    ``topic=False`` the opening line is left out (the chat shows it).
    """
    if scenario.raw_persona_prompt and not _fully_parsed(scenario):
        return _verbatim_card(scenario, scenario.raw_persona_prompt, language, memories=memories)
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
        f"{_f(language, 'card.experience')}{_sep(language).rstrip()}\n"
        + "\n".join(_experience_lines(scenario, language, memories=memories)),
        f"{_f(language, 'card.trigger')}{_sep(language)}{p.trigger}",
    ]
    if topic:
        parts.append(f"{_f(language, 'card.topic')}{_sep(language)}{p.topic}")
    return "\n".join(parts)


def _fully_parsed(scenario: Scenario) -> bool:
    """Every text field of the card holds something (a published card's parse defaults a
    field it cannot find to '')."""
    p = scenario.persona
    exp = p.experience
    texts = (p.identity.gender, p.traits.outer, p.traits.inner, p.needs.vent, p.needs.hoped_for,
             p.needs.sensitivities, p.trigger, p.topic, exp.growth_arc, exp.main_goal,
             exp.vision)  # fmt: skip
    return p.identity.age is not None and all(t.strip() for t in texts)


def _verbatim_card(scenario: Scenario, card: str, language: str, *, memories: bool) -> str:
    card = card.strip()
    if not memories:
        for period in MEMORY_PERIODS:
            text = _memory_text(scenario, period).strip()
            if text:
                card = card.replace(text, _f(language, "memory.held_back"))
    return card


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
                threshold=_f(language, f"judge.threshold.{p.threshold.value}"),
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


def full_story(scenario: Scenario, language: str) -> str:
    """The whole story: every stage with its heading, then the outcome and the interlude (for
    the director and the IEDR judge)."""
    lines = []
    for index, stage in enumerate(scenario.story.stages, start=1):
        lines.append(_f(language, "stage.heading", index=index, title=stage.title))
        lines.append(stage.content)
    lines.append(f"{_f(language, 'story.outcome')}{_sep(language)}{scenario.story.outcome}")
    lines.append(f"{_f(language, 'story.interlude')}{_sep(language)}{scenario.story.interlude}")
    return "\n".join(lines)


def memory_list(scenario: Scenario, language: str) -> str:
    """Every memory period with its text (for the director)."""
    return "\n".join(
        f"- {_f(language, f'period.{period}')}{_sep(language)}{_memory_text(scenario, period)}"
        for period in MEMORY_PERIODS
    )


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
def indicator_list(family: Literal["iedr", "mdep"], language: str, *, levels: bool = True) -> str:
    """The rubric's indicators of one family, with names, meanings and allowed levels
    (``levels=False``: without them, for a prompt whose heading states the levels once)."""
    frags = fragments(language)
    lines = []
    for ind in EMPATHY_RUBRIC.iedr if family == "iedr" else EMPATHY_RUBRIC.mdep:
        name = frags.get(f"name.{ind.key}", ind.name)
        meaning = frags.get(f"meaning.{ind.key}", ind.meaning)
        if not levels:
            lines.append(_f(language, "indicator.bare", key=ind.key, name=name, meaning=meaning))
            continue
        allowed = ", ".join(str(lv) for lv in sorted(ind.levels, key=abs))
        lines.append(
            _f(language, "indicator.line", key=ind.key, name=name, meaning=meaning, levels=allowed)
        )
    return "\n".join(lines)


def _turn_starts(turns: Sequence[Turn]) -> list[int]:
    """The 1-based turn number of each line (a person's line starts a turn)."""
    out, n = [], 0
    for speaker, _ in turns:
        n += speaker == "user"
        out.append(max(n, 1))
    return out


def observer_log(turns: Sequence[Turn], language: str) -> str:
    """The conversation for the director and the judge: each turn numbered ``[n]``, the
    person's line, then the supporter's. It only grows at its end as the dialogue goes on."""
    if not turns:
        return _f(language, "history.none")
    person, supporter = _f(language, "speaker.person"), _f(language, "speaker.supporter")
    sep = _sep(language)
    lines = []
    for (speaker, text), n in zip(turns, _turn_starts(turns), strict=True):
        if speaker == "user":
            lines.append(f"{_f(language, 'turn.mark', n=n)}{person}{sep}{text}")
        else:
            lines.append(f"{supporter}{sep}{text}")
    return "\n".join(lines)


def _event(scenario: Scenario, event: Surfaced, language: str) -> str:
    """One surfaced stage or memory, with its text."""
    if event.stage is not None:
        stage = scenario.story.stages[event.stage - 1]
        heading = _f(language, "stage.heading", index=event.stage, title=stage.title)
        return _f(language, "event.stage", heading=heading, text=stage.content)
    period = event.memory or ""
    text = _memory_text(scenario, period)  # ValueError for an unknown period
    return _f(language, "event.memory", period=_f(language, f"period.{period}"), text=text)


def _first_surfacings(surfaced: Sequence[Surfaced]) -> list[Surfaced]:
    """Each stage and memory once, where it first surfaced (a re-release is the turn's news,
    not a second copy of its text)."""
    seen: set[object] = set()
    out = []
    for event in sorted(surfaced, key=lambda e: e.turn):
        key = ("stage", event.stage) if event.stage is not None else ("memory", event.memory)
        if key not in seen:
            seen.add(key)
            out.append(event)
    return out


def user_log(
    scenario: Scenario, turns: Sequence[Turn], surfaced: Sequence[Surfaced], language: str
) -> str:
    """The user agent's chat: its own lines as "me", the other side's as "stranger", and
    each stage or memory the director released with its text where it first surfaced (after
    that turn). Only what ``surfaced`` names is shown; it only grows at its end."""
    me, other = _f(language, "speaker.self"), _f(language, "speaker.stranger")
    sep = _sep(language)
    pending = _first_surfacings(surfaced)
    lines: list[str] = []
    for (speaker, text), n in zip(turns, _turn_starts(turns), strict=True):
        if speaker == "user":
            while pending and pending[0].turn < n:
                lines.append(_event(scenario, pending.pop(0), language))
        lines.append(f"{me if speaker == 'user' else other}{sep}{text}")
    lines.extend(_event(scenario, e, language) for e in pending)
    if not turns:
        lines.append(_f(language, "history.none"))
    return "\n".join(lines)
