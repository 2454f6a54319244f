"""MAPO (arXiv 2603.06194) and its baselines: rewards, returns, advantages, loss, simulation.

The estimator core (:mod:`empathos.rl.advantages`, :mod:`empathos.rl.returns`,
:mod:`empathos.rl.tokens`, :mod:`empathos.rl.rewards`) is pure and imports nothing of the rest
of empathos except its error types. The simulated environment (:mod:`empathos.rl.sim`) is a
*simulation* for studying credit assignment, not a model of real users.
"""

from empathos.rl.advantages import (
    compute_advantages,
    estimator_names,
    get_estimator,
    register_estimator,
)
from empathos.rl.batch import AdvantageConfig, AdvantageResult, TurnBatch
from empathos.rl.returns import discounted_returns
from empathos.rl.tokens import broadcast_from_response_mask, broadcast_from_spans

__all__ = [
    "AdvantageConfig",
    "AdvantageResult",
    "TurnBatch",
    "broadcast_from_response_mask",
    "broadcast_from_spans",
    "compute_advantages",
    "discounted_returns",
    "estimator_names",
    "get_estimator",
    "register_estimator",
]
