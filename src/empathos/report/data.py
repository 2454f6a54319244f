"""What the report shows, computed once from loaded records: the leaderboard with bootstrap
intervals, per-dialogue summaries, breakdowns by scenario label, the per-case matrix and token
usage. No I/O: the shell (``report.writer``) reads records and writes files.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from empathos.epm import INDEX_NAMES, EPMConfig, TerminationKind
from empathos.records import DialogueRecord, LoadedRecord
from empathos.report.labels import GROUPINGS, UNLABELLED, labels_of
from empathos.scoring.dialogues import GROUP_NAMES, dialogue_scores
from empathos.scoring.integrity import LabelBy, row_label
from empathos.scoring.leaderboard import LeaderboardRow, leaderboard
from empathos.scoring.stats import (
    bootstrap_means,
    bootstrap_ratio,
    cluster_bootstrap_weights,
    cluster_index,
)
from empathos.scoring.usage import Usage, usage_summary

__all__ = [
    "CI_COLUMNS",
    "DialogueSummary",
    "ModelSummary",
    "ReportData",
    "build_report_data",
    "dialogue_trials",
    "outcome_of",
]

#: Columns that get a bootstrap interval, in table order.
CI_COLUMNS: tuple[str, ...] = ("epmq", *GROUP_NAMES, *INDEX_NAMES, "success_rate")


def outcome_of(record: DialogueRecord) -> str:
    """success, failure, error or other (turn cap reached)."""
    kind = record.termination.kind
    if kind is TerminationKind.ERROR:
        return "error"
    if record.success:
        return "success"
    return "failure" if kind.is_failure else "other"


@dataclass(frozen=True, slots=True)
class DialogueSummary:
    """One dialogue as the report lists it (scores are None for errors)."""

    key: str
    model: str
    scenario_id: str
    trial: int
    path: str
    outcome: str
    termination: str
    reason: str
    turns: int
    epmq: float | None
    indices: dict[str, float | None]
    final_norm: float
    labels: dict[str, str]
    trajectory: list[tuple[float, ...]]


@dataclass(frozen=True, slots=True)
class ModelSummary:
    """A leaderboard row (the numbers of ``empathos score``) with its 95% intervals."""

    row: LeaderboardRow
    ci: dict[str, tuple[float, float] | None]
    scenarios: int
    trials: int
    usage: Usage


@dataclass(frozen=True, slots=True)
class ReportData:
    """Everything the HTML page, the figures and the tables draw."""

    preset: str
    models: list[ModelSummary]
    dialogues: list[DialogueSummary]
    breakdowns: dict[str, dict[str, dict[str, tuple[float, int]]]]
    scenario_ids: list[str]
    alpha: float
    notes: list[str] = field(default_factory=list)

    @property
    def model_names(self) -> list[str]:
        """Models in leaderboard order."""
        return [m.row.model for m in self.models]


def dialogue_trials(items: Sequence[LoadedRecord]) -> list[int]:
    """Trial number of each record of one model (one leaderboard row, or one side of a
    comparison): its ``metadata.trial`` when stored (runs of ours), else its rank among the
    records of the same scenario, in the given order."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for x in items:
        stored = x.record.metadata.get("trial")
        key = x.record.scenario_id
        out.append(stored if isinstance(stored, int) else seen[key])
        seen[key] += 1
    return out


def _model_ci(
    records: Sequence[DialogueRecord], scenario_ids: Sequence[str], config: EPMConfig, seed: int
) -> dict[str, tuple[float, float] | None]:
    ok = [i for i, r in enumerate(records) if r.termination.kind is not TerminationKind.ERROR]
    recs = [records[i] for i in ok]
    if not recs:
        return dict.fromkeys((*CI_COLUMNS, "turns_to_success"))
    sc = dialogue_scores(recs, config)
    success = np.asarray([r.success for r in recs], dtype=np.float64)
    turns = np.asarray([r.termination.turn for r in recs], dtype=np.float64)
    cols = np.column_stack([sc.epmq, sc.groups, sc.indices, success])
    weights = cluster_bootstrap_weights(cluster_index([scenario_ids[i] for i in ok]), seed=seed)
    bounds = bootstrap_means(cols, weights)
    out: dict[str, tuple[float, float] | None] = {
        name: None if np.isnan(bounds[0, j]) else (float(bounds[0, j]), float(bounds[1, j]))
        for j, name in enumerate(CI_COLUMNS)
    }
    out["turns_to_success"] = bootstrap_ratio(turns * success, success, weights)
    return out


