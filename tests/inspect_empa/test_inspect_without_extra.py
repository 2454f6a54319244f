"""Without the ``inspect`` extra: the command and the package load without inspect-ai, and the
one command that needs it says how to install it (runs whether the extra is installed or
not: inspect-ai is hidden from a subprocess)."""

from __future__ import annotations

import subprocess
import sys

# In the subprocess, every import of inspect_ai fails, as when the package is not installed;
# the command line is loaded (asserting that nothing put the real package in), then run.
CODE = """
import sys
sys.modules["inspect_ai"] = None
import empathos.cli.main, empathos.integrations
assert sys.modules["inspect_ai"] is None
sys.argv = ["empathos", "import-inspect", "log.eval", "--out", "records"]
empathos.cli.main.main()
"""


def test_without_inspect_ai_the_cli_loads_and_import_inspect_names_the_extra() -> None:
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: reading Inspect logs needs inspect-ai: pip install 'empathos[inspect]'"
    )
