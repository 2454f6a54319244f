"""Templates are data: every role x language loads, renders, and refuses wrong slots."""

from __future__ import annotations

import string

import pytest
import yaml

from empathos.errors import ConfigError
from empathos.prompts import (
    LANGUAGES,
    ROLES,
    load_template,
    render,
)
from empathos.prompts.render import fragments, templates_dir


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("role", ROLES)
def test_template_files_are_consistent(role: str, language: str) -> None:
    raw = yaml.safe_load((templates_dir() / language / f"{role}.yaml").read_text(encoding="utf-8"))
    tpl = load_template(role, language)
    assert tpl.id == f"{role}.{language}" == raw["id"]
    assert tpl.role == role and tpl.language == language
    assert tpl.version
    found = {
        m.group("named") or m.group("braced")
        for part in (tpl.body, tpl.turn)
        for m in string.Template.pattern.finditer(part)
    } - {None}
    assert found == set(tpl.slots)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("role", ROLES)
def test_render_fills_every_slot(role: str, language: str) -> None:
    tpl = load_template(role, language)
    values = {slot: f"<<{slot.upper()}-VALUE>>" for slot in tpl.slots}
    out = render(role, language, **values)
    assert (out.id, out.version) == (tpl.id, tpl.version)
    for value in values.values():
        assert value in out.text
    assert "$" not in out.text.replace("$$", "")


def test_missing_and_unknown_slots_are_errors() -> None:
    tpl = load_template("user", "en")
    values = {slot: "x" for slot in tpl.slots}
    del values["guidance"]
    with pytest.raises(ConfigError, match="guidance"):
        render("user", "en", **values)
    with pytest.raises(ConfigError, match="unknown slots"):
        render("model_under_test", "en", extra="x")
    with pytest.raises(ConfigError, match="unknown role"):
        render("narrator", "en")
    with pytest.raises(ConfigError, match="unknown language"):
        render("user", "fr")


def test_fragment_sets_match_across_languages() -> None:
    en, zh = fragments("en"), fragments("zh")
    assert set(en) <= set(zh)  # zh adds indicator names; every en key exists in zh
    for key, frag in en.items():
        ids_en = set(string.Template(frag).get_identifiers())
        assert ids_en == set(string.Template(zh[key]).get_identifiers()), key
