"""The JSON schema of :class:`DialogueRecord`, and the tool that keeps docs/records.md current.

``python -m empathos.records.schema docs/records.md`` rewrites the schema block of the doc
(between the ``schema:begin`` and ``schema:end`` markers); a test checks it is current.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from empathos.records.model import DialogueRecord

__all__ = ["BEGIN", "END", "main", "record_json_schema", "render_schema_block", "update_doc"]

BEGIN = "<!-- schema:begin -->"
END = "<!-- schema:end -->"


def record_json_schema() -> dict[str, Any]:
    """The record's JSON schema (pydantic, validation mode)."""
    return DialogueRecord.model_json_schema()


def render_schema_block() -> str:
    """The fenced JSON block placed between the markers."""
    body = json.dumps(record_json_schema(), indent=2, ensure_ascii=False, sort_keys=True)
    return f"{BEGIN}\n```json\n{body}\n```\n{END}"


def update_doc(text: str) -> str:
    """Replace the block between the markers (or append one) with the current schema."""
    block = render_schema_block()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return head + block + tail
    return text.rstrip("\n") + "\n\n" + block + "\n"


def main(argv: list[str]) -> int:
    """Rewrite the schema block of the file named in argv[0]."""
    if len(argv) != 1:
        sys.stderr.write("usage: python -m empathos.records.schema DOC.md\n")
        return 2
    path = Path(argv[0])
    path.write_text(update_doc(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
