"""An exact test bench for length bias: the policy decides how long the dialogue lasts.

The decision (one logit theta, p = sigmoid(theta) = P(stop)): at turn 0 the policy either
**stops** (the dialogue ends after this turn; its reward is the whole return Z) or
**continues** (one more turn follows; the return Z is split between now and later: turn 0
pays (1 - s) * Z, turn 1 pays (s * Z + extra) / gamma, so its discounted return is Z + extra).
Z is drawn from the same finite distribution for both choices, so with ``extra = 0`` both
choices have the same distribution of discounted return and the true policy gradient on theta
is exactly 0. ``fixed_length`` gives the stopping dialogue a second turn too (reward 0), so the
same reward split can be studied with the length held fixed: what remains at a fixed length is
a preference for earlier over later reward, what changes with the length is the length bias.

For a group of G rollouts of one scenario (the batch is that group) every combination of
actions and outcomes is enumerated, each estimator computes its advantages on it, and the
update on theta, mean over rollouts of A[b, 0] * d log pi(a_b) / d theta ((1 - p) for stop,
-p for continue), is averaged with the combination's probability: the estimator's *exact*
expected update. Only turn 0 carries the decision, so later turns add nothing to it.
Pure: no I/O. The closed forms it is checked against are derived in docs/rl.md.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from empathos.rl.advantages import Estimator
from empathos.rl.batch import AdvantageConfig, TurnBatch

__all__ = ["LengthChoice", "expected_update", "true_gradient"]

STOP, CONTINUE = 0, 1


@dataclass(frozen=True)
class LengthChoice:
    """The decision problem (module docstring): outcomes z of Z with probabilities, the share
    ``later`` (s) of the return that continuing pays one turn later, the discount, an
    ``extra`` return for continuing (0: both choices are worth the same) and whether the
    stopping dialogue is padded to the same length (a second turn with reward 0)."""

    outcomes: tuple[float, ...]
    probs: tuple[float, ...]
    later: float
    gamma: float
    extra: float = 0.0
    fixed_length: bool = False

    def turns(self, action: int, z: float) -> tuple[list[float], list[bool]]:
        """Turn rewards (2,) and the turn mask (2,) of one rollout (NaN where no turn)."""
        if action == CONTINUE:
            now = (1.0 - self.later) * z
            return [now, (self.later * z + self.extra) / self.gamma], [True, True]
        if self.fixed_length:
            return [z, 0.0], [True, True]
        return [z, float("nan")], [True, False]


def true_gradient(choice: LengthChoice, p: float) -> float:
    """d E[discounted return] / d theta = p (1 - p) (E[G | stop] - E[G | continue])."""
    return p * (1.0 - p) * (-choice.extra)


def _combinations(
    choice: LengthChoice, g: int, p: float
) -> tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.int64], NDArray[np.float64]]:
    """Every (action, outcome) combination of G rollouts: rewards (M, G, 2), turn masks
    (M, G, 2), actions (M, G) and probabilities (M,)."""
    options = [(a, k) for a in (STOP, CONTINUE) for k in range(len(choice.outcomes))]
    rewards, masks, actions, weights = [], [], [], []
    for combo in itertools.product(options, repeat=g):
        w = 1.0
        rows, row_masks = [], []
        for a, k in combo:
            w *= (p if a == STOP else 1.0 - p) * choice.probs[k]
            r, m = choice.turns(a, choice.outcomes[k])
            rows.append(r)
            row_masks.append(m)
        rewards.append(rows)
        masks.append(row_masks)
        actions.append([a for a, _ in combo])
        weights.append(w)
    return (
        np.asarray(rewards, dtype=np.float64),
        np.asarray(masks, dtype=bool),
        np.asarray(actions, dtype=np.int64),
        np.asarray(weights, dtype=np.float64),
    )


def expected_update(
    estimator: Estimator, g: int, p: float, choice: LengthChoice, cfg: AdvantageConfig
) -> float:
    """The exact expected update on theta of ``estimator`` for a group of ``g`` rollouts with
    P(stop) = ``p`` (``cfg.gamma`` should be ``choice.gamma``). (2K)^g combinations for K
    outcomes: keep g and K small."""
    rewards, masks, actions, weights = _combinations(choice, g, p)
    score = np.where(actions == STOP, 1.0 - p, -p)  # d log pi(a) / d theta
    uid = np.zeros(g, dtype=np.int64)
    total = 0.0
    for i in range(len(weights)):
        batch = TurnBatch(rewards[i], masks[i], masks[i], uid)
        adv = np.asarray(estimator(batch, cfg).advantages, dtype=np.float64)
        total += weights[i] * float(np.mean(adv[:, 0] * score[i]))
    return total
