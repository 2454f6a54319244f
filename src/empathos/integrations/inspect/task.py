"""The ``empa`` task: ``inspect eval empathos/empa --model M --model-role judge=J ...``.

Registered with Inspect through the package entry point (``[project.entry-points.inspect_ai]``
in pyproject.toml), so Inspect finds ``empathos/empa`` once empathos is installed with its
``inspect`` extra. See docs/inspect.md.
"""

from __future__ import annotations

from typing import Literal

from inspect_ai import Task, task
from pydantic import ValidationError

from empathos import __version__
from empathos.errors import EmpathosError
from empathos.integrations.inspect.dataset import EmpaSettings, scenario_dataset
from empathos.integrations.inspect.preflight import check_roles, in_eval, prerequisite
from empathos.integrations.inspect.scorer import epmq
from empathos.integrations.inspect.solver import empa_dialogue, needed_roles
from empathos.scenarios import Scenario

__all__ = ["FAIL_ON_ERROR", "empa"]

#: The task fails when this share of its samples or more end as errors; fewer are counted
#: and left out of the metrics (Inspect's ``--fail-on-error`` overrides it).
FAIL_ON_ERROR = 0.5


def _prepared(**params: object) -> tuple[EmpaSettings, list[Scenario]]:
    """The settings and the scenarios, checked; a bad parameter fails as one line (Inspect's
    own way of showing an unmet prerequisite, see :mod:`.preflight`), never mid-run."""
    try:
        settings = EmpaSettings.model_validate(params)
        chosen = settings.select()
        settings.check(chosen)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = str(first["loc"][0]) if first["loc"] else "-T"
        raise prerequisite(f"empathos/empa: -T {where}: {first['msg']}") from None
    except EmpathosError as exc:
        raise prerequisite(f"empathos/empa: {exc.line()}") from None
    return settings, chosen


@task
def empa(
    scenarios: str = "builtin",
    cases: str | list[str] | None = None,
    language: Literal["en", "zh"] | None = None,
    max_turns: int | None = None,
    min_turns: int | None = None,
    eval_every: int = 1,
    preset: Literal["reference", "paper"] = "reference",
    director: Literal["model", "rules"] = "model",
    system_prompt: str = "default",
    on_empty: Literal["reply", "error"] = "reply",
    roles: str | None = None,
) -> Task:
    """EMPA: the model under test supports a simulated person; a judge rates every turn and
    the EPM scores the trajectory (EPM-Q). One sample per scenario; epochs are trials.

    Args:
        scenarios: 'builtin', a scenario file, a folder of ours or the published layout.
        cases: Scenario ids (comma-separated), 'official' or 'all' (default: all).
        language: Keep only scenarios in this language ('en' or 'zh').
        max_turns: Turn cap (default: the preset's, 45).
        min_turns: No success or failure before this turn (default: the preset's, 12).
        eval_every: The judge rates every K turns.
        preset: EPM preset for dynamics, termination and scoring ('reference', 'paper').
        director: 'model' (the director role chooses by tool call) or 'rules'.
        system_prompt: The model under test's system prompt: 'default', 'none' or a file.
        on_empty: A reply without text: 'reply' (rated as empty) or 'error'.
        roles: One model for every sandbox role not bound with --model-role.
    """
    settings, chosen = _prepared(
        scenarios=scenarios,
        cases=cases,
        language=language,
        max_turns=max_turns,
        min_turns=min_turns,
        eval_every=eval_every,
        preset=preset,
        director=director,
        system_prompt=system_prompt,
        on_empty=on_empty,
    )
    if in_eval():  # `inspect eval`: the roles are known now; stop before any sample
        check_roles(needed_roles(director), roles)
    return Task(
        dataset=scenario_dataset(chosen),
        solver=empa_dialogue(settings),
        scorer=epmq(preset=settings.preset),
        model_roles={role: roles for role in needed_roles(director)} if roles else None,
        fail_on_error=FAIL_ON_ERROR,
        version=1,
        metadata={"empathos_version": __version__, "sandbox": settings.sandbox().model_dump()},
    )
