"""The judge's output forms: IEDR (nine indicators) and MDEP (six), each with evidence.

Levels are ``Literal`` types so a constrained decoder (or likelihood ranking) can enumerate
the allowed values of each field. Field names are the rubric's indicator ids ("C.1",
"A.Prog", ...) through aliases; Python attribute names are ``c1``, ``a_prog`` and so on.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "IEDR_KEYS",
    "MDEP_KEYS",
    "IEDRForm",
    "IEDRItem",
    "IEDRLevel",
    "MDEPForm",
    "NegItem",
    "NegLevel",
    "ProgItem",
    "ProgLevel",
    "form_skeleton",
]

IEDRLevel = Literal[0, 1, 2, 3]
ProgLevel = Literal[0, 1, 2]
NegLevel = Literal[0, -1, -2]

_EVIDENCE = "A direct quote supporting the level, or '0' when the level is 0."
_REASONING = "Why this level, with reference to the persona."


class _Form(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def levels(self) -> dict[str, int]:
        """Indicator id -> level, in rubric order."""
        dumped = self.model_dump(by_alias=True)
        return {key: int(item["level"]) for key, item in dumped.items()}


class IEDRItem(BaseModel):
    """One IEDR rating."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    level: IEDRLevel = Field(description="Deficit level 0 (none) .. 3 (severe).")
    evidence: str = Field(description=_EVIDENCE)
    reasoning: str = Field(description=_REASONING)


class ProgItem(BaseModel):
    """One MDEP progress rating."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    level: ProgLevel = Field(description="0 none, 1 effective, 2 deep.")
    evidence: str = Field(description=_EVIDENCE)
    reasoning: str = Field(description=_REASONING)


class NegItem(BaseModel):
    """One MDEP negative rating."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    level: NegLevel = Field(description="0 no harm, -1 mild, -2 severe.")
    evidence: str = Field(description=_EVIDENCE)
    reasoning: str = Field(description=_REASONING)


class IEDRForm(_Form):
    """The initial-deficit rating: nine indicators, each level 0..3."""

    c1: IEDRItem = Field(alias="C.1", description="C.1: situation complexity.")
    c2: IEDRItem = Field(alias="C.2", description="C.2: depth.")
    c3: IEDRItem = Field(alias="C.3", description="C.3: cognitive priority.")
    a1: IEDRItem = Field(alias="A.1", description="A.1: emotional intensity.")
    a2: IEDRItem = Field(alias="A.2", description="A.2: emotional accessibility.")
    a3: IEDRItem = Field(alias="A.3", description="A.3: affective priority.")
    p1: IEDRItem = Field(alias="P.1", description="P.1: initial agency.")
    p2: IEDRItem = Field(alias="P.2", description="P.2: value relevance.")
    p3: IEDRItem = Field(alias="P.3", description="P.3: motivational priority.")


class MDEPForm(_Form):
    """The per-window rating: progress and negative indicators on each axis."""

    c_prog: ProgItem = Field(alias="C.Prog", description="C.Prog: cognitive progress.")
    c_neg: NegItem = Field(alias="C.Neg", description="C.Neg: cognitive harm.")
    a_prog: ProgItem = Field(alias="A.Prog", description="A.Prog: affective progress.")
    a_neg: NegItem = Field(alias="A.Neg", description="A.Neg: affective harm.")
    p_prog: ProgItem = Field(alias="P.Prog", description="P.Prog: proactive progress.")
    p_neg: NegItem = Field(alias="P.Neg", description="P.Neg: proactive harm.")


IEDR_KEYS: tuple[str, ...] = tuple(f.alias or n for n, f in IEDRForm.model_fields.items())
MDEP_KEYS: tuple[str, ...] = tuple(f.alias or n for n, f in MDEPForm.model_fields.items())


@cache
def form_skeleton(form: type[IEDRForm] | type[MDEPForm]) -> str:
    """A JSON example of the form's shape on one line, for the judge prompt's output
    instructions."""
    shape = {
        key: {"level": 0, "evidence": "...", "reasoning": "..."}
        for key in (IEDR_KEYS if form is IEDRForm else MDEP_KEYS)
    }
    return json.dumps(shape, ensure_ascii=False)
