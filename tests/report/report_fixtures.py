"""Published-format result folders of many models (invented content, built with
tests/published_factory.py): the shape of the EMPA release's results, with some models
behind opaque endpoint ids, on scenario ids of the bundled set (so ``--scenarios builtin``
labels them)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from published_factory import make_published

#: Bundled scenarios the dialogues are on: six domains, several mechanisms and personas.
SCENARIOS = (
    "en-01-sourdough", "en-02-night-shift", "en-03-lease", "en-04-diagnosis",
    "en-05-choir", "en-06-faith", "en-08-promotion", "en-10-dinner-table",
)  # fmt: skip
_LEVELS = {"Prog": (0, 1, 2), "Neg": (0, 0, -1, -2)}


def _rows(rng: random.Random, skill: float, turns: int) -> list[dict[str, int]]:
    rows = []
    for _ in range(turns):
        row = {}
        for axis in "CAP":
            good = rng.random() < skill
            row[f"{axis}.Prog"] = rng.choice((1, 2)) if good else 0
            row[f"{axis}.Neg"] = 0 if good else rng.choice(_LEVELS["Neg"])
        rows.append(row)
    return rows


def write_models(root: Path, n_models: int = 16, opaque: int = 2, seed: int = 0) -> list[str]:
    """``root/<dir>/script_<case>_result.json`` for ``n_models`` models; the last ``opaque``
    carry endpoint ids as their model name (``Custom-ep-...``), so ``--label auto`` names them
    by directory. Returns the directory names (the row labels under ``--label auto``)."""
    rng = random.Random(seed)
    dirs = []
    for m in range(n_models):
        name = f"model-{m:02d}"
        record_name = f"Custom-ep-2026022411{m:04d}-4d99q" if m >= n_models - opaque else name
        folder = root / name
        folder.mkdir(parents=True)
        skill = 0.15 + 0.8 * m / max(1, n_models - 1)
        for case in SCENARIOS:
            doc = make_published(
                _rows(rng, skill, 12),
                p0=(-rng.randint(6, 14), -rng.randint(8, 16), -rng.randint(6, 14)),
                reason="Reached max turns (12), timeout",
                model=record_name,
            )
            doc["script_id"] = case
            (folder / f"script_{case}_result.json").write_text(json.dumps(doc), "utf-8")
        dirs.append(name)
    return dirs
