"""Reading support conversations: our JSONL, OpenAI-style ``messages`` JSONL, ESConv JSON.

Every layout becomes a list of :class:`Conversation` (an id, the turns as seeker/supporter
lines, optional speaker names and the source's own labels). The layout is detected per file:

- **ours** (``.jsonl``): one conversation per line, ``{"id", "language"?, "turns": [{"speaker":
  "seeker"|"supporter", "text", "name"?}], "situation"?}``;
- **OpenAI messages** (``.jsonl``): one object per line with ``messages`` (``role`` user /
  assistant / system, ``content``, optional ``name``); user lines are the seeker's, assistant
  lines the supporter's, system lines are dropped;
- **ESConv** (``.json``): a list of objects with ``dialog`` (``speaker`` seeker / supporter,
  ``content``), ``situation``, ``emotion_type``, ``problem_type``.

Anything else is one :class:`~empathos.errors.InputError` naming the file (and line).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from empathos.errors import InputError

__all__ = [
    "FORMATS",
    "Conversation",
    "ConversationTurn",
    "Format",
    "detect_language",
    "read_conversations",
]

Format = Literal["ours", "openai", "esconv"]
FORMATS: tuple[str, ...] = ("ours", "openai", "esconv")
Speaker = Literal["seeker", "supporter"]

_OPENAI_ROLES: dict[str, Speaker] = {"user": "seeker", "assistant": "supporter"}
_SPEAKERS: dict[str, Speaker] = {
    "seeker": "seeker",
    "supporter": "supporter",
    "usr": "seeker",
    "sys": "supporter",
    "user": "seeker",
    "helper": "supporter",
}


class ConversationTurn(BaseModel):
    """One line of a support conversation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    speaker: Speaker = Field(description="seeker (the person asking for support) or supporter.")
    text: str = Field(description="What was said.")
    name: str | None = Field(None, description="The speaker's name when the source tags it.")


class Conversation(BaseModel):
    """A support conversation as read from a corpus file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Source id: the file's own id, else '<file stem>-<n>'.")
    format: Format = Field(description="The layout it was read from.")
    turns: list[ConversationTurn] = Field(description="The lines in order.")
    language: Literal["en", "zh"] = Field(description="Language (given, else detected).")
    labels: dict[str, str] = Field(
        default_factory=dict, description="The source's own labels (situation, emotion, ...)."
    )

    def speaker_names(self) -> set[str]:
        """Names carried by speaker tags (to be scrubbed)."""
        return {t.name for t in self.turns if t.name}


def detect_language(text: str) -> Literal["en", "zh"]:
    """'zh' when CJK ideographs make up at least a fifth of the letters, else 'en'."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "zh" if cjk and cjk * 5 >= (cjk + latin) else "en"


def _safe_id(raw: object, fallback: str) -> str:
    text = str(raw) if raw not in (None, "") else fallback
    keep = "".join(c if c.isalnum() or c in "-_." else "-" for c in text)
    return keep.strip("-.") or fallback


def _finish(
    cid: str, fmt: Format, turns: list[ConversationTurn], lang: object, labels: dict[str, str]
) -> Conversation:
    given = lang if lang in ("en", "zh") else None
    language = given or detect_language(" ".join(t.text for t in turns))
    return Conversation(id=cid, format=fmt, turns=turns, language=language, labels=labels)


def _labels(obj: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, str]:
    return {k: str(obj[k]) for k in keys if isinstance(obj.get(k), str) and obj[k].strip()}


def _bad(path: Path, where: str, problem: str) -> InputError:
    return InputError(problem, file=path, field=where)


def _ours(obj: Mapping[str, Any], path: Path, line: int) -> Conversation:
    turns = []
    for i, t in enumerate(obj["turns"]):
        if not isinstance(t, Mapping) or not isinstance(t.get("text"), str):
            raise _bad(path, f"line {line}: turns[{i}]", "expected {speaker, text}")
        speaker = _SPEAKERS.get(str(t.get("speaker", "")).lower())
        if speaker is None:
            raise _bad(path, f"line {line}: turns[{i}].speaker", "use 'seeker' or 'supporter'")
        name = t.get("name")
        turns.append(ConversationTurn(speaker=speaker, text=t["text"], name=name or None))
    cid = _safe_id(obj.get("id"), f"{path.stem}-{line}")
    return _finish(cid, "ours", turns, obj.get("language"), _labels(obj, ("situation", "topic")))


