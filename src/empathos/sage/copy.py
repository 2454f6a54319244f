"""SAGE files of the user's copy (a clone of Tencent/digitalhuman, or its ``SAGE/`` folder),
and SAGE's result files.

- ``profile/simulator_profile_withfirsttalk.jsonl``: one profile a line (``id``, ``player``,
  ``scene``, ``main_cha``, ``cha_group``, ``task``, ``first_talk``);
- ``simulator_response.py``: the simulator's prompts, read as the string constants of the
  code (Python's ``ast``; nothing of it is run): ``target_prompt``, the ``template`` of
  ``planning_reply`` (the analyser) and of ``player_reply`` (the reply prompt), the speakers'
  names of the dialogue it shows the simulator (``mapping``) and how ``player_reply`` puts
  the analysis into its prompt;
- ``npc_response.py``: ``role_system``, the system prompt of the model under test.
- Result files (``dataset/<simulator>/<model>_result.jsonl``, or what ``empathos bench sage``
  writes under ``<out>/sage/``): one dialogue a line, ``emo_point`` and ``emo_state`` read.

A missing or malformed file is one :class:`~empathos.errors.InputError` naming it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from empathos.errors import InputError
from empathos.sage.rules import SentientScore, SimulatorPrompts, sentient_score

__all__ = [
    "NPC_FILE",
    "PROFILE_FILE",
    "SIMULATOR_FILE",
    "SageCopy",
    "read_results",
    "read_sage",
    "result_files",
    "scored_results",
]

PROFILE_FILE = "profile/simulator_profile_withfirsttalk.jsonl"
SIMULATOR_FILE = "simulator_response.py"
NPC_FILE = "npc_response.py"
_PROFILE_KEYS = ("id", "player", "scene", "main_cha", "task", "first_talk")


@dataclass(frozen=True, slots=True)
class SageCopy:
    """The profiles and prompts of one copy, and the files they came from."""

    profiles: list[dict[str, Any]]
    prompts: SimulatorPrompts
    files: list[Path]


def _folder(data: Path) -> Path:
    for folder in (data / "SAGE", data):
        if (folder / SIMULATOR_FILE).is_file():
            return folder
    raise InputError(
        f"no {SIMULATOR_FILE} here or in its SAGE/ folder; pass a clone of "
        "Tencent/digitalhuman or its SAGE folder",
        file=data,
        field="--data",
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found (a file of SAGE's folder)", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({type(exc).__name__})", file=path) from None


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON ({exc.msg})", file=path, field=f"line {n}") from None
        if not isinstance(row, dict):
            raise InputError("not a JSON object", file=path, field=f"line {n}")
        rows.append(row)
    if not rows:
        raise InputError("holds no record", file=path)
    return rows


def _profiles(path: Path) -> list[dict[str, Any]]:
    rows = _jsonl(path)
    for n, row in enumerate(rows, 1):
        missing = [k for k in _PROFILE_KEYS if not isinstance(row.get(k), str)]
        if missing:
            raise InputError(f"profile has no {', '.join(missing)}", file=path, field=f"line {n}")
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise InputError("a profile id appears twice", file=path)
    return rows


def _assigned(tree: ast.AST, name: str) -> ast.expr | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node.value
    return None


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _string(path: Path, tree: ast.AST, name: str, where: str) -> str:
    value = _assigned(tree, name)
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        raise InputError(f"no string {name} {where}", file=path)
    return value.value


def _parts(node: ast.expr) -> list[str | Mapping[str, str]]:
    """A chain of ``+`` of strings and ``name["key"]`` as text and key references."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_parts(node.left), *_parts(node.right)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return [{"key": node.slice.value}]
    raise ValueError("not a concatenation of strings and fields")


