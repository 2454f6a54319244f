"""Protocols other than our own that ``empathos run`` can drive (see ``docs/run.md``).

- :mod:`empathos.run.protocols.empa_release`: the published EMPA release's own agents, prompts
  and loop, from the user's installed copy of the package ``empa`` (its package side in
  :mod:`~empathos.run.protocols.release_package`, the bridge from its ``LLMClient`` to our
  model client in :mod:`~empathos.run.protocols.release_bridge`).
"""
