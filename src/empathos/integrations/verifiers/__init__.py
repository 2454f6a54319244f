"""EMPA as a verifiers v1 environment (docs/verifiers.md).

``vf-eval empathos-empa`` loads the environment package ``empathos_empa``
(``environments/empathos_empa``), which exports the three plugins of this sub-package:
:class:`EmpaTaskset` (the scenarios), :class:`EmpaEnv` (one dialogue per episode) and
:class:`EmpaChatHarness` (the assistant's chat harness). :mod:`.turns` reads a run's traces
back (no verifiers import).
"""

from __future__ import annotations

from empathos.integrations.verifiers.env import (
    EmpaEnv,
    EmpaEnvConfig,
    EmpaTask,
    EmpaTaskData,
    EmpaTaskset,
    EmpaTasksetConfig,
)
from empathos.integrations.verifiers.harness import EmpaChatHarness
from empathos.integrations.verifiers.turns import INFO_KEY, read_traces, trace_records

__all__ = [
    "INFO_KEY",
    "EmpaChatHarness",
    "EmpaEnv",
    "EmpaEnvConfig",
    "EmpaTask",
    "EmpaTaskData",
    "EmpaTaskset",
    "EmpaTasksetConfig",
    "read_traces",
    "trace_records",
]
