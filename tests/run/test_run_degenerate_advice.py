"""A run whose every dialogue is refused at its start (the judge's IEDR gives a degenerate
P_0) gets advice of its own, not the generic "check each role's base_url" (issue 33)."""

from __future__ import annotations

from pathlib import Path

import yaml
from run_helpers import empathos, scripted_roles, write_config

from empathos.scenarios import load_builtin

CASES = ("en-01-sourdough", "en-02-night-shift")


def test_every_dialogue_refused_as_degenerate_gets_its_own_advice(tmp_path: Path) -> None:
    scen = tmp_path / "scenarios"
    scen.mkdir()
    for s in load_builtin().scenarios:
        if s.id in CASES:  # no stored P_0: the judge's IEDR gives it, all level 0 here
            data = s.model_dump(mode="json", exclude={"source"}) | {"p0": None, "iedr": None}
            (scen / f"{s.id}.yaml").write_text(yaml.safe_dump(data, allow_unicode=True))
    config = write_config(tmp_path / "run.yaml", roles=scripted_roles(), scenarios=str(scen),
                          cases=",".join(CASES), max_turns=3, min_turns=1)  # fmt: skip
    done = empathos("run", "--config", config, "--out", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "run FAILED: every dialogue ended as an error (2 of 2)" in done.stderr
    assert "every dialogue was refused at its start" in done.stderr
    assert "degenerate P_0" in done.stderr and "--roles-model/--roles-base-url" in done.stderr
    assert "check each role's base_url" not in done.stderr  # the generic advice
    assert "run the same command again" not in done.stderr  # the same judge refuses again
