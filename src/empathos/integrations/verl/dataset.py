"""verl's RL dataset, named so that verl imports empathos in its trainer process.

Point ``data.custom_cls.path`` at ``pkg://empathos.integrations.verl.dataset`` and
``data.custom_cls.name`` at ``EmpathyDataset``: loading it imports
:mod:`empathos.integrations.verl`, which registers the estimators and the per-turn reward
hook where verl computes advantages. The rows are those of ``empathos verl prepare``.
"""

from __future__ import annotations

from verl.utils.dataset.rl_dataset import RLHFDataset

import empathos.integrations.verl  # noqa: F401  (registers the estimators and the hook)

__all__ = ["EmpathyDataset"]


class EmpathyDataset(RLHFDataset):  # type: ignore[misc]  # verl is untyped
    """verl's ``RLHFDataset`` unchanged; see the module docstring."""
