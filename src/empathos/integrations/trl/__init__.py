"""MAPO for TRL users (the ``empathos[trl]`` extra, TRL 1.16). See docs/trl.md.

- :func:`empa_rollout_func` (:mod:`.rollout`): TRL's ``rollout_func``, one whole EMPA dialogue
  per completion, the policy's turns from the trainer's vLLM engine or model
  (:mod:`.samplers`), the token layout of :mod:`.tokens`;
- :class:`MAPOTrainer` (:mod:`.trainer`): ``GRPOTrainer`` with per-token advantages from any
  estimator of :mod:`empathos.rl` (:mod:`.placement`), MAPO by default;
- :func:`empa_reward`, :func:`empa_outcome_reward` (:mod:`.reward`): rewards for plain GRPO.

Only :mod:`.trainer` imports TRL; nothing else in empathos imports this package.
"""

from empathos.integrations.trl.reward import empa_outcome_reward, empa_reward
from empathos.integrations.trl.rollout import EmpaRollout, empa_rollout_func, scenario_rows

try:
    from empathos.integrations.trl.trainer import MAPOTrainer
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
    if exc.name != "trl":
        raise
    raise ModuleNotFoundError(
        "empathos.integrations.trl needs TRL: pip install 'empathos[trl]'", name="trl"
    ) from None

__all__ = [
    "EmpaRollout",
    "MAPOTrainer",
    "empa_outcome_reward",
    "empa_reward",
    "empa_rollout_func",
    "scenario_rows",
]
