"""MAPO at cluster scale through verl 0.9 (the ``empathos[verl]`` extra, its own environment).

The parts (see docs/verl.md):

- :mod:`.plugin`: verl's plugin entry point; registers the estimators and the agent loop in
  every verl process;
- :mod:`.estimator`: ``mapo_dialogue`` (and the ablations) in verl's estimator registry, the
  numbers from :mod:`empathos.rl`;
- :mod:`.agent_loop`: the EMPA sandbox as verl's agent loop ``empathos_dialogue``;
- :mod:`.layout`: how a dialogue's per-turn rewards travel in verl's per-token tensors;
- :mod:`.settings`: the ``empathos:`` section of the trainer config (roles, sandbox);
- :mod:`.prepare`: scenarios to verl's parquet dataset (``empathos verl prepare``).

Importing this package imports nothing of verl (``empathos verl prepare`` needs only
pyarrow); nothing else in empathos imports verl.
"""

__all__: list[str] = []
