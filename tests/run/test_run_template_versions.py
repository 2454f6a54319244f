"""The sandbox roles' template versions are part of a run's fingerprint: a resume after a
template changed is refused naming the templates instead of mixing versions in one run; a
run directory made before they were fingerprinted resumes while its templates are the same
(issue 33)."""

from __future__ import annotations

import json
from pathlib import Path

from run_helpers import empathos, scripted_roles, write_config


def _run(tmp_path: Path) -> tuple[Path, Path]:
    config = write_config(tmp_path / "run.yaml", roles=scripted_roles(),
                          cases="en-01-sourdough", max_turns=3, min_turns=1)  # fmt: skip
    out = tmp_path / "out"
    done = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return config, out


def _edit_manifest(out: Path, *, drop_templates: bool, judge_version: str | None) -> None:
    path = out / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if drop_templates:
        del data["fingerprint"]["templates"]
    for prompt in data["prompts"]:
        if judge_version is not None and prompt["role"] == "judge_mdep":
            prompt["version"] = judge_version
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_template_change_since_the_run_is_refused_by_name(tmp_path: Path) -> None:
    config, out = _run(tmp_path)
    data = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "templates" in data["fingerprint"]
    # the run as made with another judge template (its version and fingerprint then)
    data["fingerprint"]["templates"] = "0" * 16
    (out / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
    again = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert again.returncode == 2
    assert "was made with a different config (differs in: templates)" in again.stderr


def test_a_run_made_before_templates_were_fingerprinted(tmp_path: Path) -> None:
    config, out = _run(tmp_path)
    _edit_manifest(out, drop_templates=True, judge_version=None)
    same = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert same.returncode == 0, same.stderr  # same templates: it resumes
    assert "templates" in json.loads((out / "manifest.json").read_text())["fingerprint"]
    _edit_manifest(out, drop_templates=True, judge_version="0.0-old")
    other = empathos("run", "--config", config, "--out", out, cwd=tmp_path)
    assert other.returncode == 2 and "differs in: templates" in other.stderr