def _analysis_parts(path: Path, func: ast.FunctionDef) -> tuple[str | Mapping[str, str], ...]:
    """The ``replace("{{planning}}", <concatenation>)`` of the reply function."""
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "replace"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "{{planning}}"
            and isinstance(node.args[1], ast.BinOp)
        ):
            try:
                return tuple(_parts(node.args[1]))
            except ValueError:
                break
    raise InputError(
        "player_reply does not put the analysis into its prompt as expected", file=path
    )


def _prompts(sim_path: Path, npc_path: Path) -> SimulatorPrompts:
    trees = {}
    for path in (sim_path, npc_path):
        try:
            trees[path] = ast.parse(_read(path), filename=str(path))
        except SyntaxError as exc:
            raise InputError(
                f"not Python ({exc.msg})", file=path, field=f"line {exc.lineno}"
            ) from None
    sim = trees[sim_path]
    funcs = {n: _function(sim, n) for n in ("planning_reply", "player_reply")}
    for name, func in funcs.items():
        if func is None:
            raise InputError(f"no function {name}", file=sim_path)
    analyser_fn, reply_fn = funcs["planning_reply"], funcs["player_reply"]
    assert analyser_fn is not None and reply_fn is not None
    mapping = _assigned(reply_fn, "mapping")
    try:
        speakers = ast.literal_eval(mapping) if mapping is not None else None
    except ValueError:
        speakers = None
    if not (isinstance(speakers, dict) and {"user", "assistant"} <= set(speakers)):
        raise InputError("player_reply has no mapping of user and assistant", file=sim_path)
    return SimulatorPrompts(
        target=_string(sim_path, sim, "target_prompt", "at module level"),
        analyser=_string(sim_path, analyser_fn, "template", "in planning_reply"),
        reply=_string(sim_path, reply_fn, "template", "in player_reply"),
        npc_system=_string(npc_path, trees[npc_path], "role_system", "in call_npc"),
        speakers={str(k): str(v) for k, v in speakers.items()},
        analysis_parts=_analysis_parts(sim_path, reply_fn),
    )


def read_sage(data: Path) -> SageCopy:
    """The profiles and the prompts of the copy at ``data``, checked."""
    folder = _folder(data)
    sim, npc, prof = folder / SIMULATOR_FILE, folder / NPC_FILE, folder / PROFILE_FILE
    prompts = _prompts(sim, npc)
    for name, text in (("planning_reply", prompts.analyser), ("player_reply", prompts.reply)):
        for slot in ("{{dialog_history}}", "{{target}}"):
            if slot not in text:
                raise InputError(f"the template of {name} has no {slot} slot", file=sim)
    return SageCopy(_profiles(prof), prompts, [prof, sim, npc])


def result_files(path: Path) -> list[Path]:
    """The result files at ``path``: the file itself, or a directory's ``*_result.jsonl``
    (an ``empathos bench sage`` run directory: those under its ``sage/``)."""
    if path.is_file():
        return [path]
    for folder in (path / "sage", path):
        found = sorted(folder.glob("*_result.jsonl"))
        if found:
            return found
    raise InputError("no *_result.jsonl here or in its sage/ folder", file=path)


def read_results(path: Path) -> list[dict[str, Any]]:
    """One result file's dialogues; each must carry ``emo_point`` and ``emo_state``."""
    rows = _jsonl(path)
    for n, row in enumerate(rows, 1):
        point, state = row.get("emo_point"), row.get("emo_state")
        if (
            not isinstance(point, int | float)
            or isinstance(point, bool)
            or not isinstance(state, str)
        ):
            raise InputError(
                "a dialogue has no emo_point or emo_state", file=path, field=f"line {n}"
            )
    return rows


def scored_results(path: Path) -> list[tuple[Path, str, SentientScore]]:
    """Each result file at ``path`` (:func:`result_files`) with its model (the file's name
    less ``_result.jsonl``) and its Sentient numbers."""
    return [
        (f, f.name.removesuffix("_result.jsonl"), sentient_score(read_results(f)))
        for f in result_files(path)
    ]
