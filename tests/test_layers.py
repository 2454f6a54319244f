"""Imports follow the package layers of docs/layers.toml: downward only, never sideways or up.

The checks live in scripts/layers.py (also a command); each planted import below proves that
one kind of check is not vacuous.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import grimp
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "layers.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("empathos_layers_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


layers_script = _load_script()


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return layers_script.build_graph()


@pytest.fixture(scope="module")
def layers() -> object:
    return layers_script.load_layers()


def test_no_import_breaks_the_layers(graph: grimp.ImportGraph, layers: object) -> None:
    assert len(graph.modules) > 50  # the package was found
    found = layers_script.violations(graph, layers)
    assert not found, "imports that break docs/layers.toml:\n" + "\n".join(found)


def _violations_with(
    graph: grimp.ImportGraph, layers: object, importer: str, imported: str
) -> list[str]:
    """The violations with one import planted in the graph (taken out again afterwards)."""
    new_modules = {importer, imported} - set(graph.modules)
    graph.add_import(importer=importer, imported=imported)
    try:
        return list(layers_script.violations(graph, layers))
    finally:
        graph.remove_import(importer=importer, imported=imported)
        for module in new_modules:
            graph.remove_module(module)


@pytest.mark.parametrize(
    ("importer", "imported", "expected"),
    [
        ("empathos.epm.state", "empathos.run.config", "upward (epm -> run)"),
        ("empathos.records.io", "empathos.llm.client", "upward (records -> llm)"),
        ("empathos.scoring.leaderboard", "empathos.sandbox.env", "sideways (scoring -> sandbox)"),
        ("empathos.run.session", "empathos.report.html", "sideways (run -> report)"),
        ("empathos.rl.advantages", "empathos.rl.sim", "the pure core imports only itself,"),
        ("empathos.epm.metrics", "empathos.rubric.model", "the pure core imports only itself,"),
        ("empathos.run.config", "verl", "only empathos.integrations.verl may import it"),
        ("empathos.scoring.leaderboard", "inspect_ai", "only empathos.integrations.inspect"),
    ],
)
def test_a_planted_import_that_breaks_the_layers_is_found(
    graph: grimp.ImportGraph, layers: object, importer: str, imported: str, expected: str
) -> None:
    before = layers_script.violations(graph, layers)
    after = _violations_with(graph, layers, importer, imported)
    new = [line for line in after if line not in before]
    assert new and all(line.startswith(f"{importer} imports {imported}:") for line in new), new
    assert any(expected in line for line in new), new


def test_a_downward_import_is_allowed(graph: grimp.ImportGraph, layers: object) -> None:
    before = layers_script.violations(graph, layers)
    assert _violations_with(graph, layers, "empathos.report.html", "empathos.epm.metrics") == before


def test_a_package_in_no_layer_is_named(graph: grimp.ImportGraph, layers: object) -> None:
    found = _violations_with(graph, layers, "empathos.newthing.core", "empathos.errors")
    assert any("package 'newthing' is in no layer" in line for line in found)


def test_imports_inside_functions_count(graph: grimp.ImportGraph) -> None:
    # empathos.llm.factory imports the local backend only inside build_model (torch is heavy)
    assert graph.direct_import_exists(
        importer="empathos.llm.factory", imported="empathos.llm.local"
    )


def test_the_architecture_picture_is_drawn_from_the_layers(layers: object) -> None:
    assert layers_script.picture_is_current(layers), "run: python scripts/layers.py --write"
    picture = layers_script.draw(layers)
    for _, packages in layers.layers:  # type: ignore[attr-defined]
        for package in packages:
            assert layers_script._shown(package) in picture
