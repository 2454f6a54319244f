"""Scenarios to verl's RL dataset format (``empathos verl prepare``); no verl import.

One row per scenario, in the parquet layout verl's ``RLHFDataset`` reads:

- ``prompt``: the chat verl's rollout starts from: the model under test's system prompt (in
  the scenario's language) and turn 1's user line, the persona's chat topic;
- ``data_source`` ``"empathos"``, ``ability`` ``"empathic_support"``, ``reward_model``
  ``{"style": "agent_loop", "ground_truth": ""}`` (the judge scores each turn in the loop);
- ``agent_name`` ``"empathos_dialogue"``: the agent loop verl runs for the row
  (:mod:`empathos.integrations.verl.agent_loop`);
- ``extra_info``: ``index``, ``split``, ``scenario_id`` (which the agent loop plays) and
  ``language``.

The split is by scenario (a scenario is in train or in validation, never both), seeded.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from empathos.errors import ConfigError, MissingExtraError
from empathos.integrations.verl.names import AGENT_NAME
from empathos.prompts import model_under_test_prompt
from empathos.rl import AdvantageConfig
from empathos.scenarios import Scenario

__all__ = [
    "AGENT_NAME",
    "PreparedSplit",
    "prepare_rows",
    "split_scenarios",
    "verl_overrides",
    "write_dataset",
]


@dataclass(frozen=True)
class PreparedSplit:
    """Where the files went and which scenarios each holds."""

    train: Path
    val: Path
    train_ids: list[str]
    val_ids: list[str]


def verl_overrides(split: PreparedSplit) -> list[str]:
    """The verl settings that go with the files: their absolute paths (every Ray node reads
    them as given), the estimator, and MAPO's gamma, explicitly: verl's ``AlgoConfig.gamma``
    defaults to 1.0, not MAPO's 0.85."""
    return [
        f"data.train_files={split.train.resolve()}",
        f"data.val_files={split.val.resolve()}",
        "algorithm.adv_estimator=mapo_dialogue",
        f"algorithm.gamma={AdvantageConfig().gamma}",
    ]


def split_scenarios(
    scenarios: Sequence[Scenario], val_fraction: float, seed: int
) -> tuple[list[Scenario], list[Scenario]]:
    """(train, validation), disjoint by scenario id; at least one of each when possible."""
    if not 0.0 <= val_fraction < 1.0:
        raise ConfigError(f"must be in [0, 1), got {val_fraction}", field="val_fraction")
    ordered = sorted(scenarios, key=lambda s: s.id)
    random.Random(seed).shuffle(ordered)
    n_val = round(len(ordered) * val_fraction)
    if val_fraction > 0 and n_val == 0 and len(ordered) > 1:
        n_val = 1
    return ordered[n_val:], ordered[:n_val]


def prepare_rows(
    scenarios: Sequence[Scenario], split: str, system_prompt: str = "default"
) -> list[dict[str, Any]]:
    """The dataset rows of ``scenarios`` (see the module docstring)."""
    rows: list[dict[str, Any]] = []
    for i, scenario in enumerate(scenarios):
        language = scenario.labels.language
        prompt = model_under_test_prompt(system_prompt, language)
        chat: list[dict[str, str]] = []
        if prompt is not None:
            chat.append({"role": "system", "content": prompt.text})
        chat.append({"role": "user", "content": scenario.persona.topic})
        rows.append(
            {
                "data_source": "empathos",
                "agent_name": AGENT_NAME,
                "prompt": chat,
                "ability": "empathic_support",
                "reward_model": {"style": "agent_loop", "ground_truth": ""},
                "extra_info": {
                    "index": i,
                    "split": split,
                    "scenario_id": scenario.id,
                    "language": language,
                },
            }
        )
    return rows


def write_dataset(
    scenarios: Sequence[Scenario],
    out: Path,
    *,
    val_fraction: float = 0.2,
    seed: int = 0,
    system_prompt: str = "default",
) -> PreparedSplit:
    """Write ``train.parquet`` and ``val.parquet`` under ``out``."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError(
            "writing parquet needs pyarrow, which verl's own environment holds: "
            "bash scripts/install-verl.sh, then .venv-verl/bin/empathos verl prepare ... "
            "(docs/verl.md; verl does not install into .venv)",
            field="pyarrow",
        ) from None
    if not scenarios:
        raise ConfigError("no scenario to prepare", field="scenarios")
    train, val = split_scenarios(scenarios, val_fraction, seed)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {out}: {exc.strerror}", field="out") from None
    paths = {"train": out / "train.parquet", "val": out / "val.parquet"}
    for name, part in (("train", train), ("val", val)):
        table = pa.Table.from_pylist(prepare_rows(part, name, system_prompt))
        pq.write_table(table, paths[name])
    return PreparedSplit(
        train=paths["train"],
        val=paths["val"],
        train_ids=[s.id for s in train],
        val_ids=[s.id for s in val],
    )
