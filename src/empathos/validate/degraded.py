"""``compare --pairwise --degraded-check``: a judge that cannot tell a dialogue from its
degraded copy is not worth its ratings (docs/pairwise.md, docs/validate.md).

Each dialogue gets a degraded copy, ``<model> (degraded)``: every reply of the model is
replaced, as ``empathos validate``'s sycophancy perturbation replaces one, by a performative
reply of the ``affect`` kind (``validate.perturb.sycophantic_reply``; Chinese templates
when the dialogue is written in Chinese, else English), keyed by scenario, trial and
message, so the same dialogue always degrades alike. Only original-against-copy pairs are
judged, each in both orders. The check reports the share of pairs the copy lost (both
orders against it), its 95% bootstrap interval over scenarios, the flip rate of these pairs,
and passes when the share reaches the threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from empathos.pairwise import Item, Judgement, PairKey, TranscriptMessage, combine
from empathos.validate.perturb import SycophancyKind, sycophantic_reply

__all__ = ["DEGRADED", "check_result", "degrade", "degraded_items", "is_check_pair"]

DEGRADED = " (degraded)"
KIND: SycophancyKind = "affect"


def _language(item: Item) -> str:
    text = "".join(m.content for m in item.transcript)
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"


def degrade(item: Item) -> Item:
    """The degraded copy of ``item`` (see the module docstring)."""
    lang = _language(item)
    messages = tuple(
        m
        if m.role != "assistant"
        else TranscriptMessage(
            role="assistant",
            content=sycophantic_reply(KIND, lang, f"{item.scenario_id}/{item.trial}/{n}"),
        )
        for n, m in enumerate(item.transcript)
    )
    return item.model_copy(update={"model": item.model + DEGRADED, "transcript": messages})


def degraded_items(items: Sequence[Item]) -> list[Item]:
    """The items and their degraded copies."""
    return [*items, *(degrade(i) for i in items if not i.model.endswith(DEGRADED))]


def is_check_pair(key: PairKey) -> bool:
    """An original and its own copy (a pair's models are sorted: the copy comes second)."""
    return key[3] == key[2] + DEGRADED


def check_result(
    judgements: Sequence[Judgement],
    judge: str,
    aspect: str,
    threshold: float,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """The check's numbers from ``judge``'s verdicts on ``aspect``."""
    verdicts = [v for j in judgements if j.judge == judge and (v := j.verdict(aspect))]
    outcomes = [o for o in combine(verdicts) if o.b == o.a + DEGRADED]
    if not outcomes:
        return {"pairs": 0, "degraded_lost": None, "interval": None, "flip_rate": None,
                "threshold": threshold, "passed": False}  # fmt: skip
    scenarios = sorted({o.scenario_id for o in outcomes})
    lost = {s: [float(o.score == 1.0) for o in outcomes if o.scenario_id == s] for s in scenarios}
    rng = np.random.default_rng(seed)
    shares = []
    for _ in range(n_boot):
        drawn = [
            x for k in rng.integers(0, len(scenarios), len(scenarios)) for x in lost[scenarios[k]]
        ]
        shares.append(sum(drawn) / len(drawn))
    lo, hi = np.percentile(shares, [2.5, 97.5])
    share = sum(o.score == 1.0 for o in outcomes) / len(outcomes)
    return {
        "pairs": len(outcomes),
        "degraded_lost": share,
        "interval": [float(lo), float(hi)],
        "flip_rate": sum(o.flipped for o in outcomes) / len(outcomes),
        "threshold": threshold,
        "passed": share >= threshold,
    }
