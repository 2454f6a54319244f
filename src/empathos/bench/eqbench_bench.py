"""EQ-Bench (v2) on the benchmark protocol (:mod:`empathos.bench.protocol`): the questions of
the user's copy under the ``v2.1`` protocol (no revision block) or ``revise``, played by
:func:`empathos.bench.play.play_eqbench`; the v2 score (an item's value: its question score
x 10 from the pass the benchmark's rule takes) and the parse rate; published result files
recomputed from their raw replies; the known differences from the benchmark's code
(docs/bench.md)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from empathos.bench.eqbench import EqbenchScore, ItemResult, Ratings, eqbench_score
from empathos.bench.eqbench_files import (
    EqQuestion,
    PublishedCheck,
    check_published,
    find_questions,
    read_questions,
)
from empathos.bench.play import BenchCase, play_eqbench
from empathos.bench.protocol import (
    Benchmark,
    Command,
    Defaults,
    ProtocolFlag,
    PublishedFiles,
    PublishedRow,
    TableData,
    Values,
    num,
    per_item,
)
from empathos.bench.record import BenchItemRecord
from empathos.canonical import canonical_digest
from empathos.errors import InputError

__all__ = ["EQBENCH", "EqBench", "published_cells", "published_row", "questions_for", "run_score"]


def run_score(records: Sequence[BenchItemRecord]) -> EqbenchScore:
    """The benchmark's score over a run's records (errors count as unparsed questions)."""
    done = [r for r in records if r.status == "done"]
    items = [
        ItemResult(r.scores.get("first_pass"), r.scores.get("revised"), Ratings({}, {}))
        for r in done
    ]
    return eqbench_score(items, len(records))


def questions_for(result: Path, data: Path | None) -> Path:
    """The questions file for a published result file: in ``data``, else in the clone the
    file sits in (``<clone>/results/eq-bench/<file>.json``)."""
    if data is not None:
        return find_questions(data)
    for parent in list(result.resolve().parents)[:3]:
        try:
            return find_questions(parent)
        except InputError:
            continue
    raise InputError(
        "no questions file beside this result file; pass --data (a clone of "
        "EQ-bench/EQ-Bench or its data folder)",
        file=result,
        field="--data",
    )


def published_row(check: PublishedCheck) -> dict[str, Any]:
    """One recomputed result file as plain JSON values."""
    score = check.recomputed
    return {
        "file": str(check.file),
        "model": check.model,
        "published": check.published,
        "recomputed": None if score.score is None else round(score.score, 4),
        "first_pass": None if score.first_pass is None else round(score.first_pass, 4),
        "revised": None if score.revised_score is None else round(score.revised_score, 4),
        "final_from": "revised" if score.uses_revised else "first pass",
        "difference": None if check.difference is None else round(check.difference, 4),
        "parseable": score.parseable,
        "total": score.total,
        "parse_rate": round(score.parse_rate, 4),
        "benchmark_failed": score.failed,
        "revise_format": check.revise,
        "reproduced": check.reproduced,
    }


@functools.lru_cache(maxsize=4)
def _questions(path: Path, mtime_ns: int, size: int) -> list[EqQuestion]:
    """The questions file, read once for all the result files of one ``score`` call (the
    file's time and size in the key: an edited file is read again)."""
    return read_questions(path)


def _verdict(check: PublishedCheck) -> str:
    if check.published is None:
        return "no published score"
    if check.reproduced:
        return "reproduced"
    return "differs (the score depends on a rule not visible in the file)"


def published_cells(check: PublishedCheck) -> tuple[str, ...]:
    """One recomputed result file as the table's cells (:data:`PUBLISHED`'s columns)."""
    s = check.recomputed
    return (
        check.model,
        num(check.published),
        num(s.score),
        "-" if check.difference is None else f"{check.difference:+.3f}",
        num(s.first_pass),
        num(s.revised_score),
        "revised" if s.uses_revised else "first pass",
        f"{s.parseable:g}/{s.total}" + (" (failed: under 83%)" if s.failed else ""),
        _verdict(check),
    )


#: ``empathos bench eqbench score``: published result files recomputed.
PUBLISHED = PublishedFiles(
    help="Recompute published EQ-Bench v2 scores from each file's raw model replies.",
    paths="EQ-Bench v2 result files (results/eq-bench/*_results.json).",
    title="EQ-Bench v2 result files, recomputed from the raw replies by the benchmark's "
    "final-score rule",
    columns=(
        "model",
        "published",
        "recomputed",
        "diff",
        "first pass",
        "revised",
        "final from",
        "parsed",
        "verdict",
    ),
    data="A clone of EQ-bench/EQ-Bench or its data folder (the questions). Default: the clone "
    "the result file sits in.",
)


class EqBench(Defaults):
    """EQ-Bench (v2) behind the benchmark protocol (registered in
    :data:`empathos.bench.registry.REGISTRY`)."""

    name = "eqbench"
    roles: tuple[str, ...] = ("model_under_test",)
    protocols: tuple[str, ...] = ("v2.1", "revise")
    note = "EQ-Bench: the v2 score (0-100)"
    about = "EQ-Bench (v2): emotion intensities scored against the references."
    data_help = "Your copy of EQ-bench/EQ-Bench (a clone or its data folder)."
    command = Command(
        protocol_flag=ProtocolFlag(
            "--revision",
            "Send the prompt with its critique-and-revise block (EQ-Bench v2's -revise); "
            "default: without it, as the benchmark has since v2.1.",
            switch=True,
        ),
        group_help="EQ-Bench (v2): emotion-intensity ratings scored against references. "
        "Without a sub-command: run it (the options below); `score`: recompute published "
        "result files.",
    )
    published: PublishedFiles | None = PUBLISHED
    differences: tuple[str, ...] = (
        "Published files recompute up to 0.022 points off their published score, "
        "unexplained (the benchmark's own code leaves the same residual).",
        "An endpoint failure is an error, left out and run again on resume (the benchmark "
        "counts it a failed attempt).",
        "One iteration per run (bench eqbench score averages a file's iterations).",
        "The prompt alone is the user turn (the benchmark's OpenAI path).",
        "A run under 83.33% parsed is flagged FAILED with its score still shown.",
        "All-zero ratings are rejected in either pass of the revise format.",
        "English only.",
    )

    def cases(self, data: Path, protocol: str) -> tuple[list[BenchCase], list[Path]]:
        """Every question of the copy's questions file."""
        path = find_questions(data)
        return [
            BenchCase(q.id, canonical_digest((q,), 16), "eqbench", "en", None, play_eqbench, q,
                      None, protocol)
            for q in read_questions(path)
        ], [path]  # fmt: skip

    def values(self, records: Sequence[BenchItemRecord]) -> Values:
        """The question score x 10 of the pass the benchmark's rule takes for the run."""
        key = "revised" if run_score(records).uses_revised else "first_pass"
        return per_item(records, "score", key, 10.0)

    def summary(self, records: Sequence[BenchItemRecord]) -> dict[str, Any]:
        """The benchmark's score, both passes and the parse counts."""
        s = run_score(records)
        return {
            "eqbench": {
                "score": s.score, "first_pass": s.first_pass, "revised_score": s.revised_score,
                "final_from": "revised" if s.uses_revised else "first pass",
                "parseable": s.parseable, "total": s.total,
                "first_parseable": s.first_parseable, "revised_parseable": s.revised_parseable,
                "benchmark_failed": s.failed,
            }
        }  # fmt: skip

    def tables(self, parts: dict[str, Any]) -> tuple[str | None, list[TableData]]:
        """The score's pass, both passes and the parse rate as the caption."""
        eq = parts["eqbench"]
        revised = eq["final_from"] == "revised"
        return (
            f"score {num(eq['score'])} from the {'revised' if revised else 'first'} pass "
            f"(first pass {num(eq['first_pass'])}, {eq['first_parseable']:g} parsed; revised "
            f"{num(eq['revised_score'])}, {eq['revised_parseable']:g} parsed); parse rate "
            f"{eq['parseable']:g}/{eq['total']}"
            + ("; FAILED: under the benchmark's 83% minimum" if eq["benchmark_failed"] else "")
        ), []

    def metrics(self, records: Sequence[BenchItemRecord]) -> dict[str, float]:
        """The parse rate."""
        return {"parse_rate": run_score(records).parse_rate}

    def read_published(self, path: Path, data: Path | None = None) -> list[PublishedRow]:
        """A result file (results/eq-bench/*_results.json) recomputed from its raw replies."""
        qfile = questions_for(path, data)
        stat = qfile.stat()
        check = check_published(path, _questions(qfile, stat.st_mtime_ns, stat.st_size))
        return [PublishedRow(published_row(check), published_cells(check))]


EQBENCH = EqBench()
_CHECKED: Benchmark = EQBENCH  # EqBench keeps to the protocol (mypy checks it)
