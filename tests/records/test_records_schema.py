"""docs/records.md carries the current JSON schema of the record model."""

from __future__ import annotations

from pathlib import Path

from empathos.records.schema import BEGIN, END, render_schema_block, update_doc

DOC = Path(__file__).resolve().parents[2] / "docs" / "records.md"


def test_docs_schema_block_is_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    assert render_schema_block() in text, (
        "docs/records.md is out of date: run python -m empathos.records.schema docs/records.md"
    )


def test_update_doc_replaces_only_the_block() -> None:
    stale = f"intro\n{BEGIN}\nSTALE-BLOCK\n{END}\noutro\n"
    new = update_doc(stale)
    assert new.startswith("intro\n") and new.endswith("\noutro\n") and "STALE-BLOCK" not in new
    assert update_doc(new) == new
