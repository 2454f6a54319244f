"""EQ-Bench (v2) files of the user's copy: the questions and published result files.

- The questions: ``eq_bench_v2_questions_171.json`` in ``--data`` (a clone of the benchmark's
  repository, whose ``data/`` holds it, or that folder itself): an object of question id ->
  ``{"prompt": str, "reference_answer_fullscale": {"emotion1": name, "emotion1_score": n,
  ... emotion4}}`` (the v2 references; the intensities may be numbers or digit strings).
- A published result file (``results/eq-bench/*_eqbench_v2_results.json``): an object with
  ``benchmark_score``, ``n_questions_total``, ``model_path`` and ``raw_results``: iteration ->
  ``{"raw_inference": {question id: the model's reply}, "individual_scores": {question id:
  {"first_pass_score", "revised_score"}}}``. Only the raw replies are scored; the stored
  per-question scores are read only to learn which replies the run scored in the revise
  format (a stored revised score), since one file may mix both formats.

Every problem is one :class:`~empathos.errors.InputError` naming the file and field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from empathos.bench.eqbench import (
    EqbenchScore,
    Reference,
    eqbench_score,
    mean_of_iterations,
    reply_format,
    score_reply,
)
from empathos.errors import InputError, RecordError

__all__ = [
    "QUESTIONS_FILE",
    "EqQuestion",
    "PublishedCheck",
    "check_published",
    "find_questions",
    "read_json",
    "read_questions",
]

QUESTIONS_FILE = "eq_bench_v2_questions_171.json"
#: A recomputed score this close to the published one (rounded to 2 decimals) reproduces it.
TOLERANCE = 0.02


@dataclass(frozen=True, slots=True)
class EqQuestion:
    """One question: its id, the prompt sent to the model, and the reference."""

    id: str
    prompt: str
    reference: Reference


def read_json(path: Path) -> Any:
    """A JSON file's content; one line naming the file when it is missing or malformed."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or type(exc).__name__})", file=path) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not valid JSON ({exc})", file=path) from None


def find_questions(data: Path) -> Path:
    """The questions file of ``--data`` (a clone or its ``data/`` folder)."""
    for candidate in (data / "data" / QUESTIONS_FILE, data / QUESTIONS_FILE):
        if candidate.is_file():
            return candidate
    raise InputError(
        f"no {QUESTIONS_FILE} here or in its data/ folder; pass a clone of EQ-bench/EQ-Bench "
        "or its data folder",
        file=data,
        field="--data",
    )


def _reference(raw: Any, path: Path, qid: str) -> Reference:
    field = f"{qid}.reference_answer_fullscale"
    if not isinstance(raw, dict):
        raise InputError("missing or not an object", file=path, field=field)
    emotions: list[tuple[str, float]] = []
    for i in range(1, 5):
        name, value = raw.get(f"emotion{i}"), raw.get(f"emotion{i}_score")
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            number = float("nan")
        if not isinstance(name, str) or not 0 <= number <= 10:
            raise InputError(f"emotion{i} needs a name and a score 0-10", file=path, field=field)
        emotions.append((name, number))
    return Reference(tuple(emotions))


def read_questions(path: Path) -> list[EqQuestion]:
    """The questions of a questions file, in id order."""
    data = read_json(path)
    if not isinstance(data, dict) or not data:
        raise InputError("expected an object of question id -> question", file=path)
    out: list[EqQuestion] = []
    for qid, item in data.items():
        if not isinstance(item, dict) or not isinstance(item.get("prompt"), str):
            raise InputError("missing or not text", file=path, field=f"{qid}.prompt")
        out.append(
            EqQuestion(
                qid, item["prompt"], _reference(item.get("reference_answer_fullscale"), path, qid)
            )
        )
    return sorted(out, key=lambda q: (len(q.id), q.id))


@dataclass(frozen=True, slots=True)
class PublishedCheck:
    """A published result file recomputed from its raw replies."""

    file: Path
    model: str
    published: float | None
    recomputed: EqbenchScore
    revise: bool
    unknown_questions: int
    """Replies to question ids the questions file does not hold (left out)."""

    @property
    def difference(self) -> float | None:
        """Recomputed minus published (None when either is missing)."""
        if self.published is None or self.recomputed.score is None:
            return None
        return self.recomputed.score - self.published

    @property
    def reproduced(self) -> bool:
        """The recomputed score rounds to within :data:`TOLERANCE` of the published one."""
        diff = self.difference
        return diff is not None and abs(diff) <= TOLERANCE + 1e-9


def _iterations(data: dict[str, Any], path: Path) -> dict[str, dict[str, Any]]:
    raw = data.get("raw_results")
    if not isinstance(raw, dict) or not raw:
        raise RecordError("missing or empty (no raw model outputs)", file=path, field="raw_results")
    for key, it in raw.items():
        if not isinstance(it, dict) or not isinstance(it.get("raw_inference"), dict):
            raise RecordError("missing", file=path, field=f"raw_results.{key}.raw_inference")
    return raw


def _stored_revised(iteration: dict[str, Any]) -> dict[str, bool]:
    scores = iteration.get("individual_scores")
    if not isinstance(scores, dict):
        return {}
    return {
        str(q): isinstance(v, dict) and v.get("revised_score") is not None
        for q, v in scores.items()
    }


def _reply_revise(reply: str, stored: dict[str, bool], qid: str) -> bool:
    """The format one reply was scored in: the revise format when the run stored a revised
    score for it; else, in a run that stored revised scores for other replies, when the
    reply holds a revised block (a partial answer); else plain."""
    if stored.get(qid):
        return True
    return any(stored.values()) and reply_format(reply)


def check_published(path: Path, questions: list[EqQuestion]) -> PublishedCheck:
    """Recompute one published result file's score from its raw replies by the benchmark's
    rule (each reply in its own format; iterations averaged; questions missing from an
    iteration count as unparseable)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise RecordError("expected an EQ-Bench result object", file=path)
    by_id = {q.id: q for q in questions}
    total = data.get("n_questions_total")
    total = total if isinstance(total, int) and total > 0 else len(questions)
    scores: list[EqbenchScore] = []
    unknown = 0
    revise = False
    for iteration in _iterations(data, path).values():
        stored = _stored_revised(iteration)
        items = []
        for qid, reply in iteration["raw_inference"].items():
            question = by_id.get(str(qid))
            if question is None:
                unknown += 1
                continue
            this_revise = _reply_revise(str(reply), stored, str(qid))
            revise = revise or this_revise
            items.append(score_reply(question.reference, str(reply), revise=this_revise))
        scores.append(eqbench_score(items, total))
    published = data.get("benchmark_score")
    return PublishedCheck(
        file=path,
        model=str(data.get("model_path") or path.stem),
        published=float(published) if isinstance(published, int | float) else None,
        recomputed=mean_of_iterations(scores),
        revise=revise,
        unknown_questions=unknown,
    )
