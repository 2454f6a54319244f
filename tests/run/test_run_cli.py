"""`empathos run` end to end on the scripted backend: run directory, manifest, resume, errors.

Every test runs the real CLI in a subprocess over real files; the roles are real model
clients over the scripted backend (configured in the YAML file, handlers in run_handlers.py).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from run_helpers import empathos, index_rows, manifest, scripted_roles, write_config

from empathos.records import read_record
from empathos.scenarios import builtin_path, load_builtin

THREE = ("en-01-sourdough__t0", "en-02-night-shift__t0", "en-03-lease__t0")


def test_run_writes_records_index_and_manifest(tmp_path: Path, scripted_config: Path) -> None:
    out = tmp_path / "out"
    done = empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    rows = index_rows(out)
    assert set(rows) == set(THREE)
    assert {r["status"] for r in rows.values()} == {"done"}
    for dialogue_id, row in rows.items():
        record = read_record(out / row["file"])
        assert record.scenario_id == dialogue_id.split("__")[0]
        assert record.total_turns == row["turns"] == 3  # the scripted judge never ends early
        assert record.metadata["dialogue_id"] == dialogue_id
        assert record.model == "scripted-model_under_test"
    assert "EPM-Q leaderboard" in done.stdout and "scripted-model_under_test" in done.stdout
    m = manifest(out)
    assert m["schema_version"] == 1
    assert m["config"]["max_turns"] == 3 and m["config"]["trials"] == 1
    hashes = {s.id: s.scenario_hash() for s in load_builtin().scenarios}
    assert {s["id"]: s["hash"] for s in m["scenarios"]} == {i[:-4]: hashes[i[:-4]] for i in THREE}
    assert {"python", "empathos", "pydantic", "openai"} <= set(m["versions"])
    assert m["git_commit"] is None or re.fullmatch(r"[0-9a-f]{40}", m["git_commit"])
    prompt_roles = {p["role"] for p in m["prompts"]}
    assert prompt_roles == {"user", "director", "judge_iedr", "judge_mdep", "model_under_test"}
    assert all(p["version"] for p in m["prompts"])
    session = m["sessions"][-1]
    assert (session["status"], session["planned"], session["ran"]) == ("completed", 3, 3)


def test_rerun_skips_finished_dialogues_and_runs_the_missing(
    tmp_path: Path, scripted_config: Path
) -> None:
    out = tmp_path / "out"
    first = empathos(
        "run", "--config", scripted_config, "--out", out, "--cases", "en-01-sourdough", cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    kept = out / "records" / f"{THREE[0]}.json"
    before = (kept.stat().st_mtime_ns, kept.read_bytes())
    # A crash mid-write leaves at most a temporary file: it must be cleaned, never read.
    (out / "records" / f".{THREE[1]}.json.abc.tmp").write_text("{half", encoding="utf-8")
    second = empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "1 of 3 dialogue(s) already finished; running 2" in second.stderr
    assert (kept.stat().st_mtime_ns, kept.read_bytes()) == before
    assert set(index_rows(out)) == set(THREE)
    assert not list((out / "records").glob(".*.tmp"))
    sessions = manifest(out)["sessions"]
    assert [(s["planned"], s["skipped"], s["ran"]) for s in sessions] == [(1, 0, 1), (3, 1, 2)]


def test_a_record_without_its_index_row_is_indexed_not_redone(
    tmp_path: Path, scripted_config: Path
) -> None:
    out = tmp_path / "out"
    assert empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path).returncode == 0
    (out / "index.sqlite").unlink()  # as if the process died between the file and its row
    again = empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "3 of 3 dialogue(s) already finished; running 0" in again.stderr
    assert set(index_rows(out)) == set(THREE)


def test_errors_are_recorded_apart_retried_by_default_and_kept_on_request(
    tmp_path: Path,
) -> None:
    config = write_config(
        tmp_path / "run.yaml",
        roles=scripted_roles(model_under_test="fail_on_sourdough"),
        cases="en-01-sourdough,en-02-night-shift",
        max_turns=2,
    )
    out = tmp_path / "out"
    done = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert done.returncode == 1
    rows = index_rows(out)
    assert rows["en-01-sourdough__t0"]["status"] == "error"
    assert "scripted outage" in rows["en-01-sourdough__t0"]["reason"]
    assert rows["en-02-night-shift__t0"]["status"] == "done"
    record = read_record(out / rows["en-01-sourdough__t0"]["file"])
    assert record.termination.kind.value == "error" and not record.success
    assert "1 dialogue(s) ended as errors" in done.stderr
    assert "en-01-sourdough__t0: " in done.stderr
    # The leaderboard scores the one good dialogue; the error is counted apart, not as a 0.
    score = empathos("score", out / "records", "--format", "json", cwd=tmp_path)
    (row,) = json.loads(score.stdout)
    assert row["n"] == 1 and row["extra"]["errors"] == 1
    retried = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert "1 of 2 dialogue(s) already finished; running 1" in retried.stderr
    kept = empathos("run", "--config", config, "--out", out, "--no-retry-errors", cwd=tmp_path)
    assert "2 of 2 dialogue(s) already finished; running 0" in kept.stderr
    assert kept.returncode == 1  # the selection still holds an error


def test_a_different_config_refuses_to_resume_and_force_starts_over(
    tmp_path: Path, scripted_config: Path
) -> None:
    out = tmp_path / "out"
    assert empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path).returncode == 0
    refused = empathos(
        "run", "--config", scripted_config, "--out", out, "--max-turns", "2", cwd=tmp_path
    )
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "differs in: max_turns" in lines[0] and "--force" in lines[0]
    assert {r["turns"] for r in index_rows(out).values()} == {3}  # untouched
    forced = empathos(
        "run",
        "--config",
        scripted_config,
        "--out",
        out,
        "--max-turns",
        "2",
        "--force",
        cwd=tmp_path,
    )
    assert forced.returncode == 0, forced.stderr
    assert {r["turns"] for r in index_rows(out).values()} == {2}
    assert len(manifest(out)["sessions"]) == 1


def test_a_foreign_directory_is_never_used(tmp_path: Path, scripted_config: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    done = empathos("run", "--config", scripted_config, "--out", out, "--force", cwd=tmp_path)
    assert done.returncode == 2 and "not a run directory" in done.stderr
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_invalid_scenario_is_reported_and_skipped(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    shutil.copy(builtin_path() / "en" / "en-02-night-shift.yaml", scenarios)
    bad = scenarios / "broken.yaml"
    bad.write_text("schema_version: 1\nid: broken\npersona: {}\n", encoding="utf-8")
    config = write_config(
        tmp_path / "run.yaml", roles=scripted_roles(), scenarios=str(scenarios), max_turns=2
    )
    out = tmp_path / "out"
    done = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert done.returncode == 1
    assert f"skipped invalid scenario: {bad}" in done.stderr
    assert set(index_rows(out)) == {"en-02-night-shift__t0"}
    assert any(str(bad) in line for line in manifest(out)["skipped_scenarios"])


@pytest.mark.parametrize("select", [{"cases": "en-02-night-shift"}, {"limit": 1}])
def test_an_unselected_invalid_scenario_leaves_the_exit_code_alone(
    tmp_path: Path, select: dict[str, object]
) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    shutil.copy(builtin_path() / "en" / "en-02-night-shift.yaml", scenarios)
    bad = scenarios / "broken.yaml"
    bad.write_text("schema_version: 1\nid: broken\npersona: {}\n", encoding="utf-8")
    config = write_config(
        tmp_path / "run.yaml",
        roles=scripted_roles(),
        scenarios=str(scenarios),
        max_turns=2,
        **select,
    )
    done = empathos("run", "--config", config, "--out", tmp_path / "out", cwd=tmp_path)
    assert f"skipped invalid scenario: {bad}" in done.stderr  # still reported
    assert done.returncode == 0, done.stderr
    assert set(index_rows(tmp_path / "out")) == {"en-02-night-shift__t0"}


def test_bad_config_is_one_line_without_traceback(tmp_path: Path) -> None:
    roles = scripted_roles()
    roles["judge"]["temprature"] = 0.1
    config = write_config(tmp_path / "run.yaml", roles=roles)
    done = empathos("run", "--config", config, "--out", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: {config}: roles.judge.temprature: unknown key 'temprature' "
        "(did you mean 'temperature'?)"
    )
    assert not (tmp_path / "out").exists()


def test_bad_handler_fails_at_start_naming_the_role(tmp_path: Path) -> None:
    roles = scripted_roles()
    roles["director"]["handler"] = "no_such_module_xyz:reply"
    config = write_config(tmp_path / "run.yaml", roles=roles, cases="en-01-sourdough")
    done = empathos("run", "--config", config, "--out", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 2
    assert "roles.director.handler" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()  # nothing written before the check


def test_a_role_with_cache_on_reuses_its_replies_across_runs(tmp_path: Path) -> None:
    roles = scripted_roles()
    roles["judge"]["cache"] = True
    cache = tmp_path / "shared-cache.sqlite"
    config = write_config(
        tmp_path / "run.yaml",
        roles=roles,
        cases="en-03-lease",
        max_turns=2,
        cache_path=str(cache),
    )
    for out in ("first", "second"):
        done = empathos("run", "--config", config, "--out", tmp_path / out, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert cache.is_file()
    hits = {}
    for out in ("first", "second"):
        record = read_record(tmp_path / out / "records" / "en-03-lease__t0.json")
        for call in record.model_calls:
            hits.setdefault((out, call.role), set()).add(call.cache_hit)
    assert hits[("first", "judge")] == {False}
    assert hits[("second", "judge")] == {True}  # same requests: answered from the cache
    assert hits[("second", "tested")] == {False}  # cache is per role: off for the others


def test_trials_make_one_dialogue_per_seed(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "run.yaml", roles=scripted_roles(), cases="en-03-lease", max_turns=2, trials=3
    )
    out = tmp_path / "out"
    assert empathos("run", "--config", config, "--out", out, cwd=tmp_path).returncode == 0
    assert set(index_rows(out)) == {f"en-03-lease__t{k}" for k in range(3)}


def test_official_cases_of_the_published_layout(tmp_path: Path, empa_sample: Path) -> None:
    # published cases store no P_0: the judge's IEDR gives it (auto_reply's zeros would be a
    # degenerate start, refused)
    roles = scripted_roles(judge="judge")
    config = write_config(tmp_path / "run.yaml", roles=roles, max_turns=2)
    out = tmp_path / "out"
    args = ["--scenarios", empa_sample, "--cases", "official", "--limit", "2"]
    done = empathos("run", "--config", config, "--out", out, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = (empa_sample / "official_cases.txt").read_text(encoding="utf-8").split()
    ids = {r["scenario_id"] for r in index_rows(out).values()}
    assert len(ids) == 2 and ids <= set(listed)
    assert {s["language"] for s in manifest(out)["scenarios"]} == {"zh"}


def test_a_changed_scenario_is_refused_on_resume(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    card = scenarios / "en-02-night-shift.yaml"
    shutil.copy(builtin_path() / "en" / "en-02-night-shift.yaml", card)
    config = write_config(
        tmp_path / "run.yaml", roles=scripted_roles(), scenarios=str(scenarios), max_turns=2
    )
    out = tmp_path / "out"
    assert empathos("run", "--config", config, "--out", out, cwd=tmp_path).returncode == 0
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace("topic: ", "topic: Hello. ", 1), encoding="utf-8")
    again = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert again.returncode == 2
    assert "scenario content changed" in again.stderr and "en-02-night-shift__t0" in again.stderr


def test_system_prompt_choice_is_recorded_and_a_bad_file_refused(tmp_path: Path) -> None:
    prompt = tmp_path / "companion.txt"
    prompt.write_text("You are a calm friend. Keep replies short.\n", encoding="utf-8")
    config = write_config(
        tmp_path / "run.yaml",
        roles=scripted_roles(),
        cases="en-03-lease",
        max_turns=2,
        system_prompt=str(prompt),
    )
    out = tmp_path / "out"
    assert empathos("run", "--config", config, "--out", out, cwd=tmp_path).returncode == 0
    (used,) = [p for p in manifest(out)["prompts"] if p["role"] == "model_under_test"]
    assert used["id"] == "custom:companion.txt"
    record = read_record(out / "records" / "en-03-lease__t0.json")
    assert record.metadata["system_prompt"]["id"] == "custom:companion.txt"
    missing = write_config(
        tmp_path / "bad.yaml",
        roles=scripted_roles(),
        system_prompt=str(tmp_path / "nope.txt"),
    )
    refused = empathos("run", "--config", missing, "--out", tmp_path / "o2", cwd=tmp_path)
    assert refused.returncode == 2
    assert "nope.txt" in refused.stderr and "system_prompt" in refused.stderr
    assert not (tmp_path / "o2").exists()


def test_an_unreadable_scenario_source_names_the_path_not_the_cases(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for source, problem in ((tmp_path / "missing", "no such file"), (empty, "no scenario")):
        out = tmp_path / "out"
        done = empathos("run", "--scenarios", source, "--out", out, cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip().startswith(f"error: {source}: {problem}"), done.stderr
        assert "--cases" not in done.stderr and not out.exists()


def test_an_uncreatable_out_is_one_line(tmp_path: Path, scripted_config: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    out = blocker / "run"  # a folder below a file cannot be created
    done = empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        f"error: {out}: --out: cannot create the run directory (Not a directory)"
    )


def test_a_damaged_index_is_one_line_and_deleting_it_resumes(
    tmp_path: Path, scripted_config: Path
) -> None:
    out = tmp_path / "out"
    assert empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path).returncode == 0
    (out / "index.sqlite").write_bytes(b"not a database")
    done = empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().startswith(f"error: {out / 'index.sqlite'}: damaged run index")
    (out / "index.sqlite").unlink()
    again = empathos("run", "--config", scripted_config, "--out", out, cwd=tmp_path)
    assert again.returncode == 0 and "3 of 3 dialogue(s) already finished" in again.stderr
