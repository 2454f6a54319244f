"""EQ-Bench v2 scoring: the published method on hand-checkable numbers, our own result files
in the benchmark's layout, and the three published sample files reproduced within 0.02."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from bench_helpers import EQ_REFERENCES, cli, ratings_text, write_eq_questions
from typer.testing import CliRunner

from empathos.bench.eqbench import (
    Reference,
    eqbench_score,
    parse_ratings,
    penalty,
    question_score,
    score_reply,
)
from empathos.bench.eqbench_files import check_published, read_questions
from empathos.cli.main import app

REF = Reference((("Calm", 2.0), ("Bitter", 7.0), ("Hopeful", 0.0), ("Wary", 5.0)))
S1 = 6.5 / (1 + math.exp(3.6))  # the penalty of a distance of 1, by hand


def test_penalty_follows_the_s_curve_then_the_distance() -> None:
    assert penalty(0) == 0
    assert penalty(4) == pytest.approx(3.25)  # the curve's midpoint: 6.5 / 2
    assert penalty(1) == pytest.approx(S1)
    assert penalty(5) == pytest.approx(6.5 / (1 + math.exp(-1.2)))
    assert penalty(6) == 6 and penalty(10) == 10


def test_question_score_exact_and_offset_answers() -> None:
    assert question_score(REF, {"Calm": 2, "Bitter": 7, "Hopeful": 0, "Wary": 5}) == 10.0
    off = {"Calm": 3, "Bitter": 8, "Hopeful": 1, "Wary": 6}  # every rating one too high
    assert question_score(REF, off) == pytest.approx(10 - 0.7477 * 4 * S1)
    far = {"Calm": 10, "Bitter": 7, "Hopeful": 0, "Wary": 5}  # one emotion 8 away
    assert question_score(REF, far) == pytest.approx(10 - 0.7477 * 8)


@pytest.mark.parametrize(
    "ratings",
    [
        {"Calm": 2, "Bitter": 7, "Hopeful": 0},  # three of four
        {"Calm": 2, "Bitter": 7, "Hopeful": 0, "Angry": 5},  # a name not asked
        {"Calm": 2, "Bitter": 7, "Hopeful": 0, "Wary": 5, "Extra": 1},  # five
    ],
)
def test_answers_without_exactly_the_four_emotions_are_unparseable(ratings: dict) -> None:
    assert question_score(REF, ratings) is None


def test_parse_plain_and_revise_formats() -> None:
    plain = parse_ratings("Calm: 2\nBitter: 7\nHopeful:  0\nWary: 5 because...", revise=False)
    assert plain.first_pass == {"Calm": 2, "Bitter": 7, "Hopeful": 0, "Wary": 5}
    assert plain.revised == {}
    text = ratings_text("1", 1, revise=True, revised_offset=0)
    both = parse_ratings(text, revise=True)
    assert both.first_pass == {"Calm": 3, "Bitter": 8, "Hopeful": 1, "Wary": 6}
    assert both.revised == {"Calm": 2, "Bitter": 7, "Hopeful": 0, "Wary": 5}
    # The revise format without its headings parses to nothing: unparseable.
    assert parse_ratings("Calm: 2\nBitter: 7", revise=True).first_pass == {}


def test_the_final_score_follows_the_benchmarks_rule() -> None:
    good = score_reply(REF, ratings_text("1", 0, revise=True, revised_offset=1), revise=True)
    off = score_reply(REF, ratings_text("1", 1, revise=True, revised_offset=0), revise=True)
    junk = score_reply(REF, "I cannot answer that.", revise=True)
    result = eqbench_score([good, off, junk, None], total=5)
    first = (10 + (10 - 0.7477 * 4 * S1)) / 2
    assert result.first_pass == pytest.approx(10 * first)
    assert result.revised_score == pytest.approx(10 * first)  # the two swap
    # Equal, with as many revisions parsed: the revised score is taken.
    assert result.uses_revised and result.score == pytest.approx(10 * first)
    assert (result.parseable, result.total, result.parse_rate) == (2, 5, 0.4)
    assert result.failed  # under 83% parsed
    assert eqbench_score([junk], total=1).score is None
    # The revision better: taken.
    better = eqbench_score([off, off], total=2)
    assert better.uses_revised and better.score == 100.0
    assert better.first_pass == pytest.approx(10 * (10 - 0.7477 * 4 * S1))
    # The revision better but parsed for fewer than 95% of the first passes: not taken.
    cut_short = ratings_text("1", 1, revise=True, revised_offset=0).split("Bitter: 7")[0]
    half = score_reply(REF, cut_short, revise=True)  # the revision cut after one rating
    assert half.first_pass is not None and half.revised is None
    fewer = eqbench_score([off] + [half] * 19, total=20)  # 1 of 20 revisions
    assert not fewer.uses_revised and fewer.score == fewer.first_pass
    # The revision worse: not taken.
    worse = eqbench_score([good, good], total=2)
    assert not worse.uses_revised and worse.score == 100.0


def test_markdown_letter_case_and_all_zero_answers_read_as_the_benchmark_reads_them() -> None:
    bold = "**Calm**: 2\n## bitter: 7\nHOPEFUL: 0\nWary: 5"
    assert question_score(REF, parse_ratings(bold, revise=False).first_pass) == 10.0
    zeros = parse_ratings("Calm: 0\nBitter: 0\nHopeful: 0\nWary: 0", revise=False)
    assert question_score(REF, zeros.first_pass) is None  # rejected, asked again
    assert not score_reply(REF, "Calm: 0\nBitter: 0\nHopeful: 0\nWary: 0", revise=False).complete(
        revise=False
    )


def _write_result(path: Path, offsets: dict[str, int], published: float, total: int) -> Path:
    raw = {qid: ratings_text(qid, off) for qid, off in offsets.items()}
    scores = {qid: {"first_pass_score": 0.0, "revised_score": None} for qid in offsets}
    data = {
        "benchmark_score": published,
        "model_path": "ours/test-model",
        "n_questions_total": total,
        "raw_results": {"1": {"raw_inference": raw, "individual_scores": scores}},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_our_result_file_in_the_layout_is_recomputed(tmp_path: Path) -> None:
    qfile = write_eq_questions(tmp_path, as_strings=True)
    # Question 3 is missing (an unparseable answer the benchmark dropped); 1 exact, 2 off by 1.
    expected = 10 * (10 + 10 - 0.7477 * S1 * 4) / 2
    res = tmp_path / "results" / "eq-bench" / "ours_eqbench_v2_results.json"
    _write_result(res, {"1": 0, "2": 1}, round(expected, 2), total=3)
    check = check_published(res, read_questions(qfile))
    assert check.recomputed.score == pytest.approx(expected)
    assert (check.recomputed.parseable, check.recomputed.total) == (2, 3)
    assert check.reproduced and not check.revise
    # Through the command: the questions file is found in the clone the result sits in.
    out = cli("bench", "eqbench", "score", res, "--format", "json")
    assert out.exit_code == 0, out.error
    (row,) = json.loads(out.stdout)
    assert row["reproduced"] is True and row["parseable"] == 2 and row["total"] == 3


def test_a_score_that_does_not_follow_is_reported_not_forced(tmp_path: Path) -> None:
    write_eq_questions(tmp_path)
    res = _write_result(tmp_path / "results" / "eq-bench" / "x.json", {"1": 0}, 55.5, total=3)
    out = cli("bench", "eqbench", "score", res)
    assert out.exit_code == 0, out.error
    assert "differs" in out.stdout and "100.00" in out.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"benchmark_score": 1}', "raw_results: missing or empty"),
    ],
)
def test_malformed_result_files_are_named_in_one_line(
    tmp_path: Path, content: str, message: str
) -> None:
    write_eq_questions(tmp_path)
    bad = tmp_path / "results" / "eq-bench" / "bad.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(content, encoding="utf-8")
    out = CliRunner().invoke(app, ["bench", "eqbench", "score", str(bad)])
    assert out.exit_code == 1  # named and skipped, as `score` skips a bad file
    line = " ".join(out.stderr.split())
    assert str(bad) in line and message in line and "(skipped)" in line


def test_a_malformed_questions_file_names_the_field(tmp_path: Path) -> None:
    qfile = write_eq_questions(tmp_path)
    data = json.loads(qfile.read_text())
    data["2"]["reference_answer_fullscale"]["emotion3_score"] = "lots"
    qfile.write_text(json.dumps(data))
    with pytest.raises(Exception, match=r"2\.reference_answer_fullscale: emotion3"):
        read_questions(qfile)


def test_a_file_mixing_both_answer_formats_reads_each_reply_in_its_own(tmp_path: Path) -> None:
    qfile = write_eq_questions(tmp_path)
    # Question 1 answered in the revise format (first pass 1 off, revision exact, its revised
    # score stored); questions 2 and 3 as bare ratings (no revision: none stored).
    raw = {
        "1": ratings_text("1", 1, revise=True, revised_offset=0),
        "2": ratings_text("2", 0),
        "3": ratings_text("3", 1),
    }
    stored = {q: {"first_pass_score": 1.0, "revised_score": None} for q in raw}
    stored["1"]["revised_score"] = 1.0
    first = 10 * (3 * 10 - 2 * 0.7477 * 4 * S1) / 3
    res = tmp_path / "results" / "eq-bench" / "mixed_eqbench_v2_results.json"
    res.parent.mkdir(parents=True)
    res.write_text(json.dumps({
        "benchmark_score": round(first, 2), "n_questions_total": 3,
        "raw_results": {"1": {"raw_inference": raw, "individual_scores": stored}},
    }))  # fmt: skip
    check = check_published(res, read_questions(qfile))
    # All three parse (a per-file format would read only question 1); 1 of 3 revisions is
    # under 95%: the first pass is the score.
    assert check.recomputed.first_parseable == 3 and check.recomputed.revised_parseable == 1
    assert check.recomputed.score == pytest.approx(first) and check.reproduced


def test_a_published_revised_score_above_the_first_pass_is_reproduced(tmp_path: Path) -> None:
    write_eq_questions(tmp_path)
    raw = {q: ratings_text(q, 1, revise=True, revised_offset=0) for q in EQ_REFERENCES}
    stored = {q: {"first_pass_score": 1.0, "revised_score": 1.0} for q in raw}
    res = tmp_path / "results" / "eq-bench" / "revised_eqbench_v2_results.json"
    res.parent.mkdir(parents=True)
    res.write_text(json.dumps({
        "benchmark_score": 100.0, "n_questions_total": 3,
        "raw_results": {"1": {"raw_inference": raw, "individual_scores": stored}},
    }))  # fmt: skip
    out = cli("bench", "eqbench", "score", res, "--format", "json")
    assert out.exit_code == 0, out.error
    (row,) = json.loads(out.stdout)
    assert row["recomputed"] == 100.0 and row["final_from"] == "revised"
    assert row["first_pass"] == pytest.approx(10 * (10 - 0.7477 * 4 * S1), abs=1e-4)
    assert row["reproduced"] is True


PUBLISHED = {
    "Qwen__Qwen-72B-Chat": (80.70, 171, False),
    "NousResearch__Llama-2-7b-chat-hf": (36.32, 171, True),
    "01-ai__Yi-6B-Chat": (61.79, 157, False),
}


def test_published_sample_files_reproduce_their_scores(eqbench_v2_sample: Path) -> None:
    files = sorted((eqbench_v2_sample / "results" / "eq-bench").glob("*.json"))
    out = cli("bench", "eqbench", "score", *files, "--format", "json")
    assert out.exit_code == 0, out.error
    rows = {Path(r["file"]).name.split("_eqbench")[0]: r for r in json.loads(out.stdout)}
    assert set(rows) == set(PUBLISHED)
    for name, (score, parsed, revise) in PUBLISHED.items():
        row = rows[name]
        assert row["published"] == score
        assert abs(row["recomputed"] - score) <= 0.02, (name, row)
        assert (row["parseable"], row["total"], row["revise_format"]) == (parsed, 171, revise)
        assert row["final_from"] == "first pass"  # the rule, checked: no revision is better
    assert rows["NousResearch__Llama-2-7b-chat-hf"]["revised"] is not None
    assert len(EQ_REFERENCES) == 3  # our fixture, not the benchmark's


def test_an_all_zero_answer_in_a_result_file_is_unparseable(tmp_path: Path) -> None:
    qfile = write_eq_questions(tmp_path)
    raw = {"1": ratings_text("1", 0), "2": ratings_text("2", 0), "3": ratings_text("3", -10)}
    assert set(raw["3"].split()) >= {"0"} and not any(c in "123456789" for c in raw["3"])
    res = tmp_path / "results" / "eq-bench" / "zeros_eqbench_v2_results.json"
    res.parent.mkdir(parents=True)
    res.write_text(json.dumps({
        "benchmark_score": 100.0, "n_questions_total": 3,
        "raw_results": {"1": {"raw_inference": raw, "individual_scores": {}}},
    }))  # fmt: skip
    check = check_published(res, read_questions(qfile))
    # Question 3's ratings are all zero: rejected, as the benchmark rejects them.
    assert check.recomputed.parseable == 2 and check.recomputed.score == 100.0
