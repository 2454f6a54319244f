"""verl's per-sample score for empathos rollouts (``reward.custom_reward_function``).

The reward that trains the policy is per turn (the interaction's turn scores, moved onto each
turn's last token by :mod:`~empathos.integrations.verl.hook`); verl's reward loop still
asks every sample for one score, which it logs. This returns the sum of the finite turn
scores (the dialogue's total distance decrease), so verl's ``score`` metric means something.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["compute_score"]


def compute_score(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None, **_: Any
) -> float:
    """Sum of the sample's finite turn scores (0.0 when there are none)."""
    info = extra_info if isinstance(extra_info, dict) else {}
    scores = info.get("turn_scores") or []
    return float(sum(float(s) for s in scores if s is not None and math.isfinite(float(s))))
