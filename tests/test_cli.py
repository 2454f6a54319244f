import subprocess
import sys

from empathos import __version__


def test_version_command_prints_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "empathos", "version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == __version__


def test_unknown_command_fails_without_traceback() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "empathos", "no-such-command"], capture_output=True, text=True
    )
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
