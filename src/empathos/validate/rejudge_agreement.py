"""How a re-judging agrees with the run's original judge (``empathos rejudge``'s closing
numbers; docs/run.md): the same dialogues rated by both, compared per MDEP indicator, on
the sign of delta_E, on the dialogues' EPM-Q and on their termination.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from empathos.epm import EPMConfig, TerminationKind
from empathos.records import DialogueRecord
from empathos.rubric import EMPATHY_RUBRIC
from empathos.scoring.dialogues import dialogue_scores
from empathos.validate.stats import sign_agreement, spearman, weighted_kappa

__all__ = ["agreement"]


def _levels(rec: DialogueRecord) -> dict[int, dict[str, int]]:
    """Complete, scored MDEP ratings by evaluation turn."""
    keys = {ind.key for ind in rec.rubric.mdep}
    out = {}
    for ev in rec.evaluations:
        levels = {k: r.level for k, r in ev.ratings.items() if r.level is not None}
        if ev.scored and set(levels) == keys:
            out[ev.turn] = levels
    return out


def agreement(pairs: Sequence[tuple[DialogueRecord, DialogueRecord]]) -> dict[str, Any]:
    """How the new judge agrees with the original over the same dialogues (original, new):
    quadratic-weighted kappa per MDEP indicator and the share of equal levels over the
    evaluations both rated, the share with the same sign of delta_E, the Spearman correlation
    of the dialogues' EPM-Q and the share with the same termination."""
    keys = [ind.key for ind in EMPATHY_RUBRIC.mdep]
    a: dict[str, list[int]] = {k: [] for k in keys}
    b: dict[str, list[int]] = {k: [] for k in keys}
    de_a: list[float] = []
    de_b: list[float] = []
    for old, new in pairs:
        la, lb = _levels(old), _levels(new)
        dea = {e.turn: e.state.delta_E for e in old.evaluations}
        deb = {e.turn: e.state.delta_E for e in new.evaluations}
        for turn in sorted(la.keys() & lb.keys()):
            for k in keys:
                a[k].append(la[turn][k])
                b[k].append(lb[turn][k])
            x, y = dea.get(turn), deb.get(turn)
            if x is not None and y is not None:
                de_a.append(x)
                de_b.append(y)
    scored = [(o, n) for o, n in pairs if TerminationKind.ERROR not in (
        o.termination.kind, n.termination.kind)]  # fmt: skip
    cfg = EPMConfig()
    q_a = dialogue_scores([o for o, _ in scored], cfg).epmq.tolist() if scored else []
    q_b = dialogue_scores([n for _, n in scored], cfg).epmq.tolist() if scored else []
    n_ratings = sum(len(v) for v in a.values())
    same = sum(x == y for k in keys for x, y in zip(a[k], b[k], strict=True))
    levels = {k: sorted(EMPATHY_RUBRIC.indicator(k).levels) for k in keys}
    return {
        "dialogues": len(pairs),
        "evaluations": len(a[keys[0]]),
        "kappa": {k: weighted_kappa(a[k], b[k], levels[k], "quadratic") for k in keys},
        "same_level": same / n_ratings if n_ratings else math.nan,
        "delta_e_sign": sign_agreement(de_a, de_b),
        "epmq_spearman": spearman(q_a, q_b),
        "same_termination": sum(
            (o.termination.kind, o.termination.turn) == (n.termination.kind, n.termination.turn)
            for o, n in pairs
        ),
    }