def _summaries(
    model: str,
    items: Sequence[LoadedRecord],
    trials: Sequence[int],
    labels: Mapping[str, dict[str, str]],
    config: EPMConfig,
) -> list[DialogueSummary]:
    """The dialogues of one leaderboard row, ``model`` being the row's label."""
    sc = dialogue_scores([x.record for x in items], config)
    out = []
    for i, (x, trial) in enumerate(zip(items, trials, strict=True)):
        rec = x.record
        ok = rec.termination.kind is not TerminationKind.ERROR
        out.append(
            DialogueSummary(
                key=f"{model}|{rec.scenario_id}|{trial}",
                model=model,
                scenario_id=rec.scenario_id,
                trial=trial,
                path=str(x.path),
                outcome=outcome_of(rec),
                termination=rec.termination.kind.value,
                reason=rec.termination.reason or "",
                turns=rec.total_turns,
                epmq=float(sc.epmq[i]) if ok else None,
                indices={
                    k: float(sc.indices[i, j]) if ok else None for j, k in enumerate(INDEX_NAMES)
                },
                final_norm=rec.trajectory[-1].p_norm,
                labels=dict(labels.get(rec.scenario_id) or labels_of(None)),
                trajectory=[tuple(p.P) for p in rec.trajectory],
            )
        )
    return out


def _breakdowns(
    dialogues: Sequence[DialogueSummary],
) -> dict[str, dict[str, dict[str, tuple[float, int]]]]:
    """grouping -> model -> label -> (mean EPM-Q, dialogues)."""
    acc: dict[str, dict[str, dict[str, list[float]]]] = {
        g: defaultdict(lambda: defaultdict(list)) for g in GROUPINGS
    }
    for d in dialogues:
        if d.epmq is None:
            continue
        for g in GROUPINGS:
            acc[g][d.model][d.labels.get(g, UNLABELLED)].append(d.epmq)
    return {
        g: {m: {lab: (float(np.mean(v)), len(v)) for lab, v in sorted(per.items())}
            for m, per in models.items()}
        for g, models in acc.items()
    }  # fmt: skip


def build_report_data(
    loaded: Sequence[LoadedRecord],
    labels: Mapping[str, dict[str, str]],
    config: EPMConfig,
    *,
    preset: str = "reference",
    seed: int = 0,
    label_by: LabelBy = "auto",
) -> ReportData:
    """Score every model as ``empathos score`` does and add intervals, breakdowns, dialogues.

    A model is the records of one leaderboard row, named as ``empathos score --label``
    names it (:func:`empathos.scoring.integrity.row_label`), so every scored dialogue reaches
    every part of the report whatever the labelling."""
    rows = leaderboard(loaded, config, label_by=label_by) if loaded else []
    by_model: dict[str, list[LoadedRecord]] = defaultdict(list)
    for x in loaded:
        by_model[row_label(x, label_by)].append(x)
    models: list[ModelSummary] = []
    dialogues: list[DialogueSummary] = []
    for row in rows:
        items = sorted(by_model[row.model], key=lambda x: (x.record.scenario_id, str(x.path)))
        trials = dialogue_trials(items)
        recs = [x.record for x in items]
        sids = [r.scenario_id for r in recs]
        models.append(
            ModelSummary(
                row=row,
                ci=_model_ci(recs, sids, config, seed),
                scenarios=len(set(sids)),
                trials=max(trials) + 1 if trials else 0,
                usage=usage_summary(recs),
            )
        )
        dialogues.extend(_summaries(row.model, items, trials, labels, config))
    return ReportData(
        preset=preset,
        models=models,
        dialogues=dialogues,
        breakdowns=_breakdowns(dialogues),
        scenario_ids=sorted({d.scenario_id for d in dialogues}),
        alpha=config.alpha,
    )
