"""Scenarios: the model (persona card + hidden story + labels), loaders for our format and the
published EMPA layout, the bundled set, and selection."""

from empathos.scenarios.loaders import (
    BUILTIN,
    DEFAULT_BUILTIN_IDS,
    LoadResult,
    builtin_path,
    load_builtin,
    load_scenarios,
    parse_scenario,
    select,
)
from empathos.scenarios.model import (
    SCHEMA_VERSION,
    Axis,
    DifficultyBand,
    Domain,
    PersonaCard,
    PriorityLevel,
    ResolvedLabels,
    Scenario,
    Story,
    StoryStage,
    Threshold,
    band_for_norm,
    p0_from_iedr,
)

__all__ = [
    "BUILTIN",
    "DEFAULT_BUILTIN_IDS",
    "SCHEMA_VERSION",
    "Axis",
    "DifficultyBand",
    "Domain",
    "LoadResult",
    "PersonaCard",
    "PriorityLevel",
    "ResolvedLabels",
    "Scenario",
    "Story",
    "StoryStage",
    "Threshold",
    "band_for_norm",
    "builtin_path",
    "load_builtin",
    "load_scenarios",
    "p0_from_iedr",
    "parse_scenario",
    "select",
]
