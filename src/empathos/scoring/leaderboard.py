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
from empathos.errors import InputError
from empathos.records import DialogueRecord, LoadedRecord
from empathos.scoring.integrity import LabelBy, row_label
from empathos.scoring.usage import usage_summary

__all__ = [
    "GroupBy",
    "LeaderboardRow",
    "bootstrap_ci",
    "leaderboard",
    "records_to_batch",
    "score_records",
]

GroupBy = Literal["model", "case"]


def _level_sums(rec: DialogueRecord) -> tuple[int, int]:
    """(sum of every rated level, sum of |level| of negative indicators) over scored points."""
    neg = rec.rubric.negative_keys
    total = absneg = 0
    for ev in rec.evaluations:
        if not ev.scored:
            continue
        for key, rating in ev.ratings.items():
            lv = rating.level
            if lv is not None:
                total += lv
                if key in neg:
                    absneg += abs(lv)
    return total, absneg


def records_to_batch(records: Sequence[DialogueRecord]) -> TrajectoryBatch:
    """Padded arrays of the scored points of N records (see :class:`TrajectoryBatch`).

    Points of all records are gathered into flat lists first and converted once; padding
    repeats each record's last point through an index gather.
    """
    n = len(records)
    dims = {rec.rubric.dim for rec in records}
    if len(dims) > 1:
        raise InputError(f"cannot score records of rubrics with different axes together: {dims}")
    flat_P: list[tuple[float, ...]] = []
    flat_dE: list[float] = []
    flat_al: list[float] = []
    lengths = np.zeros(n, dtype=np.int64)
    sums = np.zeros((n, 2))
    for i, rec in enumerate(records):
        states = [ev.state for ev in rec.evaluations if ev.scored]
        flat_P.append(rec.initial_state.P)
        flat_P.extend([st.P for st in states])
        flat_dE.append(0.0)
        flat_dE.extend([st.delta_E or 0.0 for st in states])
        flat_al.append(0.0)
        flat_al.extend([st.alignment or 0.0 for st in states])
        lengths[i] = len(states) + 1
        sums[i] = _level_sums(rec)
    width = int(lengths.max()) if n else 1
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if n else np.zeros(0, np.int64)
    cols = np.arange(width)[None, :]
    gather = offsets[:, None] + np.minimum(cols, lengths[:, None] - 1)
    mask = cols < lengths[:, None]
    P_flat = np.asarray(flat_P, dtype=np.float64).reshape(len(flat_P), -1)
    dim = P_flat.shape[1] if n else 3
    return TrajectoryBatch(
        P=P_flat[gather] if n else np.zeros((0, 1, dim)),
        delta_E=np.asarray(flat_dE)[gather] * mask if n else np.zeros((0, 1)),
        alignment=np.asarray(flat_al)[gather] * mask if n else np.zeros((0, 1)),
        mask=mask,
        E_total=np.asarray([_final_energy(r) for r in records], dtype=np.float64),
        turns=np.asarray([r.total_turns for r in records], dtype=np.float64),
        level_sum=sums[:, 0],
        neg_level_sum=sums[:, 1],
    )


def _final_energy(rec: DialogueRecord) -> float:
    return rec.evaluations[-1].state.E_total if rec.evaluations else rec.initial_state.E_total


_BOOTSTRAP_MAX_N = 2000


