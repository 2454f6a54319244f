"""`empathos rejudge`: every stored turn of a run re-rated by another judge, the EPM replayed.

A run of two dialogues (scripted roles; a judge whose ratings follow its whole prompt, so
that any difference in what it is shown changes them), on scenarios without a stored P_0 (so
the judge's IEDR gives it). Re-judged with the run's own judge, every trajectory comes back
exactly; with a judge of known behaviour, the trajectory its ratings imply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import Result
from run_helpers import HANDLERS, empathos, manifest, scripted_roles, write_config
from typer.testing import CliRunner

from empathos.cli.main import app
from empathos.epm import TerminationKind, check_termination, init_state, step
from empathos.records import DialogueRecord, read_record
from empathos.rubric import EMPATHY_RUBRIC, action_vector, p0_from_iedr
from empathos.scenarios import load_builtin

CASES = ("en-01-sourdough", "en-02-night-shift")


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run to re-judge (K = 2, up to 7 turns)."""
    tmp = tmp_path_factory.mktemp("rejudge")
    scen = tmp / "scenarios"
    scen.mkdir()
    for s in load_builtin().scenarios:
        if s.id in CASES:  # no stored P_0: the judge's IEDR rating gives it
            data = s.model_dump(mode="json", exclude={"source"}) | {"p0": None, "iedr": None}
            (scen / f"{s.id}.yaml").write_text(yaml.safe_dump(data, allow_unicode=True))
    config = write_config(
        tmp / "run.yaml", roles=scripted_roles(judge="judge_by_prompt"), scenarios=str(scen),
        cases=",".join(CASES), max_turns=7, min_turns=3, eval_every=2,
    )  # fmt: skip
    done = empathos("run", "--config", config, "--out", tmp / "run", cwd=tmp)
    assert done.returncode in (0, 1), done.stderr
    return tmp / "run"


def cli(*args: str | Path) -> Result:
    """The CLI in this process (a subprocess per command would cost seconds of start-up)."""
    return CliRunner().invoke(app, [str(a) for a in args])


def _records(run: Path) -> dict[str, DialogueRecord]:
    return {p.stem: read_record(p) for p in sorted((run / "records").glob("*.json"))}


def test_rejudging_with_the_original_judge_reproduces_every_trajectory(
    original: Path, tmp_path: Path
) -> None:
    done = cli("rejudge", original, "--out", tmp_path / "same")
    assert done.exit_code == 0, done.output
    old, new = _records(original), _records(tmp_path / "same")
    assert set(new) == set(old) == {f"{c}__t0" for c in CASES}
    for key, rec in new.items():
        was = old[key]
        assert len(was.evaluations) >= 2  # a trajectory worth reproducing
        assert rec.iedr == was.iedr and rec.initial_state == was.initial_state
        assert rec.evaluations == was.evaluations  # ratings and every EPM state
        assert (rec.termination, rec.total_turns, rec.success) == (
            was.termination, was.total_turns, was.success)  # fmt: skip
        assert rec.turns == was.turns and rec.director == was.director
        assert rec.rejudged is not None and rec.rejudged.judge == "scripted-judge"
        assert rec.rejudged.original_judge == "scripted-judge"
        assert rec.rejudged.p0 == "rerated" and rec.rejudged.original_termination == was.termination
        assert {c.role for c in rec.model_calls} == {"judge"}  # this re-judging's calls
    assert "same level: 100% of the ratings" in done.stdout
    assert "same termination (kind and turn): 2 of 2" in done.stdout


def _implied(was: DialogueRecord, p0: tuple[float, ...], levels: dict[str, int]) -> list:
    """The EPM trajectory a judge giving ``levels`` at every evaluation implies, on the
    original dialogue's evaluation turns."""
    cfg = was.epm_config
    state = init_state(p0, cfg)
    points, term = [], None
    for t in range(1, len(was.turns) + 1):
        if t % cfg.eval_every and t < cfg.max_turns:
            continue
        state = step(state, action_vector(levels, EMPATHY_RUBRIC).tolist(), cfg, turn=t)
        points.append(state.last)
        term = check_termination(state, cfg)
        if term is not None:
            break
    return [points, term]


