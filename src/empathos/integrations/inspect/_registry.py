"""The module Inspect's entry point loads (``[project.entry-points.inspect_ai]``): importing
it registers the ``empa`` task and the ``epmq`` scorer as ``empathos/empa`` and
``empathos/epmq``."""

from empathos.integrations.inspect.scorer import epmq
from empathos.integrations.inspect.task import empa

__all__ = ["empa", "epmq"]
