"""Rubrics as data: axes, indicators, level-to-score keys (IEDR for P_0, MDEP for v_t)."""

from empathos.rubric.empathy import EMPATHY_RUBRIC, MDEP_KEYS
from empathos.rubric.model import (
    Axis,
    Indicator,
    Rubric,
    action_vector,
    action_vectors,
    p0_from_iedr,
    parse_level,
)

__all__ = [
    "EMPATHY_RUBRIC",
    "MDEP_KEYS",
    "Axis",
    "Indicator",
    "Rubric",
    "action_vector",
    "action_vectors",
    "p0_from_iedr",
    "parse_level",
]
