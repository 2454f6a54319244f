"""Check requirements.lock against pyproject.toml (and, with --installed, the environment).

    python scripts/check_lock.py              every requirement of pyproject.toml (dependencies,
                                              the locked extras, the build backend and
                                              [tool.empathos.lock].also) is pinned in the lock
                                              with a version its specifier allows
    python scripts/check_lock.py --installed  also: every pin is installed at its version, every
                                              installed requirement, direct or indirect, is
                                              satisfied (pip check along the dependency graph,
                                              extras included) and no pin is needed by nothing
    python scripts/check_lock.py --print-also / --print-build / --print-extras
                                              what scripts/lock.sh installs

Exit 1 with one line per problem when the lock has drifted: regenerate it with
``bash scripts/lock.sh``. Only the standard library is needed for --print-*; the checks use
``packaging`` (installed with the project).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
LOCK = ROOT / "requirements.lock"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)$")


def canonical(name: str) -> str:
    """The PEP 503 normalised name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project() -> dict[str, Any]:
    with PYPROJECT.open("rb") as fh:
        return tomllib.load(fh)


def lock_settings(data: dict[str, Any]) -> dict[str, list[str]]:
    settings = data.get("tool", {}).get("empathos", {}).get("lock", {})
    return {"extras": list(settings.get("extras", [])), "also": list(settings.get("also", []))}


def roots(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(requirement, where it is declared) for everything the lock must pin."""
    settings = lock_settings(data)
    out = [(r, "dependencies") for r in data["project"]["dependencies"]]
    optional = data["project"].get("optional-dependencies", {})
    for extra in settings["extras"]:
        out += [(r, f"optional-dependencies.{extra}") for r in optional[extra]]
    out += [(r, "build-system.requires") for r in data["build-system"]["requires"]]
    out += [(r, "tool.empathos.lock.also") for r in settings["also"]]
    return out


def read_lock(problems: list[str]) -> dict[str, str]:
    pins: dict[str, str] = {}
    if not LOCK.is_file():
        problems.append(f"{LOCK.name}: missing")
        return pins
    for number, raw in enumerate(LOCK.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PIN.match(line)
        if match is None:
            problems.append(f"{LOCK.name}:{number}: not an exact 'name==version' pin: {line}")
            continue
        pins[canonical(match.group(1))] = match.group(2)
    return pins


def check_declared(data: dict[str, Any], pins: dict[str, str], problems: list[str]) -> None:
    """Every declared requirement is pinned, at a version its specifier allows."""
    from packaging.requirements import Requirement

    for text, where in roots(data):
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonical(req.name)
        if name not in pins:
            problems.append(f"{where}: {text}: not pinned in {LOCK.name}")
        elif not req.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{where}: {text}: {LOCK.name} pins {name}=={pins[name]}")


def check_installed(data: dict[str, Any], pins: dict[str, str], problems: list[str]) -> None:
    """The environment holds the lock exactly and satisfies the whole dependency graph."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.version import Version

    installed = {canonical(d.metadata["Name"]): d for d in metadata.distributions()}
    for name, version in sorted(pins.items()):
        dist = installed.get(name)
        if dist is None:
            problems.append(f"{name}=={version}: locked but not installed")
        elif Version(dist.version).public != Version(version).public:
            problems.append(f"{name}=={version}: locked, but {dist.version} is installed")
    # packages whose own requirements are not installed on purpose (data-only use)
    data_only = {canonical(Requirement(r).name) for r in lock_settings(data)["also"]}
    reached: set[str] = set()
    seen: set[tuple[str, str]] = set()
    todo = [(Requirement(text), where) for text, where in roots(data)]
    while todo:
        req, parent = todo.pop()
        name = canonical(req.name)
        dist = installed.get(name)
        if dist is None:
            problems.append(f"{req} (required by {parent}): not installed, not in {LOCK.name}")
            continue
        reached.add(name)
        if not req.specifier.contains(Version(dist.version).public, prereleases=True):
            problems.append(f"{req} (required by {parent}): {name} {dist.version} installed")
        if name in data_only:
            continue
        for extra in ("", *sorted(req.extras)):
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            for text in dist.requires or []:
                sub = Requirement(text)
                if sub.marker is None or sub.marker.evaluate({"extra": extra}):
                    todo.append((sub, f"{name}{f'[{extra}]' if extra else ''}"))
    for name in sorted((set(pins) & set(installed)) - reached):
        problems.append(f"{name}=={pins[name]}: locked but required by nothing (regenerate)")


def main(argv: list[str]) -> int:
    data = project()
    settings = lock_settings(data)
    printers = {
        "--print-also": settings["also"],
        "--print-extras": [",".join(settings["extras"])],
        "--print-build": list(data["build-system"]["requires"]),
    }
    if argv and argv[0] in printers:
        print("\n".join(printers[argv[0]]))
        return 0
    if argv not in ([], ["--installed"]):
        print(__doc__, file=sys.stderr)
        return 2
    problems: list[str] = []
    pins = read_lock(problems)
    if pins:
        check_declared(data, pins, problems)
        if argv == ["--installed"]:
            check_installed(data, pins, problems)
    for problem in problems:
        print(f"lock drift: {problem}", file=sys.stderr)
    if problems:
        print("regenerate the lock with: bash scripts/lock.sh", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
