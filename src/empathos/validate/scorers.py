"""The three scorers a pair is scored by, and the direct judge's prompt and form.

- ``epm``: the judge's MDEP ratings -> action vector v -> delta_E = v . direction at the
  original state (the EPM's energy step; :func:`epm_delta`). The state before the evaluation
  (P_{t-1}, v*_0) is the original dialogue's, so only the judgement differs within a pair.
- ``rubric``: the same ratings summed as a linear score (the sum of the six indicators'
  rubric scores; :func:`rubric_linear`), with no direction and no persona-dependent physics.
- ``direct``: a separate call that asks the judge for one overall rating 1..10 of the reply,
  with the same profile and conversation but no rubric (:func:`direct_prompt`,
  :class:`DirectRating`).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from empathos.epm import EPMConfig, ideal_direction
from empathos.prompts.blocks import Turn, condensed_profile, transcript
from empathos.rubric import EMPATHY_RUBRIC, Rubric, action_vector
from empathos.scenarios import Scenario

__all__ = [
    "DIRECT_TEMPLATE_ID",
    "DIRECT_TEMPLATE_VERSION",
    "SCORERS",
    "DirectRating",
    "ScorerName",
    "direct_prompt",
    "epm_delta",
    "rubric_linear",
]

ScorerName = Literal["epm", "rubric", "direct"]
SCORERS: tuple[ScorerName, ...] = ("epm", "rubric", "direct")

DIRECT_TEMPLATE_ID = "validate_direct"
DIRECT_TEMPLATE_VERSION = "1"


def epm_delta(
    levels: Mapping[str, int],
    P_prev: Sequence[float],
    v_star0: Sequence[float],
    config: EPMConfig,
    rubric: Rubric = EMPATHY_RUBRIC,
) -> tuple[float, float]:
    """(delta_E, alignment) of the MDEP ``levels`` applied at state ``P_prev``.

    The direction is v*_0 (``direction: fixed``) or -P_prev/|P_prev| (``current``), as in
    :func:`empathos.epm.step_batch`; alignment is cos(v, direction), 0 for v = 0.
    """
    v = action_vector(levels, rubric)
    direction = (
        np.asarray(v_star0, dtype=np.float64)
        if config.direction == "fixed"
        else ideal_direction(np.asarray(P_prev, dtype=np.float64))
    )
    delta = float(v @ direction)
    norm = float(np.linalg.norm(v))
    return delta, (delta / norm if norm > 1e-12 else 0.0)


def rubric_linear(levels: Mapping[str, int], rubric: Rubric = EMPATHY_RUBRIC) -> float:
    """The rubric-only score: the sum of the rated indicators' rubric scores (no EPM)."""
    return float(sum(rubric.indicator(k).score(int(lv)) for k, lv in levels.items()))


class DirectRating(BaseModel):
    """The direct judge's answer: one overall rating of the last reply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rating: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] = Field(
        description="Overall quality of the supporter's last reply for this person: "
        "1 (harmful) .. 10 (excellent)."
    )
    reason: str = Field(description="One sentence on why.")


_DIRECT = {
    "en": string.Template(
        "You judge how well a supporter's reply helps a person in an emotional conversation.\n\n"
        "The person:\n$profile\n\nThe conversation so far:\n$history\n\n"
        "The reply to rate is the supporter's last line:\n$reply\n\n"
        "Give one overall rating from 1 (harmful) to 10 (excellent support for this person) "
        "and one sentence of reason."
    ),
    "zh": string.Template(
        "你要评判支持者的回复在一段情感对话中对对方有多大帮助。\n\n"
        "对方的情况：\n$profile\n\n目前的对话：\n$history\n\n"
        "要评分的是支持者的最后一句：\n$reply\n\n"
        "请给出一个总分，1（有害）到 10（对这个人而言是极好的支持），并用一句话说明理由。"
    ),
}


def direct_prompt(scenario: Scenario, history: Sequence[Turn], reply: str, language: str) -> str:
    """The direct judge's prompt: the condensed profile, the conversation and the reply."""
    lang = "zh" if language == "zh" else "en"
    return _DIRECT[lang].substitute(
        profile=condensed_profile(scenario, lang),
        history=transcript(history, lang, viewer="observer"),
        reply=reply,
    )
