"""EQ-Bench 3 files of the user's copy (a clone of EQ-bench/eqbench3, or its ``data/`` folder):

- ``scenario_prompts.txt``: the scenarios (format in :mod:`empathos.bench.eqbench3`);
- ``scenario_master_prompt.txt``, ``scenario_master_prompt_message_drafting.txt``,
  ``scenario_master_prompt_analysis.txt``: the master prompts (``{scenario_prompt}``);
- ``debrief_prompt.txt``: the debrief asked after a role-play;
- ``rubric_scoring_prompt.txt`` / ``rubric_scoring_prompt_analysis.txt``: the judge's prompts
  (``{transcript}``, ``{debrief}``, ``{output_format}``);
- ``rubric_scoring_criteria.txt`` / ``rubric_scoring_criteria_analysis.txt``: one criterion a
  line, a line starting ``#`` skipped (for analysis tasks every listed criterion is scored;
  for role-plays and drafting tasks the benchmark's ten scored criteria, listed or not).

A missing or malformed file is one :class:`~empathos.errors.InputError` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from empathos.bench.eqbench3 import ROLEPLAY_ALLOWED, Scenario, TaskKind, parse_scenarios
from empathos.errors import InputError

__all__ = ["EQ3_FILES", "Eq3Data", "KindPrompts", "read_eqbench3"]

EQ3_FILES = (
    "scenario_prompts.txt",
    "scenario_master_prompt.txt",
    "scenario_master_prompt_message_drafting.txt",
    "scenario_master_prompt_analysis.txt",
    "debrief_prompt.txt",
    "rubric_scoring_prompt.txt",
    "rubric_scoring_prompt_analysis.txt",
    "rubric_scoring_criteria.txt",
    "rubric_scoring_criteria_analysis.txt",
)


@dataclass(frozen=True, slots=True)
class KindPrompts:
    """What one task kind uses: master prompt, judge prompt, criteria (all asked for) and
    the allowed ones (scored when the judge rates them)."""

    master: str
    judge: str
    criteria: tuple[str, ...]
    allowed: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Eq3Data:
    """The scenarios, the debrief prompt and each task kind's prompts of one copy."""

    scenarios: list[Scenario]
    debrief: str
    kinds: dict[TaskKind, KindPrompts]
    files: list[Path]


def _folder(data: Path) -> Path:
    for folder in (data / "data", data):
        if (folder / "scenario_prompts.txt").is_file():
            return folder
    raise InputError(
        "no scenario_prompts.txt here or in its data/ folder; pass a clone of "
        "EQ-bench/eqbench3 or its data folder",
        file=data,
        field="--data",
    )


def _read(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(
            "file not found (a file of the benchmark's data folder)", file=path
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({type(exc).__name__})", file=path) from None
    if not text.strip():
        raise InputError("empty", file=path)
    return text


def _slots(path: Path, text: str, *slots: str) -> str:
    for slot in slots:
        if "{" + slot + "}" not in text:
            raise InputError(f"has no {{{slot}}} slot", file=path)
    return text


def read_eqbench3(data: Path) -> Eq3Data:
    """Every file the rubric pass needs, checked."""
    folder = _folder(data)
    text = {name: _read(folder / name) for name in EQ3_FILES}
    try:
        scenarios = parse_scenarios(text["scenario_prompts.txt"])
    except InputError as exc:
        raise InputError(
            exc.problem, file=folder / "scenario_prompts.txt", field=exc.field
        ) from None

    def master(name: str) -> str:
        return _slots(folder / name, text[name], "scenario_prompt")

    def criteria(name: str) -> tuple[str, ...]:
        lines = (line.strip() for line in text[name].splitlines())
        return tuple(c for c in lines if c and not c.startswith("#"))

    roleplay_judge = _slots(
        folder / "rubric_scoring_prompt.txt",
        text["rubric_scoring_prompt.txt"],
        "transcript",
        "debrief",
        "output_format",
    )
    analysis_judge = _slots(
        folder / "rubric_scoring_prompt_analysis.txt",
        text["rubric_scoring_prompt_analysis.txt"],
        "transcript",
        "output_format",
    )
    rp = criteria("rubric_scoring_criteria.txt")
    rp_allowed = ROLEPLAY_ALLOWED  # the benchmark's ten, whether or not the file lists them
    an = criteria("rubric_scoring_criteria_analysis.txt")
    roleplay = KindPrompts(master("scenario_master_prompt.txt"), roleplay_judge, rp, rp_allowed)
    drafting = KindPrompts(
        master("scenario_master_prompt_message_drafting.txt"), roleplay_judge, rp, rp_allowed
    )
    analysis = KindPrompts(master("scenario_master_prompt_analysis.txt"), analysis_judge, an, an)
    kinds: dict[TaskKind, KindPrompts] = {
        "roleplay": roleplay,
        "drafting": drafting,
        "analysis": analysis,
    }
    return Eq3Data(scenarios, text["debrief_prompt.txt"], kinds, [folder / n for n in EQ3_FILES])
