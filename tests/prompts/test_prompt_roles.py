"""Role builders: what each role sees, in both languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from empathos.errors import ConfigError
from empathos.prompts import (
    director_prompt,
    judge_iedr_prompt,
    judge_mdep_prompt,
    model_under_test_prompt,
    user_prompt,
)
from empathos.prompts.blocks import Turn, condensed_profile, persona_card
from empathos.prompts.render import fragments
from empathos.rubric.forms import IEDR_KEYS, MDEP_KEYS
from empathos.scenarios import Scenario, load_builtin, load_scenarios

HISTORY: list[Turn] = [
    ("user", "FIRST-USER-LINE"),
    ("model", "FIRST-MODEL-LINE"),
    ("user", "SECOND-USER-LINE"),
    ("model", "SECOND-MODEL-LINE"),
]


@pytest.fixture(scope="module")
def by_language() -> dict[str, Scenario]:
    scenarios = load_builtin().scenarios
    return {lang: next(s for s in scenarios if s.labels.language == lang) for lang in ("en", "zh")}


def _hidden_texts(scenario: Scenario, released: set[int]) -> list[str]:
    """Story text the user agent must not see yet (a short title that the persona card itself
    happens to contain, such as a place from its childhood, is no leak)."""
    card = persona_card(scenario, scenario.labels.language)
    out = [scenario.story.outcome, scenario.story.interlude]
    for i, stage in enumerate(scenario.story.stages, start=1):
        if i not in released:
            out += [stage.content] + ([stage.title] if stage.title not in card else [])
    return out


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_role_renders(by_language: dict[str, Scenario], language: str) -> None:
    s = by_language[language]
    outs = [
        user_prompt(s, released_stages=[1], newest_stage=1, history=HISTORY, guidance="G-NOTE"),
        director_prompt(
            s,
            state="STATE-PACKET",
            released_stages=[1],
            history=HISTORY,
            turn=3,
            min_turns=12,
            max_turns=45,
        ),
        judge_iedr_prompt(s),
        judge_mdep_prompt(s, history=HISTORY, window=HISTORY[-1:], k=1),
        model_under_test_prompt("default", language),
    ]
    for out in outs:
        assert out is not None
        assert out.id.endswith(f".{language}") and out.version
        assert len(out.text) > 200
    user, director, iedr, mdep, _ = outs
    assert "G-NOTE" in user.text and "FIRST-MODEL-LINE" in user.text
    assert "STATE-PACKET" in director.text and "45" in director.text
    assert all(key in iedr.text for key in IEDR_KEYS)
    assert all(key in mdep.text for key in MDEP_KEYS)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_user_never_sees_unreleased_stages(by_language: dict[str, Scenario], language: str) -> None:
    s = by_language[language]
    text = user_prompt(s, released_stages=[1], newest_stage=1, history=HISTORY).text
    assert s.story.stages[0].content in text
    for hidden in _hidden_texts(s, {1}):
        assert hidden not in text
    nothing = user_prompt(s).text
    for hidden in _hidden_texts(s, set()):
        assert hidden not in nothing
    both = user_prompt(s, released_stages=[2, 1]).text
    assert s.story.stages[1].content in both and s.story.stages[2].content not in both


def test_user_sees_itself_as_me(by_language: dict[str, Scenario]) -> None:
    text = user_prompt(by_language["en"], history=HISTORY).text
    assert "me: FIRST-USER-LINE" in text and "stranger: FIRST-MODEL-LINE" in text
    zh = user_prompt(by_language["zh"], history=HISTORY).text
    assert "我:FIRST-USER-LINE" in zh and "网友:FIRST-MODEL-LINE" in zh


def test_user_memories_only_released(by_language: dict[str, Scenario]) -> None:
    s = by_language["en"]
    prompt = user_prompt(s, memories=["adolescence"], newest_memory="adolescence")
    assert s.persona.experience.adolescence in prompt.text
    assert "has just come back to you" in prompt.tail
    with pytest.raises(ValueError, match="period"):
        user_prompt(s, memories=["infancy"])
    with pytest.raises(ValueError, match="out of range"):
        user_prompt(s, released_stages=[5])


def test_director_sees_everything(by_language: dict[str, Scenario]) -> None:
    s = by_language["en"]
    prompt = director_prompt(
        s,
        state="S",
        released_stages=[1, 2],
        memories=["childhood"],
        history=HISTORY,
        turn=5,
        min_turns=12,
        max_turns=45,
    )
    for stage in s.story.stages:  # the whole story, fixed through the dialogue
        assert stage.content in prompt.system
    exp = s.persona.experience
    for memory in (exp.childhood, exp.adolescence, exp.young_adulthood, exp.current_situation):
        assert memory in prompt.system
    assert s.story.outcome in prompt.system and s.story.interlude in prompt.system
    # what is released is this turn's news
    assert "released: stages 1, 2; memories: Childhood" in prompt.tail
    assert "# Turn 5" in prompt.tail and prompt.tail.endswith("S")
    assert "[1] person: FIRST-USER-LINE" in prompt.chat[0][1]


def test_judge_mdep_names_the_window_without_repeating_it(
    by_language: dict[str, Scenario],
) -> None:
    s = by_language["en"]
    prompt = judge_mdep_prompt(s, history=HISTORY, window=HISTORY[2:], k=1)
    ((role, log),) = prompt.chat
    assert role == "user" and "supporter: FIRST-MODEL-LINE" in log and "SECOND-MODEL-LINE" in log
    assert prompt.tail == "# The window to rate\nThe supporter's reply in turn 2."
    assert prompt.text.count("SECOND-MODEL-LINE") == 1  # the window is not repeated
    assert condensed_profile(s, "en") in prompt.system
    both = judge_mdep_prompt(s, history=HISTORY, window=HISTORY, k=2)
    assert "replies in turns 1 to 2 (the last 2 turns)" in both.tail
    # a window that is not the end of the history is shown as text
    apart = judge_mdep_prompt(s, history=HISTORY[:2], window=HISTORY[2:], k=1)
    assert "SECOND-MODEL-LINE" in apart.tail and "last 1 turn(s)" in apart.tail


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_judges_say_each_thing_once(by_language: dict[str, Scenario], language: str) -> None:
    s = by_language[language]
    iedr = judge_iedr_prompt(s)
    # the levels 0..3 are in the indicators' heading, not again on each of the nine lines
    assert "0 = " in iedr.system and "0, 1, 2, 3" not in iedr.system
    assert all(key in iedr.system for key in IEDR_KEYS)
    # the judge's profile gives the threshold in the judge's words (third person), not the
    # user agent's second-person lines
    frags = fragments(language)
    profile = condensed_profile(s, language)
    level = s.persona.threshold.value
    assert frags[f"judge.threshold.{level}"] in profile
    assert frags[f"threshold.{level}"] not in profile


def test_published_card_is_rendered_from_its_fields(empa_sample: Path) -> None:
    s = load_scenarios(empa_sample).scenarios[0]
    assert s.raw_persona_prompt is not None
    prompt = user_prompt(s, released_stages=[1], newest_stage=1)
    text = prompt.text
    p, exp = s.persona, s.persona.experience
    # every fact the card's fields hold, but for the memories
    for fact in (
        p.identity.name,
        p.traits.outer,
        p.traits.inner,
        p.needs.vent,
        p.trigger,
        p.needs.hoped_for,
        p.needs.sensitivities,
        exp.growth_arc,
        p.topic,
    ):
        assert fact.strip() in prompt.system
    past = [exp.childhood, exp.adolescence, exp.young_adulthood, exp.current_situation]
    past = [m.strip() for m in past if m.strip()]
    assert past and not [m for m in past if m in text]  # held back until the director
    assert s.raw_persona_prompt.strip() not in text  # its acting rules are the template's
    for hidden in _hidden_texts(s, {1}):
        assert hidden not in text
    profile = condensed_profile(s, "zh")
    assert s.persona.identity.name in profile and s.persona.experience.growth_arc in profile


def test_a_published_card_parsed_short_is_used_verbatim(empa_sample: Path) -> None:
    """A field the parse could not find would be lost from the rendered card: the card is
    then sent verbatim, its memories still held back."""
    s = load_scenarios(empa_sample).scenarios[0]
    short = s.model_copy(update={"persona": s.persona.model_copy(update={"trigger": ""})})
    assert s.raw_persona_prompt is not None
    text = user_prompt(short, released_stages=[1], newest_stage=1).text
    exp = s.persona.experience
    past = [exp.childhood, exp.adolescence, exp.young_adulthood, exp.current_situation]
    past = [m.strip() for m in past if m.strip()]
    card = s.raw_persona_prompt.strip()
    for m in past:
        card = card.replace(m, fragments("zh")["memory.held_back"])
    assert card in text and not [m for m in past if m in text]
    assert s.raw_persona_prompt.strip() not in user_prompt(s).text  # parsed whole: rendered


def test_model_under_test_modes(tmp_path: Path) -> None:
    default = model_under_test_prompt("default", "en")
    assert default is not None and default.id == "model_under_test.en"
    assert model_under_test_prompt("none", "en") is None
    custom = tmp_path / "mine.txt"
    custom.write_text("Be brief and kind.", encoding="utf-8")
    first = model_under_test_prompt(custom, "en")
    assert first is not None
    assert (first.id, first.text) == ("custom:mine.txt", "Be brief and kind.")
    custom.write_text("Be brief and very kind.", encoding="utf-8")
    second = model_under_test_prompt(str(custom), "zh")
    assert second is not None and second.version != first.version
    with pytest.raises(ConfigError, match="cannot read"):
        model_under_test_prompt(tmp_path / "absent.txt", "en")
    (tmp_path / "blank.txt").write_text("  \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="empty"):
        model_under_test_prompt(tmp_path / "blank.txt", "en")


def test_user_prompt_holds_no_memory_before_it_is_revealed(
    by_language: dict[str, Scenario],
) -> None:
    for language in ("en", "zh"):
        s = by_language[language]
        exp = s.persona.experience
        periods = {
            "childhood": exp.childhood,
            "adolescence": exp.adolescence,
            "young_adulthood": exp.young_adulthood,
            "current": exp.current_situation,
        }
        # a verbatim (published-layout) card holds the same texts: they are held back too
        raw = "VERBATIM CARD\n" + "\n".join(f"{k}: {v}" for k, v in periods.items())
        for sc in (s, s.model_copy(update={"raw_persona_prompt": raw})):
            before = user_prompt(sc).text
            assert not [k for k, text in periods.items() if text in before]
            after = user_prompt(sc, memories=["childhood"], newest_memory="childhood").text
            assert [k for k, text in periods.items() if text in after] == ["childhood"]
