"""The rule-based director: one action from the EPM state packet, without a model.

Used when the director role is configured as ``rules``, and as the fallback when the director
model's call fails. The rules, in order:

1. the victory checklist holds (min_turns reached, and enough energy with near the origin or
   the second condition, or the in-zone rule): ``end_conversation``;
2. every ``reveal_every`` turns, while stages remain: ``reveal_story_stage`` of the next stage;
3. two or more negative steps in a row: ``introduce_turning_point`` on the deepest-deficit axis;
4. some axis still in deficit: ``adjust_focus`` on the deepest-deficit axis (most negative P);
5. otherwise ``continue``.

Pure: the guidance sentences are short fixed notes per language.
"""

from __future__ import annotations

from typing import Literal

from empathos.sandbox.actions import (
    AdjustFocus,
    ContinueAction,
    EndConversation,
    IntroduceTurningPoint,
    RevealStoryStage,
)
from empathos.sandbox.actions import DirectorAction as ToolAction
from empathos.sandbox.state import DirectorView, StatePacket

__all__ = ["deepest_axis", "rule_action"]

AxisName = Literal["cognitive", "affective", "proactive"]
_AXES: tuple[AxisName, ...] = ("cognitive", "affective", "proactive")

_NOTES: dict[str, dict[str, str]] = {
    "en": {
        "end": "The victory checklist holds.",
        "reveal": "Stage $stage has just come up in you; let it show, a little at a time.",
        "reveal_reason": "Rule: a new stage every few turns.",
        "turn": "Something shifts in you: let the other person feel it, and test whether they "
        "notice what you need ($axis).",
        "turn_reason": "Rule: several negative steps in a row.",
        "focus": "Make your need for $axis a little clearer, without spelling it out.",
        "focus_reason": "Rule: push the deepest remaining deficit.",
        "continue": "Rule: no deficit left to push.",
    },
    "zh": {
        "end": "胜利条件已满足。",
        "reveal": "第$stage阶段的往事刚刚浮现在你心里，慢慢地、一点点地流露出来。",
        "reveal_reason": "规则：每隔几轮释放一个新阶段。",
        "turn": "你心里起了变化：让对方感受到，并试探对方是否察觉你需要的（$axis）。",
        "turn_reason": "规则：连续多次负向变化。",
        "focus": "把你对$axis的需要表达得更清楚一点，但不要直说。",
        "focus_reason": "规则：推动当前缺口最深的维度。",
        "continue": "规则：没有需要推动的缺口。",
    },
}
_AXIS_WORDS = {
    "en": {"cognitive": "being understood", "affective": "being felt with",
           "proactive": "being affirmed and empowered"},
    "zh": {"cognitive": "被理解", "affective": "被共情", "proactive": "被肯定和赋能"},
}  # fmt: skip


def _note(language: str, key: str, **values: str) -> str:
    text = _NOTES.get(language, _NOTES["en"])[key]
    for name, value in values.items():
        text = text.replace(f"${name}", value)
    return text


def deepest_axis(packet: StatePacket) -> AxisName | None:
    """The axis with the most negative component of P_t (None when none is negative)."""
    worst = min(range(len(packet.P)), key=lambda i: packet.P[i])
    return _AXES[worst] if packet.P[worst] < 0 and worst < len(_AXES) else None


def rule_action(view: DirectorView, reveal_every: int) -> ToolAction:
    """The rule-based director's single action for this turn."""
    p, lang = view.packet, view.language
    # the victory rule as the packet states it: energy with a spatial condition, or the
    # in-zone rule (which carries its own energy condition)
    if p.min_turns_reached and ((p.energy_ok and (p.near_origin or p.direction_ok)) or p.in_zone):
        return EndConversation(reason=_note(lang, "end"))
    next_stage = max(view.released_stages, default=0) + 1
    if next_stage <= len(view.scenario.story.stages) and view.turn % reveal_every == 0:
        return RevealStoryStage(
            stage=next_stage,
            reason=_note(lang, "reveal_reason"),
            guidance=_note(lang, "reveal", stage=str(next_stage)),
        )
    axis = deepest_axis(p)
    if axis is None:
        return ContinueAction(reason=_note(lang, "continue"))
    words = _AXIS_WORDS.get(lang, _AXIS_WORDS["en"])[axis]
    if p.negative_streak >= 2:
        return IntroduceTurningPoint(
            axis=axis,
            reason=_note(lang, "turn_reason"),
            guidance=_note(lang, "turn", axis=words),
        )
    return AdjustFocus(
        axis=axis,
        reason=_note(lang, "focus_reason"),
        guidance=_note(lang, "focus", axis=words),
    )
