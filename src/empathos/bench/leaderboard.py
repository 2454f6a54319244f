"""Scoring and aggregation of dialogue records: the leaderboard behind ``empathos score``.

Records are turned into padded arrays once (:func:`records_to_batch`) and scored with the
vectorised EPM-Q of :mod:`empathos.epm.metrics`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from empathos.epm import (
    INDEX_NAMES,
    EPMConfig,
    TerminationKind,
    TrajectoryBatch,
    aggregate_indices,
    dialogue_indices,
    signed_tau_index,
)
from empathos.records import DialogueRecord, LoadedRecord
from empathos.rubric import Rubric

__all__ = [
    "GroupBy",
    "LeaderboardRow",
    "bootstrap_ci",
    "leaderboard",
    "records_to_batch",
    "score_records",
]

GroupBy = Literal["model", "case"]
_NEG_KEYS: dict[int, frozenset[str]] = {}


def _negative_keys(rubric: Rubric) -> frozenset[str]:
    key = id(rubric)
    if key not in _NEG_KEYS:
        _NEG_KEYS[key] = frozenset(i.key for i in rubric.mdep if i.kind == "negative")
    return _NEG_KEYS[key]


def records_to_batch(records: Sequence[DialogueRecord]) -> TrajectoryBatch:
    """Padded arrays of the scored points of N records (see :class:`TrajectoryBatch`)."""
    n = len(records)
    paths: list[list[tuple[float, ...]]] = []
    dEs: list[list[float]] = []
    aligns: list[list[float]] = []
    level_sum = np.zeros(n)
    neg_sum = np.zeros(n)
    for i, rec in enumerate(records):
        neg = _negative_keys(rec.rubric)
        pts, de, al = [rec.initial_state.P], [0.0], [0.0]
        ls = ns = 0
        for ev in rec.evaluations:
            if not ev.scored:
                continue
            st = ev.state
            pts.append(st.P)
            de.append(st.delta_E or 0.0)
            al.append(st.alignment or 0.0)
            for key, rating in ev.ratings.items():
                if rating.level is not None:
                    ls += rating.level
                    if key in neg:
                        ns += abs(rating.level)
        paths.append(pts)
        dEs.append(de)
        aligns.append(al)
        level_sum[i], neg_sum[i] = ls, ns
    width = max((len(p) for p in paths), default=1)
    dim = len(paths[0][0]) if paths else 3
    P = np.zeros((n, width, dim))
    dE = np.zeros((n, width))
    al_arr = np.zeros((n, width))
    mask = np.zeros((n, width), dtype=bool)
    for i, pts in enumerate(paths):
        k = len(pts)
        P[i, :k] = pts
        P[i, k:] = pts[-1]
        dE[i, :k] = dEs[i]
        al_arr[i, :k] = aligns[i]
        mask[i, :k] = True
    return TrajectoryBatch(
        P=P,
        delta_E=dE,
        alignment=al_arr,
        mask=mask,
        E_total=np.asarray([_final_energy(r) for r in records], dtype=np.float64),
        turns=np.asarray([r.total_turns for r in records], dtype=np.float64),
        level_sum=level_sum,
        neg_level_sum=neg_sum,
    )


def _final_energy(rec: DialogueRecord) -> float:
    return rec.evaluations[-1].state.E_total if rec.evaluations else rec.initial_state.E_total


def bootstrap_ci(
    values: np.ndarray, *, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """95% percentile bootstrap interval of the mean over cases (None for < 2 values)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return None
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(resamples, v.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


class LeaderboardRow(BaseModel):
    """Scores of one group (a model, or a case with ``--by case``)."""

    model: str = Field(description="Group label: the model name (or the case id).")
    n: int = Field(description="Dialogues scored (errors excluded).")
    successes: int = Field(description="Successful dialogues.")
    success_rate: float | None = Field(description="successes / n.")
    epmq: float | None = Field(description="EPM-Q composite.")
    outcome: float | None = Field(description="Outcome group score.")
    efficiency: float | None = Field(description="Efficiency group score.")
    stability: float | None = Field(description="Stability group score.")
    indices: dict[str, float | None] = Field(
        description="The nine indices (RDI ... Pen); None when nothing was scored."
    )
    extra: dict[str, Any] = Field(
        description="Signed tortuosity, termination counts, errors, unscored evaluations, "
        "turns-to-success summary and the bootstrap 95% CI of EPM-Q."
    )


def score_records(
    label: str, records: Sequence[DialogueRecord], config: EPMConfig
) -> LeaderboardRow:
    """Score one group of records."""
    kinds = Counter(r.termination.kind.value for r in records)
    scored = [r for r in records if r.termination.kind is not TerminationKind.ERROR]
    n = len(scored)
    extra: dict[str, Any] = {
        "terminations": dict(sorted(kinds.items())),
        "errors": kinds.get(TerminationKind.ERROR.value, 0),
        "unscored_evaluations": sum(r.n_unscored for r in records),
    }
    if n == 0:
        return LeaderboardRow(
            model=label, n=0, successes=0, success_rate=None, epmq=None, outcome=None,
            efficiency=None, stability=None, indices={k: None for k in INDEX_NAMES}, extra=extra,
        )  # fmt: skip
    batch = records_to_batch(scored)
    idx = dialogue_indices(batch, config)
    agg = aggregate_indices(idx, config)
    successes = sum(1 for r in scored if r.success)
    tts = [r.termination.turn for r in scored if r.success]
    w = np.asarray(config.weights) / 3.0
    per_dialogue_q = (
        idx[:, 0:3].sum(1) * w[0] + idx[:, 3:6].sum(1) * w[1] + idx[:, 6:9].sum(1) * w[2]
    )
    ci = bootstrap_ci(per_dialogue_q)
    extra.update(
        {
            "tau_signed": float(signed_tau_index(batch, config).mean()),
            "turns_to_success": (
                {
                    "mean": float(np.mean(tts)),
                    "median": float(np.median(tts)),
                    "min": int(min(tts)),
                    "max": int(max(tts)),
                }
                if tts
                else None
            ),
            "epmq_ci95": list(ci) if ci else None,
        }
    )
    return LeaderboardRow(
        model=label,
        n=n,
        successes=successes,
        success_rate=successes / n,
        epmq=agg["epmq"],
        outcome=agg["outcome"],
        efficiency=agg["efficiency"],
        stability=agg["stability"],
        indices={k: agg[k] for k in INDEX_NAMES},
        extra=extra,
    )


def leaderboard(
    loaded: Sequence[LoadedRecord], config: EPMConfig, by: GroupBy = "model"
) -> list[LeaderboardRow]:
    """Group records by model (or case) and score each group; rows sorted by EPM-Q."""
    groups: dict[str, list[LoadedRecord]] = defaultdict(list)
    for item in loaded:
        groups[item.model_name if by == "model" else item.record.scenario_id].append(item)
    rows = []
    for label, items in groups.items():
        items.sort(key=lambda x: (x.record.scenario_id, str(x.path)))
        rows.append(score_records(label, [x.record for x in items], config))
    rows.sort(key=lambda r: (-(r.epmq if r.epmq is not None else -1e9), r.model))
    return rows