def test_a_judge_of_known_behaviour_gives_the_trajectory_its_ratings_imply(
    original: Path, tmp_path: Path
) -> None:
    judges = tmp_path / "judges.yaml"
    judges.write_text(
        yaml.safe_dump({"judge": {"kind": "scripted", "handler": f"{HANDLERS}:judge_deep"}})
    )
    out = tmp_path / "deep"
    done = cli("rejudge", original, "--out", out, "--config", judges)
    assert done.exit_code == 0, done.output
    deep = {k: 2 * k.endswith("Prog") for k in (i.key for i in EMPATHY_RUBRIC.mdep)}
    p0 = tuple(p0_from_iedr({i.key: 2 for i in EMPATHY_RUBRIC.iedr}, EMPATHY_RUBRIC).tolist())
    old = _records(original)
    for key, rec in _records(out).items():
        was = old[key]
        assert rec.turns == was.turns  # the dialogue is the original
        assert p0 == rec.iedr.P0 and all(r.level == 2 for r in rec.iedr.ratings.values())
        first = rec.evaluations[0].state.P
        assert first == pytest.approx(tuple(x + 3.0 for x in p0))  # v = (+3, +3, +3)
        points, term = _implied(was, p0, deep)
        assert [e.state for e in rec.evaluations] == points
        if term is None:  # no stop rule within the turns the dialogue ran
            assert rec.termination.kind is TerminationKind.TIMEOUT
        else:
            assert (rec.termination.kind, rec.termination.turn) == (term.kind, term.turn)
        assert rec.rejudged is not None and rec.rejudged.judge == "scripted:judge_deep"
        assert rec.rejudged.original_judge == "scripted-judge"
    assert manifest(out)["rejudge"]["judge"] == "scripted:judge_deep"
    # score, compare and report read them; the re-judged row never merges with the original
    score = cli("score", original, out, "--format", "json")
    assert score.exit_code == 0, score.output
    rows = {r["model"]: r for r in json.loads(score.stdout)}
    assert set(rows) == {
        "scripted-model_under_test", "scripted-model_under_test (re-judged: scripted:judge_deep)"
    }  # fmt: skip
    assert all(r["n"] == 2 for r in rows.values())
    compare = cli("compare", original, out)
    assert compare.exit_code == 0, compare.output
    assert "(re-judged: scripted:judge_deep)" in compare.output
    report = cli("report", original, out, "--out", tmp_path / "r", "--no-figures")
    assert report.exit_code == 0, report.output
    assert "(re-judged: scripted:judge_deep)" in (tmp_path / "r" / "index.html").read_text()


def test_rejudge_resumes_and_keeps_p0_on_request(original: Path, tmp_path: Path) -> None:
    out = tmp_path / "kept"
    first = cli("rejudge", original, "--out", out, "--keep-p0")
    assert first.exit_code == 0, first.output
    old, new = _records(original), _records(out)
    assert all(new[k].iedr == old[k].iedr for k in new)  # no IEDR call
    assert all(r.rejudged and r.rejudged.p0 == "kept" for r in new.values())
    assert all(c.role == "judge" and c.template_id != "judge_iedr.en"
               for r in new.values() for c in r.model_calls)  # fmt: skip
    gone = sorted(new)[0]
    (out / "records" / f"{gone}.json").unlink()
    again = cli("rejudge", original, "--out", out, "--keep-p0")
    assert again.exit_code == 0, again.output
    sessions = manifest(out)["sessions"]
    assert [(s["planned"], s["skipped"], s["ran"]) for s in sessions] == [(2, 0, 2), (2, 1, 1)]
    back = _records(out)[gone]
    assert (back.evaluations, back.termination) == (new[gone].evaluations, new[gone].termination)
    other = empathos("rejudge", original, "--out", out, cwd=tmp_path)  # P_0 re-rated now
    assert other.returncode == 2 and "differs in: p0" in other.stderr


def test_rejudge_errors_are_one_line(tmp_path: Path) -> None:
    done = empathos("rejudge", tmp_path, "--out", tmp_path / "x", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {tmp_path}: RUN: is not a run directory (no manifest.json)"
    ]
