"""Judge forms (empathos.rubric.forms): shapes follow the rubric."""

from __future__ import annotations

import json
from typing import get_args

import pytest
from pydantic import ValidationError

from empathos.rubric import EMPATHY_RUBRIC
from empathos.rubric.forms import (
    IEDR_KEYS,
    MDEP_KEYS,
    IEDRForm,
    MDEPForm,
    form_skeleton,
)


def _item_levels(form: type[IEDRForm] | type[MDEPForm]) -> dict[str, tuple[int, ...]]:
    out = {}
    for name, field in form.model_fields.items():
        item = field.annotation
        assert item is not None
        level_type = item.model_fields["level"].annotation  # type: ignore[union-attr]
        out[field.alias or name] = tuple(sorted(get_args(level_type)))
    return out


def test_form_keys_and_levels_follow_the_rubric() -> None:
    assert tuple(i.key for i in EMPATHY_RUBRIC.iedr) == IEDR_KEYS
    assert set(MDEP_KEYS) == {i.key for i in EMPATHY_RUBRIC.mdep}
    rubric_levels = {i.key: i.levels for i in (*EMPATHY_RUBRIC.iedr, *EMPATHY_RUBRIC.mdep)}
    for form in (IEDRForm, MDEPForm):
        for key, levels in _item_levels(form).items():
            assert levels == rubric_levels[key], key


def test_forms_validate_and_reject() -> None:
    good = {k: {"level": 1, "evidence": "q", "reasoning": "r"} for k in IEDR_KEYS}
    form = IEDRForm.model_validate(good)
    assert form.levels() == dict.fromkeys(IEDR_KEYS, 1)
    with pytest.raises(ValidationError):
        IEDRForm.model_validate({**good, "C.1": {"level": 4, "evidence": "", "reasoning": ""}})
    mdep = {
        k: {"level": -2 if k.endswith("Neg") else 2, "evidence": "q", "reasoning": "r"}
        for k in MDEP_KEYS
    }
    assert MDEPForm.model_validate(mdep).levels()["A.Neg"] == -2
    with pytest.raises(ValidationError):
        MDEPForm.model_validate({**mdep, "C.Prog": {"level": -1, "evidence": "", "reasoning": ""}})
    skeleton = json.loads(form_skeleton(MDEPForm))
    assert tuple(skeleton) == MDEP_KEYS
    MDEPForm.model_validate(skeleton)  # the example in the prompt is itself a valid form
