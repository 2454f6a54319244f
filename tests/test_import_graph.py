"""No import cycle in src/: between modules, and between the top-level packages.

The graph comes from grimp (the engine of import-linter), which reads every ``import`` of every
module, those inside functions included, so an import hidden in a function to dodge a cycle
still counts.
"""

from __future__ import annotations

import grimp

PACKAGE = "empathos"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            comp = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                comp.append(top)
                if top == node:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _module_edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def _package_edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    """Edges between the top-level packages (``empathos.rl``, ``empathos.sandbox`` ...)."""

    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[str, set[str]] = {}
    for importer, imported in (
        (m, i) for m in graph.modules for i in graph.find_modules_directly_imported_by(m)
    ):
        a, b = top(importer), top(imported)
        if a != b and PACKAGE not in (a, b):
            edges.setdefault(a, set()).add(b)
    return edges


def _chain(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    a, b = cycle[0], cycle[1]
    there = graph.find_shortest_chain(importer=a, imported=b) or (a, b)
    back = graph.find_shortest_chain(importer=b, imported=a) or (b, a)
    return " -> ".join([*there, *back[1:]])


def test_the_detector_finds_a_cycle() -> None:
    """The check is not vacuous: a cycle added to a copy of the graph is reported."""
    graph = grimp.build_graph(PACKAGE, cache_dir=None)
    graph.add_import(importer="empathos.epm", imported="empathos.cli.main")
    cycles = _cycles(_module_edges(graph))
    assert any({"empathos.epm", "empathos.cli.main"} <= set(c) for c in cycles)
    assert any({"empathos.epm", "empathos.cli"} <= set(c) for c in _cycles(_package_edges(graph)))


def test_no_import_cycle_between_modules() -> None:
    graph = grimp.build_graph(PACKAGE, cache_dir=None)
    assert len(graph.modules) > 50  # the package was found (src/ first on the path)
    cycles = _cycles(_module_edges(graph))
    assert not cycles, "import cycles:\n" + "\n".join(_chain(graph, c) for c in cycles)


def test_no_import_cycle_between_packages() -> None:
    graph = grimp.build_graph(PACKAGE, cache_dir=None)
    cycles = _cycles(_package_edges(graph))
    assert not cycles, "package cycles: " + "; ".join(" <-> ".join(c) for c in cycles)
