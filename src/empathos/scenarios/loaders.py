"""Load scenarios from a file or directory, in our format or in the published EMPA layout.

``load_scenarios`` detects the layout, reads everything it can and collects every problem
as a :class:`~empathos.errors.ScenarioError` (file, field, problem) instead of stopping at the
first bad file. ``select`` picks scenarios by id, by the published ``official`` list, by
language, and caps the count.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from empathos.errors import ScenarioError
from empathos.scenarios.model import Scenario
from empathos.scenarios.published import is_published_layout, load_published
from empathos.scenarios.validation import errors_from_validation

__all__ = [
    "BUILTIN",
    "DEFAULT_BUILTIN_IDS",
    "LoadResult",
    "builtin_path",
    "load_builtin",
    "load_scenarios",
    "parse_scenario",
    "select",
]

BUILTIN = "builtin"
# The pair the main job runs by default: short, English, medium difficulty, different axes.
DEFAULT_BUILTIN_IDS: tuple[str, ...] = ("en-01-sourdough", "en-02-night-shift")
_OWN_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")


@dataclass(frozen=True)
class LoadResult:
    """What a load produced: the valid scenarios and every problem found on the way."""

    scenarios: list[Scenario] = field(default_factory=list)
    errors: list[ScenarioError] = field(default_factory=list)
    warnings: list[ScenarioError] = field(default_factory=list)
    """Problems that did not stop a scenario (a missing optional field took its default)."""

    @property
    def ok(self) -> bool:
        """True when no error was found."""
        return not self.errors

    def select(
        self,
        ids: Iterable[str] | Literal["official"] | None = None,
        *,
        limit: int | None = None,
        language: str | None = None,
    ) -> list[Scenario]:
        """:func:`select` over the valid scenarios; an unknown id that may be one of the
        invalid scenarios is reported with the first of them (a named case that was refused,
        e.g. for a degenerate P_0, says why)."""
        try:
            return select(self.scenarios, ids, limit=limit, language=language)
        except ScenarioError as exc:
            if not self.errors:
                raise
            raise ScenarioError(
                f"{exc.problem}; {len(self.errors)} invalid scenario(s) were left out, the "
                f"first: {self.errors[0].line()}",
                field=exc.field,
            ) from None


def builtin_path() -> Path:
    """The directory of the scenarios shipped with the package."""
    return Path(str(resources.files("empathos.scenarios") / "data"))


def load_builtin() -> LoadResult:
    """The bundled scenarios (English and Chinese)."""
    return load_scenarios(builtin_path(), kind="builtin")


def parse_scenario(
    data: Any, file: str | Path, *, line: int | None = None, kind: Literal["own", "builtin"] = "own"
) -> Scenario:
    """Validate one scenario mapping; raise the first ScenarioError (see ``_validate`` for all)."""
    scenario, errors = _validate(data, Path(file), line, kind)
    if scenario is None:
        raise errors[0]
    return scenario


def _validate(
    data: Any, file: Path, line: int | None, kind: Literal["own", "builtin"]
) -> tuple[Scenario | None, list[ScenarioError]]:
    where = f"{file}:{line}" if line is not None else str(file)
    if not isinstance(data, dict):
        return None, [ScenarioError(f"expected a mapping, got {type(data).__name__}", file=where)]
    source = dict(data.get("source") or {}) if isinstance(data.get("source"), dict) else {}
    source.update(kind=kind, path=str(file), line=line)
    try:
        return Scenario.model_validate({**data, "source": source}), []
    except ValidationError as exc:
        return None, errors_from_validation(exc, where)


def _load_file(path: Path, kind: Literal["own", "builtin"]) -> LoadResult:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return LoadResult(errors=[ScenarioError(f"unreadable: {exc}", file=path)])
    items: list[tuple[Any, int | None]] = []
    errors: list[ScenarioError] = []
    try:
        if path.suffix == ".jsonl":
            for number, raw in enumerate(text.splitlines(), start=1):
                if raw.strip():
                    try:
                        items.append((json.loads(raw), number))
                    except json.JSONDecodeError as exc:
                        errors.append(
                            ScenarioError(f"invalid JSON: {exc.msg}", file=f"{path}:{number}")
                        )
        elif path.suffix == ".json":
            items.append((json.loads(text), None))
        else:
            items.append((yaml.safe_load(text), None))
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        problem = str(exc).replace("\n", " ")
        return LoadResult(errors=[ScenarioError(f"cannot parse: {problem}", file=path)])
    scenarios: list[Scenario] = []
    for data, line in items:
        scenario, errs = _validate(data, path, line, kind)
        errors.extend(errs)
        if scenario is not None:
            scenarios.append(scenario)
    return LoadResult(scenarios, errors)


def load_scenarios(path: str | Path, *, kind: Literal["own", "builtin"] = "own") -> LoadResult:
    """Every scenario under ``path`` (a file, a directory of ours, or a published layout).

    ``path`` may also be ``"builtin"`` for the bundled set. Never raises for bad content: each
    problem is returned in ``errors`` and the rest is still read.
    """
    if str(path) == BUILTIN:
        return load_builtin()
    root = Path(path)
    if not root.exists():
        return LoadResult(errors=[ScenarioError("no such file or directory", file=root)])
    if is_published_layout(root):
        warnings: list[ScenarioError] = []
        scenarios, errors = load_published(root, warnings)
        return LoadResult(scenarios, errors, warnings)
    if root.is_file():
        if root.suffix == ".md":
            return LoadResult(
                errors=[
                    ScenarioError(
                        "a lone persona card has no story; "
                        "pass the directory of the published layout",
                        file=root,
                    )
                ]
            )
        if root.suffix not in _OWN_SUFFIXES:
            return LoadResult(
                errors=[
                    ScenarioError(
                        f"unknown scenario file type {root.suffix!r} (use .yaml, .json or .jsonl)",
                        file=root,
                    )
                ]
            )
        result = _load_file(root, kind)
    else:
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in _OWN_SUFFIXES)
        found: list[Scenario] = []
        problems: list[ScenarioError] = []
        for file in files:
            part = _load_file(file, kind)
            found.extend(part.scenarios)
            problems.extend(part.errors)
        if not files:
            problems.append(
                ScenarioError("no scenario files (.yaml, .json, .jsonl) found", file=root)
            )
        result = LoadResult(found, problems)
    return _drop_duplicates(result)


def _drop_duplicates(result: LoadResult) -> LoadResult:
    seen: dict[str, Scenario] = {}
    errors = list(result.errors)
    for scenario in result.scenarios:
        if scenario.id in seen:
            first = seen[scenario.id].source.path
            errors.append(
                ScenarioError(
                    f"duplicate id (first in {first})", file=scenario.source.path, field="id"
                )
            )
            continue
        seen[scenario.id] = scenario
    return LoadResult(list(seen.values()), errors)


def select(
    scenarios: Sequence[Scenario],
    ids: Iterable[str] | Literal["official"] | None = None,
    *,
    limit: int | None = None,
    language: str | None = None,
) -> list[Scenario]:
    """Pick scenarios: by ids (in the given order) or ``"official"``, then language, then limit.

    Unknown ids raise a ScenarioError that lists them.
    """
    chosen: list[Scenario]
    if ids == "official":
        chosen = [s for s in scenarios if s.source.official]
        if not chosen:
            raise ScenarioError(
                "no scenario is marked official (needs official_cases.txt)", field="cases"
            )
    elif ids is not None:
        wanted = list(ids)
        by_id = {s.id: s for s in scenarios}
        unknown = [i for i in wanted if i not in by_id]
        if unknown:
            raise ScenarioError(f"unknown scenario ids: {', '.join(unknown)}", field="cases")
        chosen = [by_id[i] for i in wanted]
    else:
        chosen = list(scenarios)
    if language is not None:
        chosen = [s for s in chosen if s.labels.language == language]
    if limit is not None:
        chosen = chosen[: max(0, limit)]
    return chosen
