"""The human check of stage 1 (feature extraction), as the paper did on 200 samples.

1. ``export``: a random sample of extracted items to ``review.csv`` and ``review.html`` (the
   scrubbed conversation the model saw, next to what it extracted). The conversation comes
   from the state (``--keep-source``) or from the conversation files given again.
2. A reviewer fills the ``verdict`` column: ``correct`` / ``incorrect`` (also y/n, 1/0,
   yes/no, ok/wrong); an empty verdict is not counted.
3. ``import``: the verdicts are stored in ``OUT/review/verdicts.json``.
4. ``report``: accuracy with a Wilson score interval.
"""

from __future__ import annotations

import csv
import html
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path

from empathos.distill.formats import Conversation
from empathos.distill.schema import Features
from empathos.distill.scrub import filter_conversation, scrub_conversation
from empathos.distill.state import atomic_write
from empathos.errors import InputError

__all__ = [
    "FEATURE_COLUMNS",
    "ReviewReport",
    "accuracy_report",
    "export_review",
    "import_verdicts",
    "parse_verdict",
    "wilson_interval",
]

FEATURE_COLUMNS: tuple[str, ...] = tuple(Features.model_fields)
_YES = {"correct", "c", "y", "yes", "1", "true", "ok", "right"}
_NO = {"incorrect", "i", "n", "no", "0", "false", "wrong"}


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def parse_verdict(text: str) -> bool | None:
    """True / False for a verdict cell, None when empty; anything else is an error."""
    value = text.strip().lower()
    if not value:
        return None
    if value in _YES:
        return True
    if value in _NO:
        return False
    raise ValueError(f"unknown verdict {text!r} (use correct or incorrect)")


def _source_text(out: Path, sid: str, given: dict[str, Conversation]) -> str | None:
    conv = given.get(sid)
    path = out / "state" / sid / "source.json"
    if conv is None and path.is_file():
        conv = Conversation.model_validate_json(path.read_text(encoding="utf-8"))
    if conv is None:
        return None
    clean = scrub_conversation(filter_conversation(conv)[0]).conversation
    return "\n".join(f"{t.speaker}: {t.text}" for t in clean.turns)


def export_review(
    out: Path, dest: Path, conversations: list[Conversation], n: int = 200, seed: int = 0
) -> tuple[Path, Path, int]:
    """Write ``review.csv`` and ``review.html`` for a sample of ``n`` extracted items."""
    state = out / "state"
    ids = sorted(p.parent.name for p in state.glob("*/extract.json"))
    if not ids:
        raise InputError("no extracted items (run empathos distill first)", file=state)
    sample = sorted(random.Random(seed).sample(ids, min(n, len(ids))))
    given = {c.id: c for c in conversations}
    rows: list[dict[str, str]] = []
    for sid in sample:
        text = _source_text(out, sid, given)
        if text is None:
            raise InputError(
                f"no source for {sid}: give the conversation files again or distil with "
                "--keep-source",
                file=state / sid,
            )
        data = json.loads((state / sid / "extract.json").read_text(encoding="utf-8"))
        value = data.get("value", {})
        row = {"source_id": sid, "conversation": text}
        row.update({k: str(value.get(k, "")) for k in FEATURE_COLUMNS})
        row.update({"verdict": "", "note": ""})
        rows.append(row)
    dest.mkdir(parents=True, exist_ok=True)
    csv_path, html_path = dest / "review.csv", dest / "review.html"
    with csv_path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    atomic_write(html_path, _html(rows))
    return csv_path, html_path, len(rows)


def _html(rows: list[dict[str, str]]) -> str:
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>distill review</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
        "width:100%}td{vertical-align:top;border:1px solid #ccc;padding:.5em;width:50%}"
        "pre{white-space:pre-wrap;margin:0}dt{font-weight:bold}dd{margin:0 0 .5em 0}</style>",
        "</head><body><h1>Stage-1 review</h1><p>For each item: is the extraction on the "
        "right faithful to the conversation on the left? Write <code>correct</code> or "
        "<code>incorrect</code> in the verdict column of review.csv.</p>",
    ]
    for row in rows:
        fields = "".join(
            f"<dt>{html.escape(k)}</dt><dd>{html.escape(row[k])}</dd>" for k in FEATURE_COLUMNS
        )
        parts.append(
            f"<h2 id='{html.escape(row['source_id'])}'>{html.escape(row['source_id'])}</h2>"
            f"<table><tr><td><pre>{html.escape(row['conversation'])}</pre></td>"
            f"<td><dl>{fields}</dl></td></tr></table>"
        )
    parts.append("</body></html>\n")
    return "".join(parts)


def import_verdicts(out: Path, csv_path: Path) -> dict[str, bool]:
    """Read the verdicts of a filled ``review.csv`` into ``OUT/review/verdicts.json``."""
    try:
        with csv_path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=csv_path) from None
    verdicts: dict[str, bool] = {}
    for n, row in enumerate(rows, start=2):
        if "source_id" not in row or "verdict" not in row:
            raise InputError("needs the columns source_id and verdict", file=csv_path)
        try:
            verdict = parse_verdict(row["verdict"] or "")
        except ValueError as exc:
            raise InputError(str(exc), file=csv_path, field=f"line {n}: verdict") from None
        if verdict is not None:
            verdicts[row["source_id"]] = verdict
    path = out / "review" / "verdicts.json"
    old: dict[str, bool] = {}
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
    merged = {**old, **verdicts}
    atomic_write(path, json.dumps(merged, indent=2, sort_keys=True) + "\n")
    return verdicts


@dataclass(frozen=True)
class ReviewReport:
    """Accuracy of stage 1 over the judged items, with a 95% Wilson interval."""

    judged: int
    correct: int
    low: float
    high: float

    @property
    def accuracy(self) -> float:
        """Share of judged items marked correct."""
        return self.correct / self.judged if self.judged else 0.0

    def line(self) -> str:
        """One line for a person."""
        return (
            f"stage-1 accuracy: {self.accuracy:.1%} ({self.correct}/{self.judged}), "
            f"95% Wilson CI [{self.low:.1%}, {self.high:.1%}]"
        )


def accuracy_report(out: Path) -> ReviewReport:
    """The accuracy over the imported verdicts."""
    path = out / "review" / "verdicts.json"
    if not path.is_file():
        raise InputError("no verdicts imported yet (empathos distill review import)", file=path)
    verdicts: dict[str, bool] = json.loads(path.read_text(encoding="utf-8"))
    correct = sum(1 for v in verdicts.values() if v)
    low, high = wilson_interval(correct, len(verdicts))
    return ReviewReport(judged=len(verdicts), correct=correct, low=low, high=high)
