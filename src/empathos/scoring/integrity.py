"""Checks that keep a leaderboard from being wrong by accident: duplicate dialogues, records
that contradict themselves, and row labels that say which results a row holds.

All functions are pure: they look at loaded records and return what they found; the CLI
prints it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from empathos.errors import InputError
from empathos.records import DialogueRecord, LoadedRecord
from empathos.rubric import action_vector

__all__ = [
    "Contradiction",
    "Duplicate",
    "LabelBy",
    "contradictions",
    "drop_duplicates",
    "is_opaque_model_id",
    "row_label",
]

LabelBy = Literal["auto", "dir", "record"]
_TOL = 1e-6

# Endpoint ids that name a deployment, not a model: "ep-20260224114647-4d99q" (optionally
# behind a provider prefix such as "Custom-"), UUIDs, long hexadecimal ids.
_OPAQUE = (
    re.compile(r"(?:^|[-_/:])ep-\d{8,}(?:-[0-9a-z]+)?$", re.I),
    re.compile(r"(?:^|[-_/:])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I),
    re.compile(r"(?:^|[-_/:])[0-9a-f]{24,}$", re.I),
)


def is_opaque_model_id(name: str) -> bool:
    """True when a model name is an endpoint or deployment id that says nothing to a reader."""
    return any(p.search(name.strip()) for p in _OPAQUE)


def row_label(item: LoadedRecord, label_by: LabelBy = "auto") -> str:
    """The leaderboard label of a record: its model name (``record``), its directory's name
    (``dir``), or (``auto``) the model name unless it is an opaque endpoint id."""
    if label_by == "dir":
        return item.group
    if label_by == "record" or not is_opaque_model_id(item.model_name):
        return item.model_name
    return item.group


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A dialogue given more than once: the copy counted and the ones left out."""

    kept: LoadedRecord
    dropped: tuple[LoadedRecord, ...]
    reason: str

    def line(self) -> str:
        """One warning line naming every file."""
        others = ", ".join(str(x.path) for x in self.dropped)
        rec = self.kept.record
        return (
            f"duplicate dialogue counted once ({self.reason}: {self.kept.model_name} / "
            f"{rec.scenario_id}): {self.kept.path}; also in {others}"
        )


def _content_hash(rec: DialogueRecord) -> str:
    return hashlib.sha256(rec.model_dump_json().encode("utf-8")).hexdigest()


def _identity(item: LoadedRecord) -> tuple[str, str, str]:
    trial = item.record.metadata.get("trial")
    return item.model_name, item.record.scenario_id, "" if trial is None else str(trial)


def drop_duplicates(
    loaded: Sequence[LoadedRecord],
) -> tuple[list[LoadedRecord], list[Duplicate]]:
    """Keep the first copy of each dialogue, in the given order.

    Two records are the same dialogue when they have the same model, scenario and trial
    (``metadata.trial``; none for published files, one file per model and case), or identical
    content (the same file given twice, a copied folder under another name).
    """
    kept: list[LoadedRecord] = []
    by_identity: dict[tuple[str, str, str], int] = {}
    by_content: dict[str, int] = {}
    dropped: dict[int, list[tuple[LoadedRecord, str]]] = {}
    for item in loaded:
        ident, digest = _identity(item), _content_hash(item.record)
        if ident in by_identity:
            dropped.setdefault(by_identity[ident], []).append(
                (item, "same model, scenario and trial")
            )
            continue
        if digest in by_content:
            dropped.setdefault(by_content[digest], []).append((item, "identical content"))
            continue
        by_identity[ident] = by_content[digest] = len(kept)
        kept.append(item)
    dups = [
        Duplicate(kept[i], tuple(x for x, _ in items), items[0][1])
        for i, items in sorted(dropped.items())
    ]
    return kept, dups


@dataclass(frozen=True, slots=True)
class Contradiction:
    """One place where a record disagrees with itself."""

    field: str
    problem: str


def _fields(rec: DialogueRecord) -> tuple[str, str, str]:
    """How the success flag, the termination and evaluation i are named in the file."""
    if rec.source == "empa-published":
        return "epj.epm_victory_analysis", "termination_reason", "epj.trajectory[{n}]"
    return "success", "termination.kind", "evaluations[{i}].state"


def contradictions(rec: DialogueRecord) -> list[Contradiction]:
    """Where a record's stored fields disagree: ``success`` against the termination, the
    stored trajectory (v_t, P_t) against the ratings and against itself."""
    success_field, term_field, point = _fields(rec)
    out: list[Contradiction] = []
    kind = rec.termination.kind
    if rec.success != kind.is_success:
        out.append(
            Contradiction(
                success_field,
                f"success is {str(rec.success).lower()} but {term_field} is {kind.value}",
            )
        )
    prev = np.asarray(rec.initial_state.P, dtype=np.float64)
    n_keys = len(rec.rubric.mdep)
    for i, ev in enumerate(rec.evaluations):
        where = point.format(i=i, n=i + 1)
        v_name = "v_t" if rec.source == "empa-published" else "v"
        p_name = "P_t" if rec.source == "empa-published" else "P"
        P = np.asarray(ev.state.P, dtype=np.float64)
        if not ev.scored or ev.state.v is None:
            if not np.allclose(P, prev, atol=_TOL):
                out.append(Contradiction(f"{where}.{p_name}", "P moved at an unscored point"))
            prev = P
            continue
        v = np.asarray(ev.state.v, dtype=np.float64)
        if not ev.flags and len(ev.ratings) == n_keys:
            try:
                rated = action_vector({k: r.level for k, r in ev.ratings.items()}, rec.rubric)
            except InputError:
                rated = None
            if rated is not None and not np.allclose(rated, v, atol=_TOL):
                out.append(
                    Contradiction(
                        f"{where}.{v_name}",
                        f"stored {v.tolist()} but the ratings give {rated.tolist()}",
                    )
                )
        if not np.allclose(P, prev + v, atol=_TOL):
            out.append(
                Contradiction(
                    f"{where}.{p_name}",
                    f"stored {P.tolist()} but the previous point plus v_t is {(prev + v).tolist()}",
                )
            )
        prev = P
    return out
