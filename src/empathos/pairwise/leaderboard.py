"""EQ-Bench 3's canonical leaderboard files: the opponents' transcripts and ratings.

The benchmark keeps two files (gzip JSON, ``.json.gz``; plain ``.json`` is read too), in
the layout its code reads and writes (docs/pairwise.md says where it was learnt):

- the **runs file** (``canonical_leaderboard_results.json.gz``): one object per run key;
  a run names its model in ``model_name`` (older runs: ``test_model``) and holds
  ``scenario_tasks``: iteration index -> scenario id -> task, a task carrying ``status``,
  ``conversation_history`` (``{role, content}`` messages) and, for role-plays and drafting
  tasks, ``debrief_response`` (and ``parsed_responses``: when present, the benchmark's
  judge sees the replies rebuilt from their sections). A task is finished when its status
  is ``completed`` or ``rubric_scored`` (analysis tasks, ids 401-420: also
  ``scenario_completed``).
- the **Elo file** (``canonical_leaderboard_elo_results.json.gz``): one object per model
  with ``elo`` (the raw TrueSkill mu), ``elo_norm``, ``sigma``, ``ci_low`` / ``ci_high``
  (and their ``_norm`` forms), and ``__metadata__.global_pairwise_comparisons``: the judged
  orders, each with ``scenario_id``, ``pair`` (``test_model``, ``neighbor_model``,
  ``iteration_index``), ``plus_for_test`` and ``plus_for_other`` (an order whose call failed
  holds ``error``). As the benchmark's current code does, an order that keeps the judge's
  reply (``judge_response``, with ``order``) has its plus counts recomputed from it by the
  benchmark's rule (:mod:`empathos.pairwise.eqbench_plus`); the stored counts stand only
  when there is no reply. The ratings keep the file's order (the benchmark's rank window
  sorts the file's models by their stored ``elo``).

A run's iterations become trials in the order of their indices (the first is trial 0, as
in ``empathos bench eqbench3`` directories), so a new run's trial 0 meets the leaderboard's
first iteration.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from empathos.errors import ConfigError
from empathos.pairwise.eqbench_plus import stored_plus
from empathos.pairwise.model import Item, TranscriptMessage

__all__ = [
    "BoardComparison",
    "BoardRating",
    "Leaderboard",
    "read_board_elo",
    "read_board_file",
    "read_leaderboard",
]

META = "__metadata__"
_DONE = {"completed", "rubric_scored"}
_DONE_ANALYSIS = {"scenario_completed", "rubric_scored"}


@dataclass(frozen=True, slots=True)
class BoardRating:
    """One model's published rating: the raw mu, its sigma, interval and normalised form."""

    elo: float
    sigma: float | None = None
    ci: tuple[float, float] | None = None
    elo_norm: float | None = None


@dataclass(frozen=True, slots=True)
class BoardComparison:
    """One judged order of the leaderboard: the plus counts of ``test`` and ``other``."""

    scenario_id: str
    iteration: str
    test: str
    other: str
    plus_test: float
    plus_other: float


@dataclass
class Leaderboard:
    """What the leaderboard files gave: transcripts as items, ratings, judged orders."""

    items: list[Item] = field(default_factory=list)
    ratings: dict[str, BoardRating] = field(default_factory=dict)
    comparisons: list[BoardComparison] = field(default_factory=list)

    @property
    def models(self) -> set[str]:
        """The leaderboard's models (with transcripts or a rating)."""
        return {i.model for i in self.items} | set(self.ratings)


