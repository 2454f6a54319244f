"""Bundled synthetic example records (invented English dialogues, written for the project).

They are scored by ``empathos score`` when no path is given and serve the tests. Regenerate
them with ``python -m empathos.examples.make_examples``.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["example_paths", "examples_dir"]


def examples_dir() -> Path:
    """Directory holding one sub-directory of records per example model."""
    return Path(str(files("empathos.examples").joinpath("records")))


def example_paths() -> list[Path]:
    """Every bundled example record file, sorted."""
    return sorted(examples_dir().glob("*/*.json"))
