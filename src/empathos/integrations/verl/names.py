"""The names verl knows empathos by (no import of anything: the plugin reads them in every
verl process)."""

from __future__ import annotations

__all__ = ["AGENT_NAME", "AGENT_TARGET"]

AGENT_NAME = "empathos_dialogue"
"""The agent loop's name in verl's registry (the rows' ``agent_name``)."""
AGENT_TARGET = "empathos.integrations.verl.agent_loop.EmpathyAgentLoop"
"""Its import path, as verl's ``register`` writes it (``hydra.utils.instantiate`` imports it)."""
