"""The rubric as data: axes, indicators and their level-to-score keys.

A :class:`Rubric` declares its axes (any number) and two indicator families:

- ``iedr``: rated once before the dialogue; each level maps to a (negative) score and the
  per-axis sum is the initial deficit P_0;
- ``mdep``: rated after every evaluation window; each level maps to a score and the per-axis
  sum is the action vector v_t.

Nothing here knows about the empathy rubric in particular (that is :mod:`.empathy`), so a
custom rubric with other axes runs through the same EPM code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, model_validator

from empathos.errors import InputError

__all__ = [
    "Axis",
    "Indicator",
    "Rubric",
    "action_vector",
    "action_vectors",
    "p0_from_iedr",
    "parse_level",
]


class Axis(BaseModel):
    """One axis of the latent state space."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(description="Short key used in indicator ids, e.g. 'C'.")
    name: str = Field(description="Code name of the axis, e.g. 'cognitive'.")
    description: str = Field(default="", description="What a deficit on this axis means.")


class Indicator(BaseModel):
    """One rated indicator: its axis, its allowed levels and the score of each level."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(description="Indicator id, e.g. 'C.1' or 'A.Prog'.")
    axis: str = Field(description="Key of the axis this indicator scores.")
    name: str = Field(description="Short English name.")
    meaning: str = Field(default="", description="What the indicator measures (for prompts).")
    kind: Literal["deficit", "progress", "negative"] = Field(
        description="deficit (IEDR), progress (MDEP Prog) or negative (MDEP Neg)."
    )
    scores: dict[int, float] = Field(description="Score of each allowed level.")
    level_meanings: dict[int, str] = Field(
        default_factory=dict, description="Short English meaning of each level (for prompts)."
    )

    @model_validator(mode="after")
    def _meanings_match_levels(self) -> Indicator:
        extra = set(self.level_meanings) - set(self.scores)
        if extra:
            raise ValueError(f"level meanings for unknown levels {sorted(extra)}")
        if not self.scores:
            raise ValueError("an indicator needs at least one level")
        return self

    @property
    def levels(self) -> tuple[int, ...]:
        """The allowed levels, sorted."""
        return tuple(sorted(self.scores))

    def score(self, level: int) -> float:
        """Score of one level; an unknown level raises :class:`InputError`."""
        try:
            return self.scores[level]
        except KeyError:
            raise InputError(
                f"level {level!r} is out of range (allowed: {list(self.levels)})", field=self.key
            ) from None


class Rubric(BaseModel):
    """A complete rubric: axes plus the IEDR and MDEP indicator families."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Rubric id, e.g. 'empathy-v1'.")
    version: str = Field(default="1", description="Version of this rubric's keys.")
    axes: tuple[Axis, ...] = Field(description="The axes, in vector order.")
    iedr: tuple[Indicator, ...] = Field(description="Initial-deficit indicators (P_0).")
    mdep: tuple[Indicator, ...] = Field(description="Per-evaluation progress indicators (v_t).")

    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        keys = [a.key for a in self.axes]
        if not keys or len(set(keys)) != len(keys):
            raise ValueError("axes must be non-empty with unique keys")
        seen: set[str] = set()
        for ind in (*self.iedr, *self.mdep):
            if ind.axis not in keys:
                raise ValueError(f"indicator {ind.key} names unknown axis {ind.axis!r}")
            if ind.key in seen:
                raise ValueError(f"duplicate indicator key {ind.key}")
            seen.add(ind.key)
        return self

    @property
    def dim(self) -> int:
        """Number of axes D."""
        return len(self.axes)

    @property
    def negative_keys(self) -> frozenset[str]:
        """Keys of the MDEP indicators of kind ``negative`` (a few, so computed on each call:
        a cache on the instance would go stale through ``model_copy(update=...)``)."""
        return frozenset(i.key for i in self.mdep if i.kind == "negative")

    def axis_index(self, axis_key: str) -> int:
        """Position of an axis in the state vector."""
        return [a.key for a in self.axes].index(axis_key)

    def indicator(self, key: str) -> Indicator:
        """Look up any indicator by key."""
        for ind in (*self.iedr, *self.mdep):
            if ind.key == key:
                return ind
        raise InputError(f"unknown indicator {key!r}", field=key)

    def mdep_score_table(self) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Arrays for vectorised scoring of MDEP levels.

        Returns ``(levels, scores)`` both of shape (M, L): row m lists indicator m's allowed
        levels (padded by repeating the last) and their scores.
        """
        width = max(len(i.scores) for i in self.mdep)
        levels = np.zeros((len(self.mdep), width), dtype=np.int64)
        scores = np.zeros((len(self.mdep), width), dtype=np.float64)
        for m, ind in enumerate(self.mdep):
            lv = list(ind.levels) + [ind.levels[-1]] * (width - len(ind.levels))
            levels[m] = lv
            scores[m] = [ind.scores[x] for x in lv]
        return levels, scores

    def mdep_axis_matrix(self) -> NDArray[np.float64]:
        """One-hot matrix of shape (M, D) mapping MDEP indicator m to its axis."""
        mat = np.zeros((len(self.mdep), self.dim), dtype=np.float64)
        for m, ind in enumerate(self.mdep):
            mat[m, self.axis_index(ind.axis)] = 1.0
        return mat


def parse_level(value: object, *, field: str) -> int:
    """Read a level given as int or numeric string ('1', '-2'); anything else is an error."""
    if isinstance(value, bool):
        raise InputError(f"level {value!r} is not an integer", field=field)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise InputError(f"level {value!r} is not an integer", field=field)


def _sum_by_axis(
    levels: Mapping[str, object], family: tuple[Indicator, ...], rubric: Rubric
) -> NDArray[np.float64]:
    known = {i.key for i in family}
    unknown = sorted(set(levels) - known)
    if unknown:
        raise InputError(f"unknown indicator(s) {unknown}", field=unknown[0])
    out = [0.0] * rubric.dim  # summed as Python floats (the same float64 additions, in order)
    for ind in family:
        if ind.key not in levels:
            raise InputError("missing level", field=ind.key)
        out[rubric.axis_index(ind.axis)] += ind.score(parse_level(levels[ind.key], field=ind.key))
    return np.asarray(out, dtype=np.float64)


def p0_from_iedr(levels: Mapping[str, object], rubric: Rubric) -> NDArray[np.float64]:
    """P_0 of shape (D,): per-axis sum of the IEDR level scores. Every indicator is required."""
    return _sum_by_axis(levels, rubric.iedr, rubric)


def action_vector(mdep_levels: Mapping[str, object], rubric: Rubric) -> NDArray[np.float64]:
    """v_t of shape (D,): per-axis sum of the MDEP level scores. Every indicator is required."""
    return _sum_by_axis(mdep_levels, rubric.mdep, rubric)


def action_vectors(levels: NDArray[np.int64], rubric: Rubric) -> NDArray[np.float64]:
    """Vectorised :func:`action_vector`.

    ``levels``: int array of shape (..., M), column m holding the level of ``rubric.mdep[m]``.
    Returns v of shape (..., D). An out-of-range level raises :class:`InputError`.
    """
    lv = np.asarray(levels, dtype=np.int64)
    table_lv, table_sc = rubric.mdep_score_table()
    match = lv[..., :, None] == table_lv  # (..., M, L)
    ok = match.any(axis=-1)
    if not bool(ok.all()):
        m = int(np.argwhere(~ok)[0][-1])
        bad = int(lv[..., m].reshape(-1)[~ok[..., m].reshape(-1)][0])
        rubric.mdep[m].score(bad)  # raises with the allowed levels
    first = match.argmax(axis=-1)  # (..., M)
    per_ind = np.take_along_axis(
        np.broadcast_to(table_sc, (*lv.shape[:-1], *table_sc.shape)), first[..., None], axis=-1
    )[..., 0]
    return np.asarray(per_ind @ rubric.mdep_axis_matrix(), dtype=np.float64)
