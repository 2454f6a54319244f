"""`empathos rejudge` off its main path (issue 33): a judge named without an endpoint, an
--out that is not a re-judging of the same run, damaged records, an unreachable judge, Ctrl-C
and the progress bar. Each either refuses in one line or says what it did; none loses data."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path

import yaml
from run_helpers import HANDLERS, empathos, manifest, spawn, wait_for
from test_run_rejudge import cli, original  # noqa: F401 (the module's run, as a fixture)

from empathos.llm.roles import RoleEndpoint
from empathos.run.rejudge_run import rejudge_judge


def _judge_file(tmp_path: Path, **judge: object) -> Path:
    path = tmp_path / "judge.yaml"
    path.write_text(yaml.safe_dump({"judge": judge}), encoding="utf-8")
    return path


def test_a_judge_named_without_an_endpoint_is_asked_at_the_runs_judge_endpoint() -> None:
    base = RoleEndpoint(
        base_url="http://127.0.0.1:8000/v1", model="judge-a", api_key_env="KEY_A",
        temperature=0.0, max_concurrency=3,
        price={"input": 1.0, "output": 2.0},
    )  # fmt: skip
    named = RoleEndpoint(kind="offline", model="judge-c", max_tokens=12)
    judge = rejudge_judge(named, base)
    assert (judge.kind, judge.base_url, judge.model) == ("openai", base.base_url, "judge-c")
    assert (judge.api_key_env, judge.temperature, judge.max_concurrency) == ("KEY_A", 0.0, 3)
    assert judge.price is None  # judge-a's price is not judge-c's
    assert rejudge_judge(None, base) == base


def test_a_judge_named_without_an_endpoint_is_refused_when_the_run_has_none(
    original: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    done = empathos("rejudge", original, "--out", tmp_path / "new", "--judge-model", "judge-c",
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: --judge-model: judge 'judge-c' names no endpoint")
    assert "--judge-base-url" in line and not (tmp_path / "new").exists()


def test_a_judge_whose_key_is_unset_leaves_no_out_folder(
    original: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Issue 45: --out was created (lock, index, manifest) before the judge's client failed."""
    judge = _judge_file(tmp_path, model="judge-c", base_url="http://127.0.0.1:9/v1",
                        api_key_env="EMPATHOS_47C_UNSET_KEY")  # fmt: skip
    done = empathos("rejudge", original, "--out", tmp_path / "new", "--config", judge,
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "EMPATHOS_47C_UNSET_KEY (the API key) is not set" in line
    assert not (tmp_path / "new").exists()


def test_force_never_starts_over_a_directory_that_is_not_a_rejudging_of_the_run(
    original: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    before = sorted(p.name for p in (copy / "records").iterdir())
    done = empathos("rejudge", original, "--out", copy, "--force", cwd=tmp_path)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "is a run directory (made by empathos run), not a re-judging" in line
    assert "--force" not in line
    assert sorted(p.name for p in (copy / "records").iterdir()) == before
    # a re-judging of another run (the copy) is not started over either
    other = tmp_path / "of-copy"
    assert cli("rejudge", copy, "--out", other, "--keep-p0").exit_code == 0
    done = empathos("rejudge", original, "--out", other, "--force", cwd=tmp_path)
    assert done.returncode == 2 and "holds a re-judging of another run" in done.stderr
    assert len(list((other / "records").iterdir())) == 2


def _damaged_run(original: Path, tmp_path: Path) -> Path:  # noqa: F811
    run = tmp_path / "damaged"
    shutil.copytree(original, run)
    turns = run / "records" / "en-01-sourdough__t0.json"
    data = json.loads(turns.read_text(encoding="utf-8"))
    data["turns"] = []
    turns.write_text(json.dumps(data), encoding="utf-8")
    evals = run / "records" / "en-02-night-shift__t0.json"
    data = json.loads(evals.read_text(encoding="utf-8"))
    data["evaluations"][0]["turn"] = 3  # K = 2: no evaluation falls at turn 3
    evals.write_text(json.dumps(data), encoding="utf-8")
    return run


def test_damaged_records_are_named_and_skipped_never_rejudged(
    original: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = _damaged_run(original, tmp_path)
    shutil.copy(original / "records" / "en-01-sourdough__t0.json", tmp_path / "intact.json")
    (run / "records" / "zz-intact__t0.json").write_bytes((tmp_path / "intact.json").read_bytes())
    done = empathos("rejudge", run, "--out", tmp_path / "new", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert (
        f"warning: skipped {run}/records/en-01-sourdough__t0.json: damaged, not re-judged: "
        "holds 0 of the 7 turn(s) it ran (turns missing)"
    ) in lines
    assert any(
        line.startswith(f"warning: skipped {run}/records/en-02-night-shift__t0.json: damaged")
        and "do not match its 7 turn(s)" in line
        for line in lines
    )
    assert [p.name for p in (tmp_path / "new" / "records").iterdir()] == ["zz-intact__t0.json"]


def test_an_unreachable_judge_is_reported_as_run_reports_it(
    original: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    judge = _judge_file(tmp_path, model="judge-c", base_url="http://127.0.0.1:9/v1",
                        retry={"max_attempts": 1})  # fmt: skip
    done = empathos("rejudge", original, "--out", tmp_path / "new", "--config", judge,
                    "--keep-p0", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 3
    assert "connection refused by 127.0.0.1:9" in done.stderr
    assert "rejudge FAILED: every dialogue ended as an error (2 of 2)" in done.stderr
    assert "run the same command again" in done.stderr
    assert "agreement" not in done.stdout  # no all-n/a agreement block


def test_the_progress_bar_counts_the_turns_it_rejudged(
    original: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    done = empathos("rejudge", original, "--out", tmp_path / "new", "--keep-p0", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "turns 14 · tokens" in done.stderr  # two dialogues of 7 turns


def test_ctrl_c_says_what_was_kept_and_how_to_resume(
    original: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    judge = _judge_file(tmp_path, kind="scripted", model="slow-judge",
                        handler=f"{HANDLERS}:judge_slow_but_sourdough")  # fmt: skip
    out = tmp_path / "new"
    args = ["rejudge", original, "--out", out, "--config", judge, "--keep-p0",
            "--concurrency", "1"]  # fmt: skip
    proc = spawn(*args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (out / "records" / "en-01-sourdough__t0.json").exists(), proc)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    kept = len(list((out / "records").iterdir()))
    assert (
        f"interrupted (Ctrl-C): {kept} dialogue(s) re-judged in this session are kept in {out}; "
        "run the same command to resume"
    ) in stderr
    assert "Traceback" not in stderr
    assert manifest(out)["sessions"][-1]["status"] == "interrupted"
