"""`empathos verl prepare` without pyarrow (the main environment, where verl cannot go)
points at verl's own environment, never at `pip install 'empathos[verl]'`, which
docs/verl.md forbids (issue 33)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# pyarrow made unimportable (None in sys.modules: Python's own "import blocked"), then the CLI.
_RUN = (
    "import sys; sys.modules['pyarrow'] = None; sys.argv = ['empathos'] + sys.argv[1:]; "
    "from empathos.cli.main import main; main()"
)


def test_prepare_without_pyarrow_points_at_install_verl(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, "verl", "prepare", "builtin", "--out", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: pyarrow: writing parquet needs pyarrow")
    assert "bash scripts/install-verl.sh" in line and ".venv-verl/bin/empathos" in line
    assert "pip install" not in line
