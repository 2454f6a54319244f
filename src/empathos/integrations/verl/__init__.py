"""MAPO at cluster scale through verl (the ``empathos[verl]`` extra, its own environment).

Importing this package registers ``mapo_dialogue``, ``mapo_turn_only`` and
``mapo_batch_only`` in verl's advantage-estimator registry and installs the per-turn reward
hook (:mod:`.hook`). The parts:

- :mod:`.estimator`: the estimators in verl's registry (numbers from :mod:`empathos.rl`);
- :mod:`.interaction`: the EMPA sandbox as a verl ``BaseInteraction``;
- :mod:`.hook`: turn scores onto the last token of each turn before the estimator runs;
- :mod:`.dataset`: the dataset class whose import brings all this into verl's trainer;
- :mod:`.prepare`: scenarios to verl's parquet dataset (``empathos verl prepare``);
- :mod:`.reward_fn`: the per-sample score verl's reward loop logs.

Nothing else in empathos imports verl. See docs/verl.md.
"""

from empathos.integrations.verl import hook
from empathos.integrations.verl.estimator import DEFAULT_NAMES, register_estimators

__all__ = ["DEFAULT_NAMES", "register_estimators"]

register_estimators()
hook.install(DEFAULT_NAMES.values())
