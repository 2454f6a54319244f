"""EPM-Q as an Inspect scorer and metric, computed as ``empathos score`` computes it.

Per sample (one dialogue), :func:`epmq` scores the record in the sample's store with
:func:`empathos.scoring.score_records`: the value is the dialogue's EPM-Q; the metadata
holds the termination, success, turns, final distance, the nine indices and the three
groups. A dialogue that ended as ``error`` is unscored (``Score.unscored``), as
``empathos score`` leaves it out.

The task-level metric, :func:`empa_metrics`, takes every dialogue (each epoch is a trial:
``scores="unreduced"``), stacks the per-dialogue indices and aggregates them with
:func:`empathos.epm.aggregate_indices`, the aggregation ``score_records`` applies to a
model's dialogues: EPM-Q, outcome, efficiency, stability, the success rate and the number
of dialogues scored. Scoring reads only the store, so ``inspect score`` can score a
finished log again, e.g. under the other preset (``-S preset=paper``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState

from empathos.epm import INDEX_NAMES, EPMConfig, PresetName, TerminationKind, aggregate_indices
from empathos.integrations.inspect.transcript import stored_record
from empathos.records import DialogueRecord
from empathos.scoring import score_records

__all__ = ["dialogue_score", "empa_metrics", "epmq"]

_GROUPS = ("outcome", "efficiency", "stability")


def dialogue_score(record: DialogueRecord, preset: PresetName) -> Score:
    """The score of one dialogue under ``preset`` (unscored when it ended as ``error``)."""
    term = record.termination
    if term.kind is TerminationKind.ERROR:
        return Score.unscored(
            reason="dialogue_error",
            answer=term.kind.value,
            explanation=f"ended as error at turn {term.turn}: {term.reason}",
            metadata={"termination": term.kind.value, "preset": preset},
        )
    row = score_records(record.model or "", [record], EPMConfig.preset(preset))
    final = record.trajectory[-1]
    metadata: dict[str, Any] = {
        "preset": preset,
        "termination": term.kind.value,
        "success": term.kind.is_success,
        "turns": record.total_turns,
        "final_distance": final.distance,
        "final_P": list(final.P),
        "n_unscored": record.n_unscored,
        "indices": dict(row.indices),
        **{group: getattr(row, group) for group in _GROUPS},
    }
    outcome = "success" if term.kind.is_success else "no success"
    return Score(
        value=row.epmq if row.epmq is not None else float("nan"),
        answer=term.kind.value,
        explanation=(
            f"{outcome}: {term.kind.value} at turn {term.turn} ({term.reason}); "
            f"final distance {final.distance:.2f}"
        ),
        metadata=metadata,
    )


@metric(scores="unreduced")
def empa_metrics() -> Metric:
    """EPM-Q, its three groups, the success rate and the number of dialogues scored, over
    every scored dialogue (every epoch), aggregated as ``empathos score`` aggregates."""

    def compute(scores: list[SampleScore]) -> Value:
        metas = [s.score.metadata for s in scores if s.score.metadata]
        rows = [m for m in metas if "indices" in m]
        if not rows:
            return {"scored": 0.0}
        config = EPMConfig.preset(rows[0]["preset"])
        indices = np.asarray([[m["indices"][k] for k in INDEX_NAMES] for m in rows], float)
        agg = aggregate_indices(indices, config)
        return {
            "epmq": agg["epmq"],
            **{group: agg[group] for group in _GROUPS},
            "success_rate": sum(bool(m["success"]) for m in rows) / len(rows),
            "scored": float(len(rows)),
        }

    return compute


@scorer(metrics=[empa_metrics()])
def epmq(preset: PresetName = "reference") -> Scorer:
    """Score the dialogue in the sample's store (``empathos:record``) under ``preset``."""

    async def score(state: TaskState, target: Target) -> Score:
        record = stored_record(state.store, f"sample {state.sample_id} epoch {state.epoch}")
        if record is None:
            return Score.unscored(reason="no_record", explanation="no dialogue record stored")
        return dialogue_score(record, preset)

    return score
