"""The ``empathos`` command: one module per sub-command group, mounted by :mod:`.main`."""
