"""Per-dialogue scores: the nine indices, the three group scores and EPM-Q of each dialogue.

The leaderboard's model-level numbers are means of these (EPM-Q is linear in the index
means), so a bootstrap over dialogues or a paired comparison can work on them directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from empathos.epm import GROUPS, INDEX_NAMES, EPMConfig, TerminationKind, dialogue_indices
from empathos.records import DialogueRecord
from empathos.scoring.leaderboard import records_to_batch

__all__ = ["GROUP_NAMES", "DialogueScores", "dialogue_scores"]

F64 = npt.NDArray[np.float64]

#: The three groups in the order of :attr:`DialogueScores.groups`' columns.
GROUP_NAMES: tuple[str, ...] = tuple(GROUPS)


@dataclass(frozen=True, slots=True)
class DialogueScores:
    """Scores of N dialogues: ``indices`` (N, 9) in INDEX_NAMES order, ``groups`` (N, 3) in
    GROUP_NAMES order, ``epmq`` (N,). Rows of error dialogues are NaN."""

    indices: F64
    groups: F64
    epmq: F64


def dialogue_scores(records: Sequence[DialogueRecord], config: EPMConfig) -> DialogueScores:
    """Score each record on its own (errors get NaN rows; they are not scored)."""
    n = len(records)
    indices = np.full((n, len(INDEX_NAMES)), np.nan)
    ok = [i for i, r in enumerate(records) if r.termination.kind is not TerminationKind.ERROR]
    if ok:
        indices[ok] = dialogue_indices(records_to_batch([records[i] for i in ok]), config)
    pos = {name: i for i, name in enumerate(INDEX_NAMES)}
    groups = (
        np.stack(
            [indices[:, [pos[x] for x in GROUPS[g]]].mean(axis=1) for g in GROUP_NAMES], axis=1
        )
        if n
        else np.zeros((0, len(GROUP_NAMES)))
    )
    epmq = groups @ np.asarray(config.weights, dtype=np.float64) if n else np.zeros(0)
    return DialogueScores(indices=indices, groups=groups, epmq=epmq)
