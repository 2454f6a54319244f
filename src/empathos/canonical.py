"""Canonical bytes and their hash: the one way a fingerprint, a content hash or a cache key
is made (and :func:`file_hashes`, the content hash of the files a run read).

:func:`canonical_json` turns a value into JSON text that depends on the value alone: mapping
keys sorted, sets sorted, dataclasses and pydantic models by their fields, paths as text,
enums by value; never ``repr`` (whose order follows Python's string hash randomisation for
sets and for dicts built from them) and never anything that differs between processes,
hash seeds or machines. A value of any other type is a ``TypeError``, not a silent ``repr``.
:func:`canonical_digest` is the sha256 of those bytes, hex.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any

__all__ = ["canonical_digest", "canonical_json", "file_hashes", "plain"]


def plain(value: Any) -> Any:
    """``value`` as plain JSON data (dicts with text keys, lists, text, numbers, None)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, PurePath):
        return value.as_posix()
    if isinstance(value, Mapping):
        return {str(plain(k)): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        items = [plain(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)  # a pydantic model
    if callable(dump):
        return plain(dump(mode="json"))
    raise TypeError(f"no canonical form for a {type(value).__name__}")


def canonical_json(value: Any, *, compact: bool = False) -> str:
    """The canonical JSON text of ``value`` (keys sorted, non-ASCII kept; ``compact`` drops
    the spaces after separators)."""
    separators = (",", ":") if compact else (", ", ": ")
    return json.dumps(plain(value), sort_keys=True, ensure_ascii=False, separators=separators)


def canonical_digest(value: Any, length: int | None = None, *, compact: bool = False) -> str:
    """The sha256 (hex, the first ``length`` digits when given) of ``value``'s canonical JSON."""
    text = canonical_json(value, compact=compact)
    hexdigest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return hexdigest[:length] if length else hexdigest


def file_hashes(root: Path, files: Sequence[Path]) -> dict[str, str]:
    """Each file's sha256 (hex) by its path relative to ``root`` (as given when outside it):
    what a manifest records of the user's copy a run read."""
    return {
        str(f.relative_to(root) if f.is_relative_to(root) else f): hashlib.sha256(
            f.read_bytes()
        ).hexdigest()
        for f in files
    }
