"""empathos-empa: EMPA, the empathy benchmark, as a verifiers environment.

``vf-eval empathos-empa`` imports this module and takes its taskset, environment and harness
from ``__all__`` (verifiers' plugin contract); the code lives in
``empathos.integrations.verifiers`` (docs/verifiers.md).
"""

from empathos.integrations.verifiers import EmpaChatHarness, EmpaEnv, EmpaTaskset

__all__ = ["EmpaChatHarness", "EmpaEnv", "EmpaTaskset"]
