"""EmoBench files of the user's copy (a clone of Sahandfer/EmoBench, or its ``data/`` folder
inside one): ``data/EU.jsonl`` and ``data/EA.jsonl`` (one item per line) and the prompt
texts ``src/configs/prompts.yaml`` (``sys``, ``EU``, ``EA`` per language) and
``src/configs/response.yaml`` (``base`` and the ``EU`` / ``EA`` answer fields per language).

EU lines: ``qid``, ``language``, ``scenario``, ``subject``, ``emotion_choices``,
``emotion_label``, ``cause_choices``, ``cause_label``. EA lines: ``qid``, ``language``,
``scenario``, ``subject``, ``choices``, ``label``, ``question type``. A label must be one of
its choices. Every problem is one :class:`~empathos.errors.InputError` naming file and line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from empathos.bench.emobench import EmoItem, EmoPrompts, Kind
from empathos.bench.emobench_paper import split_eu_template
from empathos.errors import InputError

__all__ = ["EmoData", "read_emobench"]


class EmoData:
    """The items and, per language, the prompt texts of one copy of EmoBench."""

    def __init__(self, items: list[EmoItem], prompts: dict[str, EmoPrompts], files: list[Path]):
        self.items = items
        self.prompts = prompts
        self.files = files


def _root(data: Path) -> Path:
    for root in (data, data.parent):
        if (root / "data" / "EU.jsonl").is_file() or (root / "data" / "EA.jsonl").is_file():
            return root
    raise InputError(
        "no data/EU.jsonl or data/EA.jsonl here; pass a clone of Sahandfer/EmoBench or its "
        "data folder",
        file=data,
        field="--data",
    )


def _choices(line: dict[str, Any], choices: str, label: str, where: str, path: Path) -> Any:
    values, answer = line.get(choices), line.get(label)
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise InputError("missing or not a list of texts", file=path, field=f"{where}: {choices}")
    if answer not in values:
        raise InputError(f"not one of {choices}", file=path, field=f"{where}: {label}")
    return (tuple(values), answer)


def _item(kind: Kind, line: dict[str, Any], where: str, path: Path) -> EmoItem:
    for key in ("qid", "language", "scenario", "subject"):
        if not isinstance(line.get(key), str | int) or line.get(key) == "":
            raise InputError("missing", file=path, field=f"{where}: {key}")
    questions: tuple[tuple[tuple[str, ...], str], ...]
    if kind == "EU":
        questions = (
            _choices(line, "emotion_choices", "emotion_label", where, path),
            _choices(line, "cause_choices", "cause_label", where, path),
        )
    else:
        questions = (_choices(line, "choices", "label", where, path),)
    return EmoItem(
        kind=kind,
        qid=str(line["qid"]),
        language=str(line["language"]),
        scenario=str(line["scenario"]),
        subject=str(line["subject"]),
        questions=questions,
        q_type=str(line.get("question type") or ""),
    )


def _read_items(path: Path, kind: Kind) -> list[EmoItem]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", file=path) from None
    items = []
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg})", file=path, field=f"line {n}") from None
        if not isinstance(line, dict):
            raise InputError("not an object", file=path, field=f"line {n}")
        items.append(_item(kind, line, f"line {n}", path))
    return items


def _yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found (the benchmark's prompt texts)", file=path) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read ({type(exc).__name__})", file=path) from None
    if not isinstance(data, dict):
        raise InputError("expected a mapping", file=path)
    return data


def _text(data: dict[str, Any], key: str, language: str, path: Path) -> str:
    value = (data.get(key) or {}).get(language) if isinstance(data.get(key), dict) else None
    if not isinstance(value, str):
        raise InputError("missing", file=path, field=f"{key}.{language}")
    return value


def _prompts(root: Path, languages: set[str], kinds: set[Kind]) -> dict[str, EmoPrompts]:
    prompts_path = root / "src" / "configs" / "prompts.yaml"
    response_path = root / "src" / "configs" / "response.yaml"
    prompts, response = _yaml(prompts_path), _yaml(response_path)
    out = {}
    for lang in sorted(languages):
        out[lang] = EmoPrompts(
            instructions=_text(prompts, "sys", lang, prompts_path),
            answer_format=_text(response, "base", lang, response_path),
            templates={k: _text(prompts, k, lang, prompts_path) for k in kinds},
            fields={k: _text(response, k, lang, response_path) for k in kinds},
        )
    return out


def _check_paper(prompts: dict[str, EmoPrompts], path: Path) -> None:
    for lang, p in prompts.items():
        if "EU" not in p.templates:
            continue
        try:
            split_eu_template(p.templates["EU"])
        except ValueError as exc:
            raise InputError(f"{exc} (the paper protocol asks them apart)", file=path,
                             field=f"EU.{lang}") from None  # fmt: skip


def read_emobench(data: Path, *, paper: bool = False) -> EmoData:
    """Every item of the copy at ``data`` and the prompt texts of its languages (``paper``:
    also check that the EU template splits into its two questions)."""
    root = _root(data)
    items: list[EmoItem] = []
    files: list[Path] = []
    kinds_order: tuple[Kind, ...] = ("EU", "EA")
    for kind in kinds_order:
        path = root / "data" / f"{kind}.jsonl"
        if path.is_file():
            items.extend(_read_items(path, kind))
            files.append(path)
    if not items:
        raise InputError("no items", file=root / "data")
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise InputError(
                f"item {item.qid} appears twice in {item.language}", file=root / "data"
            )
        seen.add(item.id)
    languages = {i.language for i in items}
    kinds = {i.kind for i in items}
    prompts = _prompts(root, languages, kinds)
    if paper:
        _check_paper(prompts, root / "src" / "configs" / "prompts.yaml")
    files += [root / "src" / "configs" / n for n in ("prompts.yaml", "response.yaml")]
    return EmoData(items, prompts, files)
