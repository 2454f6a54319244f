"""Every module's ``__all__`` is honest: it names only what exists, and every public function
or class defined in the module is listed (httpx keeps its surface honest the same way)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil

import pytest

import empathos

# The verl adapter imports verl, which lives in its own environment (scripts/test-verl.sh):
# its modules are checked there, and skipped where verl is not installed. The Inspect task
# imports inspect-ai (the inspect extra, in the lock): skipped only where it is missing.
_FRAMEWORKS = {
    "empathos.integrations.verl": "verl",
    "empathos.integrations.inspect": "inspect_ai",
    "empathos.integrations.trl": "trl",
    "empathos.integrations.verifiers": "verifiers",  # its own environment (test-verifiers.sh)
}
_MISSING = tuple(
    package for package, module in _FRAMEWORKS.items() if importlib.util.find_spec(module) is None
)

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(
        empathos.__path__, prefix="empathos.", onerror=lambda name: None
    )
    if not info.name.endswith("__main__") and not info.name.startswith(_MISSING)
)


def test_every_area_is_walked() -> None:
    areas = {name.split(".")[1] for name in MODULES}
    assert {
        "epm",
        "rubric",
        "records",
        "llm",
        "sandbox",
        "run",
        "scoring",
        "report",
        "rl",
        "train",
        "validate",
        "distill",
        "cli",
    } <= areas


@pytest.mark.parametrize("name", MODULES)
def test_all_is_honest(name: str) -> None:
    mod = importlib.import_module(name)
    names = list(getattr(mod, "__all__", ()))
    assert len(names) == len(set(names)), f"{name}.__all__ repeats a name"
    exported = set(names)
    missing = sorted(n for n in exported if not hasattr(mod, n))
    assert missing == [], f"{name}.__all__ names what does not exist: {missing}"
    defined_here = {
        n
        for n, obj in vars(mod).items()
        if not n.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and getattr(obj, "__module__", None) == name
    }
    unlisted = sorted(defined_here - exported)
    assert unlisted == [], f"{name} defines public names missing from __all__: {unlisted}"
