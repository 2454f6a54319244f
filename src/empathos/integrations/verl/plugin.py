"""The verl plugin: what every verl process needs from empathos, loaded when it imports verl.

verl 0.9 loads the ``verl.plugins`` entry points of the installed packages on ``import verl``
(``VERL_USE_EXTERNAL_PLUGINS``, default ``auto``); empathos declares this module there
(``pyproject.toml``). Importing it registers ``mapo_dialogue``, ``mapo_turn_only`` and
``mapo_batch_only`` in verl's advantage-estimator registry (the trainer process looks them up)
and the ``empathos_dialogue`` agent loop (the agent loop workers instantiate it). Where entry
points are disabled, name this module in ``VERL_USE_EXTERNAL_MODULES`` instead.

verl swallows a plugin's import error (it logs it at debug level), so a failure to register
the agent loop is logged here as a warning, naming the cause; the estimators register first.
"""

from __future__ import annotations

import logging

from empathos.integrations.verl.estimator import DEFAULT_NAMES, register_estimators
from empathos.integrations.verl.prepare import AGENT_NAME

__all__ = ["AGENT_NAME", "DEFAULT_NAMES", "register_estimators"]

register_estimators()
try:
    import empathos.integrations.verl.agent_loop  # noqa: F401  (registers the agent loop)
except ImportError as exc:  # a missing piece of verl's rollout stack
    logging.getLogger(__name__).warning(
        "empathos: the agent loop %r is not registered: %s", AGENT_NAME, exc
    )
