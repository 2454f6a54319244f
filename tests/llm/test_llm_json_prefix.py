"""The JSON-object grammar behind json_object replies: every prefix of an object is accepted,
its closing always parses, and what cannot continue an object is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from empathos.llm.offline.json_prefix import JsonObjectPrefix

finite = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.none() | st.booleans() | st.integers() | finite | st.text()
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
objects = st.dictionaries(st.text(), values, max_size=4)


@settings(max_examples=150, deadline=None)
@given(objects, st.sampled_from([None, 2]), st.booleans())
def test_every_prefix_is_accepted_and_closes_into_an_object(
    obj: dict[str, Any], indent: int | None, ascii_only: bool
) -> None:
    text = json.dumps(obj, indent=indent, ensure_ascii=ascii_only)
    state = JsonObjectPrefix()
    for i, ch in enumerate(text):
        closed = text[:i] + state.closing()
        assert isinstance(json.loads(closed), dict), closed
        assert state.feed(ch), (text, i)
    assert state.done and state.closing() == ""
    assert not state.copy().feed(" ") and not state.copy().feed("{")  # nothing may follow


@pytest.mark.parametrize(
    "text",
    [
        "[1]",
        '"a"',
        '{"a" 1}',
        '{"a":1}}',
        '{"a":01}',
        '{"a":tru e}',
        "{a:1}",
        '{"a":1,}',
        '{"a":"\\x"}',
        '{"a":"line\nbreak"}',
        '{"a": -.5}',
        "{" + " " * 40 + "}",
    ],
)
def test_what_cannot_continue_an_object_is_refused(text: str) -> None:
    assert not JsonObjectPrefix().feed(text)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(), values, min_size=1, max_size=4))
def test_a_nonempty_object_refuses_to_close_before_its_first_member(obj: dict[str, Any]) -> None:
    text = json.dumps(obj)
    state = JsonObjectPrefix(nonempty=True)
    for i, ch in enumerate(text):
        closed = json.loads(text[:i] + state.closing())
        assert isinstance(closed, dict) and closed, (text, i)  # never {}
        assert state.feed(ch), (text, i)
    assert state.done
    opened = JsonObjectPrefix(nonempty=True)
    assert opened.feed("{ ") and not opened.copy().feed("}")  # {} is refused...
    assert opened.feed('"a": {') and opened.feed("}")  # ...at the top level only