def _openai(obj: Mapping[str, Any], path: Path, line: int) -> Conversation:
    turns = []
    for i, m in enumerate(obj["messages"]):
        if not isinstance(m, Mapping) or not isinstance(m.get("content"), str):
            raise _bad(path, f"line {line}: messages[{i}]", "expected {role, content} with text")
        role = str(m.get("role", ""))
        if role in ("system", "developer", "tool"):
            continue
        speaker = _OPENAI_ROLES.get(role)
        if speaker is None:
            raise _bad(path, f"line {line}: messages[{i}].role", f"unknown role {role!r}")
        name = m.get("name")
        turns.append(ConversationTurn(speaker=speaker, text=m["content"], name=name or None))
    cid = _safe_id(obj.get("id"), f"{path.stem}-{line}")
    return _finish(cid, "openai", turns, obj.get("language"), {})


def _esconv(obj: Mapping[str, Any], path: Path, index: int) -> Conversation:
    turns = []
    for i, t in enumerate(obj["dialog"]):
        if not isinstance(t, Mapping) or not isinstance(t.get("content"), str):
            raise _bad(path, f"[{index}].dialog[{i}]", "expected {speaker, content}")
        speaker = _SPEAKERS.get(str(t.get("speaker", "")).lower())
        if speaker is None:
            raise _bad(path, f"[{index}].dialog[{i}].speaker", "use 'seeker' or 'supporter'")
        turns.append(ConversationTurn(speaker=speaker, text=t["content"].strip()))
    cid = _safe_id(obj.get("id"), f"{path.stem}-{index + 1}")
    labels = _labels(obj, ("situation", "emotion_type", "problem_type", "experience_type"))
    return _finish(cid, "esconv", turns, obj.get("language"), labels)


_UNKNOWN = (
    "unknown conversation layout: expected our JSONL (id, turns), OpenAI JSONL (messages) "
    "or ESConv JSON (a list of objects with dialog)"
)


def _jsonl(path: Path, text: str) -> Iterator[Conversation]:
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _bad(path, f"line {n}", f"not JSON ({exc.msg})") from None
        if isinstance(obj, Mapping) and isinstance(obj.get("turns"), list):
            yield _ours(obj, path, n)
        elif isinstance(obj, Mapping) and isinstance(obj.get("messages"), list):
            yield _openai(obj, path, n)
        elif isinstance(obj, Mapping) and isinstance(obj.get("dialog"), list):
            yield _esconv(obj, path, n - 1)
        else:
            raise _bad(path, f"line {n}", _UNKNOWN)


def _json(path: Path, text: str) -> Iterator[Conversation]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg} at line {exc.lineno})", file=path) from None
    items = data if isinstance(data, list) else [data]
    for i, obj in enumerate(items):
        if isinstance(obj, Mapping) and isinstance(obj.get("dialog"), list):
            yield _esconv(obj, path, i)
        elif isinstance(obj, Mapping) and isinstance(obj.get("turns"), list):
            yield _ours(obj, path, i + 1)
        elif isinstance(obj, Mapping) and isinstance(obj.get("messages"), list):
            yield _openai(obj, path, i + 1)
        else:
            raise _bad(path, f"[{i}]", _UNKNOWN)


def read_conversations(paths: list[Path]) -> list[Conversation]:
    """Every conversation in ``paths`` (files, or directories of .json/.jsonl), in order.

    Ids must be unique across the inputs (a repeated id is an InputError)."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(x for x in p.rglob("*") if x.suffix in (".json", ".jsonl")))
        elif p.is_file():
            files.append(p)
        else:
            raise InputError("no such file or directory", file=p)
    out: list[Conversation] = []
    seen: dict[str, Path] = {}
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read: {exc}", file=path) from None
        reader = _jsonl if path.suffix == ".jsonl" else _json
        for conv in reader(path, text):
            if conv.id in seen:
                raise InputError(
                    f"conversation id {conv.id!r} repeats ({seen[conv.id]})", file=path
                )
            seen[conv.id] = path
            out.append(conv)
    return out