def bootstrap_ci(
    values: np.ndarray, *, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """95% interval of the mean over cases (None for < 2 values).

    A percentile bootstrap (fixed seed, so reruns agree) up to 2,000 cases; above that the
    bootstrap distribution of a mean is normal to plotting accuracy, so mean +- 1.96 SE is
    used instead of resampling millions of values.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return None
    if v.size > _BOOTSTRAP_MAX_N:
        half = 1.96 * float(v.std(ddof=1)) / float(np.sqrt(v.size))
        return float(v.mean()) - half, float(v.mean()) + half
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(resamples, v.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


class LeaderboardRow(BaseModel):
    """Scores of one group (a model, or a case with ``--by case``)."""

    model: str = Field(description="Group label: the model name (or the case id).")
    n: int = Field(description="Dialogues scored (errors excluded).")
    successes: int = Field(description="Dialogues whose termination is a success.")
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
        "turns-to-success summary, the bootstrap 95% CI of EPM-Q and the usage (tokens, "
        "cached tokens and cost: in all, per dialogue and per role; see scoring.usage)."
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="Why these scores are not meaningful, from the records' score_warning "
        "(e.g. sandbox roles on the bundled 135M model); empty: no known reason.",
    )


def _row_extra(
    batch: TrajectoryBatch, idx: np.ndarray, won: Sequence[DialogueRecord], config: EPMConfig
) -> dict[str, Any]:
    """The signed tortuosity, the turns-to-success summary and the EPM-Q interval of a
    group's scored dialogues (``idx``: their indices, ``won``: their successes)."""
    tts = [r.termination.turn for r in won]
    w = np.asarray(config.weights) / 3.0
    per_dialogue_q = (
        idx[:, 0:3].sum(1) * w[0] + idx[:, 3:6].sum(1) * w[1] + idx[:, 6:9].sum(1) * w[2]
    )
    ci = bootstrap_ci(per_dialogue_q)
    return {
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


def score_records(
    label: str, records: Sequence[DialogueRecord], config: EPMConfig
) -> LeaderboardRow:
    """Score one group of records."""
    kinds = Counter(r.termination.kind.value for r in records)
    warnings = sorted({r.score_warning for r in records if r.score_warning})
    scored = [r for r in records if r.termination.kind is not TerminationKind.ERROR]
    n = len(scored)
    extra: dict[str, Any] = {
        "terminations": dict(sorted(kinds.items())),
        "errors": kinds.get(TerminationKind.ERROR.value, 0),
        "unscored_evaluations": sum(r.n_unscored for r in records),
        "usage": usage_summary(records).model_dump(mode="json"),
    }
    if n == 0:
        return LeaderboardRow(
            model=label, n=0, successes=0, success_rate=None, epmq=None, outcome=None,
            efficiency=None, stability=None, indices={k: None for k in INDEX_NAMES}, extra=extra,
            warnings=warnings,
        )  # fmt: skip
    batch = records_to_batch(scored)
    idx = dialogue_indices(batch, config)
    agg = aggregate_indices(idx, config)
    # The termination wins over a stored ``success`` that disagrees with it (such records are
    # reported by ``empathos score``): success counts and turns-to-success then agree with
    # the termination counts, and replay checks the termination against the trajectory.
    won = [r for r in scored if r.termination.kind.is_success]
    extra.update(_row_extra(batch, idx, won, config))
    return LeaderboardRow(
        model=label,
        n=n,
        successes=len(won),
        success_rate=len(won) / n,
        epmq=agg["epmq"],
        outcome=agg["outcome"],
        efficiency=agg["efficiency"],
        stability=agg["stability"],
        indices={k: agg[k] for k in INDEX_NAMES},
        extra=extra,
        warnings=warnings,
    )


def leaderboard(
    loaded: Sequence[LoadedRecord],
    config: EPMConfig,
    by: GroupBy = "model",
    label_by: LabelBy = "auto",
) -> list[LeaderboardRow]:
    """Group records by model (or case) and score each group; rows sorted by EPM-Q.

    ``label_by`` names a model's row (see :func:`empathos.scoring.integrity.row_label`)."""
    groups: dict[str, list[LoadedRecord]] = defaultdict(list)
    for item in loaded:
        key = row_label(item, label_by) if by == "model" else item.record.scenario_id
        groups[key].append(item)
    rows = []
    for label, items in groups.items():
        items.sort(key=lambda x: (x.record.scenario_id, str(x.path)))
        rows.append(score_records(label, [x.record for x in items], config))
    rows.sort(key=lambda r: (-(r.epmq if r.epmq is not None else -1e9), r.model))
    return rows
