"""The perturbation rules: Persona Flip over the scenario's fields, sycophantic templates."""

from __future__ import annotations

from empathos.prompts.blocks import condensed_profile
from empathos.scenarios import Axis, PriorityLevel, load_builtin
from empathos.validate import SYCOPHANCY_KINDS, flip_persona, sycophantic_reply

OPPOSITE = {
    PriorityLevel.HIGH: PriorityLevel.LOW,
    PriorityLevel.LOW: PriorityLevel.HIGH,
    PriorityLevel.MEDIUM: PriorityLevel.MEDIUM,
}


def test_flip_inverts_priorities_and_rewrites_needs_only() -> None:
    for sc in load_builtin().scenarios:
        flipped = flip_persona(sc)
        for axis in Axis:
            before = sc.persona.priorities.level(axis)
            assert flipped.persona.priorities.level(axis) is OPPOSITE[before]
        assert flipped.id == f"{sc.id}.flipped"
        assert flipped.persona.needs.hoped_for != sc.persona.needs.hoped_for
        if any(flipped.persona.priorities.level(a) is PriorityLevel.LOW for a in Axis):
            assert flipped.persona.needs.sensitivities != sc.persona.needs.sensitivities
        # Everything else on the card and the story stay.
        for name in ("identity", "traits", "threshold", "experience", "topic", "trigger"):
            assert getattr(flipped.persona, name) == getattr(sc.persona, name)
        assert flipped.story == sc.story
        assert flipped.raw_persona_prompt is None
        # Flipping twice gives the original levels back.
        again = flip_persona(flipped)
        assert all(
            again.persona.priorities.level(a) is sc.persona.priorities.level(a) for a in Axis
        )


def test_the_judge_sees_the_flip_in_its_profile() -> None:
    sc = next(s for s in load_builtin().scenarios if s.id == "en-01-sourdough")  # C high, P low
    before = condensed_profile(sc, "en")
    after = condensed_profile(flip_persona(sc), "en")
    assert "Priorities: C high; A medium; P low" in before
    assert "Priorities: C low; A medium; P high" in after
    assert "Above all wants to be affirmed and helped to act" in after
    assert "Does not want the situation analysed" in after


def test_chinese_cards_get_chinese_constraints() -> None:
    sc = next(s for s in load_builtin().scenarios if s.labels.language == "zh")
    flipped = flip_persona(sc)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in flipped.persona.needs.hoped_for)


def test_sycophantic_replies_are_deterministic_and_distinct_by_kind() -> None:
    texts = {k: sycophantic_reply(k, "en", "pair-1", seed=0) for k in SYCOPHANCY_KINDS}
    assert len(set(texts.values())) == len(SYCOPHANCY_KINDS)
    assert all(sycophantic_reply(k, "en", "pair-1", seed=0) == t for k, t in texts.items())
    picks = {sycophantic_reply("slogans", "en", f"pair-{i}") for i in range(30)}
    assert len(picks) > 1  # the choice varies across pairs
    assert sycophantic_reply("affect", "zh", "p") != sycophantic_reply("affect", "en", "p")
    assert sycophantic_reply("jargon", "fr", "p") in {
        sycophantic_reply("jargon", "en", f"p{i}") for i in range(60)
    }
