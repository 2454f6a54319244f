"""MAPO at cluster scale through verl 0.9 (the ``empathos[verl]`` extra, its own environment).

The parts (see docs/verl.md):

- :mod:`.plugin`: verl's plugin entry point; registers the estimators and the agent loop in
  every verl process, lazily (when verl imports its registries), importing nothing heavy;
- :mod:`.names`: the names verl knows us by;
- :mod:`.estimator`: ``mapo_dialogue`` (and the ablations) in verl's estimator registry, the
  numbers from :mod:`empathos.rl`;
- :mod:`.agent_loop`: the EMPA sandbox as verl's agent loop ``empathos_dialogue``;
- :mod:`.layout`: how a dialogue's per-turn rewards travel in verl's per-token tensors;
- :mod:`.settings`: the ``empathos:`` section of the trainer config (roles, sandbox);
- :mod:`.prepare`: scenarios to verl's parquet dataset (``empathos verl prepare``);
- :mod:`.checks`: verl settings MAPO's layout cannot work with, refused at start;
- :mod:`.version`: verl >= 0.9.1, or one line saying so.

Importing this package imports nothing of verl (``empathos verl prepare`` needs only
pyarrow); nothing else in empathos imports verl.
"""

__all__: list[str] = []
