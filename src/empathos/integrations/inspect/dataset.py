"""The ``empa`` task's parameters and its dataset: one Inspect sample per scenario.

The scenarios are chosen as ``empathos run`` chooses them (the bundled set, a scenario file
or folder of ours, or the published EMPA layout; ``cases`` and ``language``), through
:func:`empathos.run.session.select_scenarios`. A sample's id is the scenario's id, its input
the person's opening line, its metadata the scenario's labels.
"""

from __future__ import annotations

from typing import Any, Literal

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import BaseModel, ConfigDict, Field

from empathos.epm import EPMConfig, PresetName
from empathos.prompts import model_under_test_prompt
from empathos.run.config import RunConfig
from empathos.run.session import sandbox_config, select_scenarios
from empathos.sandbox import DirectorMode, SandboxConfig
from empathos.scenarios import BUILTIN, Scenario

__all__ = ["EmpaSettings", "scenario_dataset", "scenario_sample"]


class EmpaSettings(BaseModel):
    """The task parameters (``-T name=value``) that choose the scenarios and shape each
    dialogue. Frozen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenarios: str = Field(
        BUILTIN,
        description="Scenario source: 'builtin', a scenario file, a folder of ours, or the "
        "folder of the published EMPA layout.",
    )
    cases: list[str] | str | None = Field(
        None,
        description="Scenario ids (a list, or comma-separated), 'official' (the published "
        "30-case list) or 'all'; None: all. Checked as empathos run checks --cases.",
    )
    language: Literal["en", "zh"] | None = Field(
        None, description="Keep only scenarios in this language."
    )
    max_turns: int | None = Field(
        None, ge=1, le=1000, description="Turn cap; None: the preset's (45)."
    )
    min_turns: int | None = Field(
        None, ge=0, description="No success or failure before this turn; None: the preset's "
        "(12), capped at max_turns.",
    )  # fmt: skip
    eval_every: int = Field(1, ge=1, le=100, description="K: the judge rates every K turns.")
    preset: PresetName = Field("reference", description="EPM preset: reference or paper.")
    director: DirectorMode = Field(
        "model", description="'model': the director role's model chooses; 'rules': rule-based."
    )
    system_prompt: str = Field(
        "default",
        description="System prompt of the model under test: 'default', 'none' or a text file.",
    )
    on_empty: Literal["reply", "error"] = Field(
        "reply",
        description="A reply without text: an empty reply the judge rates ('reply') or an "
        "error ('error').",
    )

    def run_config(self) -> RunConfig:
        """The same settings as ``empathos run``'s config (``min_turns`` capped at
        ``max_turns``), so that scenarios are chosen, and dialogues set up, as it does."""
        min_turns = self.min_turns
        if min_turns is None and self.max_turns is not None:
            min_turns = min(EPMConfig.preset(self.preset).min_turns, self.max_turns)
        return RunConfig(
            scenarios=self.scenarios,
            cases=self.cases or "all",
            language=self.language,
            max_turns=self.max_turns,
            min_turns=min_turns,
            eval_every=self.eval_every,
            epm_preset=self.preset,
            director_mode=self.director,
            system_prompt=self.system_prompt,
            on_empty=self.on_empty,
        )

    def select(self) -> list[Scenario]:
        """The scenarios, chosen as ``empathos run`` chooses them (invalid ones left out)."""
        return select_scenarios(self.run_config())[0]

    def sandbox(self) -> SandboxConfig:
        """The sandbox settings of every dialogue, as ``empathos run`` makes them."""
        return sandbox_config(self.run_config())

    def check(self, scenarios: list[Scenario]) -> None:
        """Fail now (ConfigError) on what would fail every dialogue: turn settings the EPM
        refuses, an unreadable system-prompt file."""
        self.sandbox().epm()
        for language in sorted({self.language or s.labels.language for s in scenarios}):
            model_under_test_prompt(self.system_prompt, language)


def scenario_sample(scenario: Scenario) -> Sample:
    """The sample of one scenario: its id, the opening line, its labels as metadata."""
    labels: dict[str, Any] = scenario.resolved_labels().model_dump(mode="json")
    return Sample(
        id=scenario.id,
        input=scenario.persona.topic,
        metadata={**labels, "scenario_hash": scenario.scenario_hash()},
    )


def scenario_dataset(scenarios: list[Scenario]) -> MemoryDataset:
    """The dataset: one sample per scenario, in selection order."""
    return MemoryDataset([scenario_sample(s) for s in scenarios], name="empa")
