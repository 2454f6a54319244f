"""Which texts can begin one JSON object: the grammar behind ``response_format: json_object``.

:class:`JsonObjectPrefix` reads characters one at a time and refuses the first one that
cannot continue a JSON object (RFC 8259, top level an object; whitespace runs capped so a
small model cannot loop on blank lines; with ``nonempty``, the top-level object may not
close before its first member). :meth:`JsonObjectPrefix.closing` is the shortest
text that completes what was read into a valid object. The offline decoder keeps the
model's best token whose text the prefix accepts, and closes the object when the token
budget runs out, so the reply always parses (tested on random texts and on the model).
Pure: no model, no I/O.
"""

from __future__ import annotations

import copy
import re

__all__ = ["JsonObjectPrefix"]

_MAX_BLANK = 16  # longest run of whitespace accepted between tokens
_WS = " \t\n\r"
_NUMBER_PREFIX = re.compile(r"-?|-?(0|[1-9][0-9]*)(\.[0-9]*)?([eE][+-]?[0-9]*)?")
_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_HEX = "0123456789abcdefABCDEF"
_ESCAPES = '"\\/bfnrtu'


class JsonObjectPrefix:
    """The state of a JSON object read so far (a pushdown automaton over characters)."""

    def __init__(self, *, nonempty: bool = False) -> None:
        self.nonempty = nonempty  # the top-level object holds at least one member
        self.stack: list[str] = []  # open containers, "{" or "["
        # start | key_or_end | key | colon | value | value_or_end | after | string | number
        # | literal | done
        self.state = "start"
        self.in_key = False  # the string being read is an object key
        self.escape = 0  # 0: none; 1: after a backslash; 2..5: hex digits of \\u still due
        self.number = ""
        self.literal = ""  # the rest of true/false/null still due
        self.blank = 0

    @property
    def done(self) -> bool:
        """The object is complete: nothing more may follow."""
        return self.state == "done"

    def copy(self) -> JsonObjectPrefix:
        """An independent copy (to try a continuation)."""
        twin = copy.copy(self)
        twin.stack = list(self.stack)
        return twin

    def feed(self, text: str) -> bool:
        """Read ``text``; False (and an unusable state) at the first character that cannot
        continue a JSON object."""
        return all(self._char(ch) for ch in text)

    # -- one character ----------------------------------------------------------------
    def _blank(self, ch: str) -> bool:
        if ch in _WS:
            self.blank += 1
            return self.blank <= _MAX_BLANK
        self.blank = 0
        return False

    def _char(self, ch: str) -> bool:
        state = self.state
        if state == "string":
            return self._string(ch)
        if state == "number":
            candidate = self.number + ch
            if _NUMBER_PREFIX.fullmatch(candidate):
                self.number = candidate
                return True
            if not _NUMBER.fullmatch(self.number):
                return False
            self.number = ""
            self.state = "after"
            return self._char(ch)
        if state == "literal":
            if ch != self.literal[0]:
                return False
            self.literal = self.literal[1:]
            if not self.literal:
                self.state = "after"
            return True
        if self._blank(ch):
            return state != "done"
        if ch in _WS:
            return False
        if state == "start":
            if ch != "{":
                return False
            self.stack.append("{")
            self.state = "key_or_end"
            return True
        if state in ("key_or_end", "key"):
            if ch == "}" and state == "key_or_end":
                return not self._empty_top() and self._close("{")
            if ch != '"':
                return False
            self.state, self.in_key = "string", True
            return True
        if state == "colon":
            if ch != ":":
                return False
            self.state = "value"
            return True
        if state in ("value", "value_or_end"):
            if ch == "]" and state == "value_or_end":
                return self._close("[")
            return self._value(ch)
        if state == "after":
            if ch == ",":
                self.state = "key" if self.stack[-1] == "{" else "value"
                return True
            if ch in "}]":
                return self._close("{" if ch == "}" else "[")
            return False
        return False  # done: nothing may follow

    def _value(self, ch: str) -> bool:
        if ch == '"':
            self.state, self.in_key = "string", False
        elif ch in "{[":
            self.stack.append(ch)
            self.state = "key_or_end" if ch == "{" else "value_or_end"
        elif ch == "-" or (ch.isdigit() and ch.isascii()):
            self.state, self.number = "number", ch
        elif ch in "tfn":
            self.state = "literal"
            self.literal = {"t": "rue", "f": "alse", "n": "ull"}[ch]
        else:
            return False
        return True

    def _empty_top(self) -> bool:
        """Closing now would leave the top-level object empty, which ``nonempty`` refuses."""
        return self.nonempty and len(self.stack) == 1

    def _close(self, opener: str) -> bool:
        if not self.stack or self.stack[-1] != opener:
            return False
        self.stack.pop()
        self.state = "after" if self.stack else "done"
        return True

    def _string(self, ch: str) -> bool:
        if self.escape == 1:
            if ch not in _ESCAPES:
                return False
            self.escape = 5 if ch == "u" else 0
            return True
        if self.escape > 1:
            if ch not in _HEX:
                return False
            self.escape = 0 if self.escape == 2 else self.escape - 1
            return True
        if ch == "\\":
            self.escape = 1
        elif ch == '"':
            self.state = "colon" if self.in_key else "after"
        elif ord(ch) < 0x20:
            return False
        return True

    # -- completion -------------------------------------------------------------------
    def closing(self) -> str:
        """The shortest text that completes the object from here."""
        out = ""
        state = self.state
        if state == "string":
            out += "n" if self.escape == 1 else "0" * max(0, self.escape - 1)
            out += '"'
            state = "colon" if self.in_key else "after"
        elif state == "number":
            out += "" if _NUMBER.fullmatch(self.number) else "0"
            state = "after"
        elif state == "literal":
            out += self.literal
            state = "after"
        if state == "start":
            return out + ('{"": null}' if self.nonempty else "{}")
        if state == "key" or (state == "key_or_end" and self._empty_top()):
            out += '"": null'
        elif state == "colon":
            out += ": null"
        elif state == "value":
            out += "null"
        return out + "".join("}" if c == "{" else "]" for c in reversed(self.stack))
