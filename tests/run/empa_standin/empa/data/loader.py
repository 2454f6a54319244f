"""Cases from the stand-in's own data folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent


def load_official_cases() -> list[str]:
    text = (DATA / "official_cases.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def load_config(script_id: str, data_dir: str | None = None) -> dict[str, Any]:
    folder = Path(data_dir) if data_dir else DATA
    card = (folder / "cases" / f"{script_id}.md").read_text(encoding="utf-8")
    return {"scenario": {"id": script_id, "story": card.splitlines()[0]}, "actor_prompt": card}