def read_board_file(path: Path, flag: str) -> dict[str, Any]:
    """The JSON object of a ``.json.gz`` or ``.json`` file (ConfigError: unreadable, not
    JSON, not an object)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"unreadable ({exc.strerror})", file=path, field=flag) from None
    try:
        text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        data = json.loads(text.decode("utf-8"))
    except (ValueError, EOFError, OSError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"not gzip JSON or JSON ({why})", file=path, field=flag) from None
    if not isinstance(data, dict):
        raise ConfigError("not a JSON object", file=path, field=flag)
    return data


def _is_analysis(scenario_id: str) -> bool:
    return scenario_id.isdigit() and 401 <= int(scenario_id) <= 420


def _messages(history: Any) -> tuple[TranscriptMessage, ...] | None:
    if not isinstance(history, list):
        return None
    out = []
    for m in history:
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant"):
            return None
        out.append(TranscriptMessage(role=m["role"], content=str(m.get("content") or "")))
    return tuple(out)


def _iteration_order(keys: list[str]) -> dict[str, int]:
    def key(k: str) -> tuple[int, int | str]:
        return (0, int(k)) if k.isdigit() else (1, k)

    return {k: n for n, k in enumerate(sorted(keys, key=key))}


def _run_items(run: Mapping[str, Any]) -> list[Item]:
    model = run.get("model_name") or run.get("test_model")
    tasks = run.get("scenario_tasks")
    if not isinstance(model, str) or not isinstance(tasks, dict):
        return []
    items = []
    for iteration, trial in _iteration_order([str(k) for k in tasks]).items():
        scenarios = tasks.get(iteration)
        for sid, task in (scenarios or {}).items() if isinstance(scenarios, dict) else ():
            if not isinstance(task, dict):
                continue
            analysis = _is_analysis(str(sid))
            debrief = task.get("debrief_response")
            done = task.get("status") in (_DONE_ANALYSIS if analysis else _DONE)
            messages = _messages(task.get("conversation_history"))
            if not done or not messages or (not analysis and not isinstance(debrief, str)):
                continue
            if not any(m.role == "assistant" for m in messages):
                continue
            items.append(
                Item(
                    scenario_id=str(sid), trial=trial, model=model, transcript=messages,
                    debrief=debrief if isinstance(debrief, str) else "",
                    sectioned=not analysis and bool(task.get("parsed_responses")),
                )
            )  # fmt: skip
    return items


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _rating(entry: Mapping[str, Any]) -> BoardRating | None:
    elo = _number(entry.get("elo"))
    if elo is None:
        return None
    low, high = _number(entry.get("ci_low")), _number(entry.get("ci_high"))
    ci = (low, high) if low is not None and high is not None else None
    return BoardRating(elo, _number(entry.get("sigma")), ci, _number(entry.get("elo_norm")))


def _comparison(c: Any) -> BoardComparison | None:
    if not isinstance(c, dict) or "error" in c or not isinstance(c.get("pair"), dict):
        return None
    pair = c["pair"]
    test, other = pair.get("test_model"), pair.get("neighbor_model")
    plus_test, plus_other = _number(c.get("plus_for_test")), _number(c.get("plus_for_other"))
    recomputed = stored_plus(c)  # the benchmark recomputes every stored comparison
    if recomputed is not None:
        plus_test, plus_other = float(recomputed[0]), float(recomputed[1])
    it, sid = pair.get("iteration_index"), c.get("scenario_id")
    if not (isinstance(test, str) and isinstance(other, str) and test != other):
        return None
    if plus_test is None or plus_other is None or it is None or sid is None:
        return None
    return BoardComparison(str(sid), str(it), test, other, plus_test, plus_other)


def _runs(data: dict[str, Any], path: Path) -> list[Item]:
    runs = [v for k, v in data.items() if k != META and isinstance(v, dict)]
    if not any("scenario_tasks" in r for r in runs):
        hint = (
            " (it is the leaderboard's Elo file: give it with --leaderboard-elo)"
            if any("elo" in r for r in runs) or META in data
            else ""
        )
        raise ConfigError(
            f"not an EQ-Bench 3 runs file: no run holds scenario_tasks{hint}",
            file=path, field="--leaderboard",
        )  # fmt: skip
    return [item for r in runs for item in _run_items(r)]


def _elo(data: dict[str, Any], path: Path) -> tuple[dict[str, BoardRating], list[BoardComparison]]:
    ratings = {
        k: r for k, v in data.items() if k != META and isinstance(v, dict) and (r := _rating(v))
    }
    meta = data.get(META)
    raw = meta.get("global_pairwise_comparisons", []) if isinstance(meta, dict) else []
    comparisons = [c for x in raw if (c := _comparison(x))] if isinstance(raw, list) else []
    if not ratings and not comparisons:
        hint = (
            " (it is the leaderboard's runs file: give it with --leaderboard)"
            if any(isinstance(v, dict) and "scenario_tasks" in v for v in data.values())
            else ""
        )
        raise ConfigError(
            f"not an EQ-Bench 3 Elo file: no model with an elo rating, no comparisons{hint}",
            file=path, field="--leaderboard-elo",
        )  # fmt: skip
    return ratings, comparisons


def read_board_elo(path: Path) -> tuple[dict[str, BoardRating], list[BoardComparison]]:
    """The ratings (in the file's order) and usable judged orders of an Elo file alone."""
    return _elo(read_board_file(path, "--leaderboard-elo"), path)


def read_leaderboard(runs: Path, elo: Path | None = None) -> Leaderboard:
    """The leaderboard of a runs file and, optionally, its Elo file (see the module
    docstring); ConfigError names the file and what is wrong with it."""
    items = _runs(read_board_file(runs, "--leaderboard"), runs)
    if not items:
        raise ConfigError(
            "no finished task in the runs file (status completed, rubric_scored)",
            file=runs, field="--leaderboard",
        )  # fmt: skip
    board = Leaderboard(items=items)
    if elo is not None:
        board.ratings, board.comparisons = _elo(read_board_file(elo, "--leaderboard-elo"), elo)
    return board
