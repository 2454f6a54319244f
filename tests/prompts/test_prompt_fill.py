"""``fill`` (a template split once, then joined) gives ``string.Template.substitute``'s text
and errors, for every template and fragment we ship and for the syntax's corner cases."""

from __future__ import annotations

import string

import pytest

from empathos.prompts.render import LANGUAGES, ROLES, STYLES, fill, fragments, load_template


def _values(body: str) -> dict[str, str]:
    # values that themselves look like placeholders: they must be inserted, never expanded
    names = {m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(body)}
    return {n: f"<{n}: $x ${{y}} $$ \\1>" for n in names if n}


def _bodies() -> list[str]:
    bodies = [load_template(r, lang, s).body for r in ROLES for lang in LANGUAGES for s in STYLES]
    return bodies + [text for lang in LANGUAGES for text in fragments(lang).values()]


def test_every_shipped_template_and_fragment_fills_as_string_template_does() -> None:
    bodies = _bodies()
    assert len(bodies) > 40 and any("$" in b for b in bodies)
    for body in bodies:
        values = _values(body)
        assert fill(body, values) == string.Template(body).substitute(values)


@pytest.mark.parametrize(
    "body",
    [
        "",
        "no slots",
        "$a",
        "${a}b",
        "$$a $a$$",
        "x$a$b${a}y",
        "$$$a",
        "a $ab_1 ${a}_1 $$",
        "$a\n$$\n",
    ],
)
def test_the_syntax_corner_cases_fill_alike(body: str) -> None:
    values = {"a": "A", "b": "$b", "ab_1": "[ab_1]"}
    assert fill(body, values) == string.Template(body).substitute(values)


@pytest.mark.parametrize("body", ["cost: $5", "a\n  $ b", "${a", "trailing $"])
def test_an_invalid_placeholder_raises_string_templates_error(body: str) -> None:
    with pytest.raises(ValueError) as expected:
        string.Template(body).substitute({"a": "A"})
    with pytest.raises(ValueError) as got:
        fill(body, {"a": "A"})
    assert str(got.value) == str(expected.value)


def test_a_missing_value_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match="missing"):
        fill("$present and $missing", {"present": "x"})
