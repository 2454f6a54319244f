"""Check the imports of src/empathos against docs/layers.toml, and draw the layers.

    python scripts/layers.py            # list every import that breaks the layers (exit 1 if any)
    python scripts/layers.py --write    # redraw the picture in docs/architecture.md
    python scripts/layers.py --check    # exit 1 if that picture is stale

tests/test_layers.py runs the same checks. The import graph comes from grimp (the engine of
import-linter), which counts imports inside functions too.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
LAYERS_FILE = ROOT / "docs" / "layers.toml"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PACKAGE = "empathos"
BEGIN = "<!-- layers:begin (drawn from docs/layers.toml by scripts/layers.py; do not edit) -->"
END = "<!-- layers:end -->"


@dataclass(frozen=True)
class Layers:
    """The layers top to bottom: each a name and its packages (package -> what it holds)."""

    layers: list[tuple[str, dict[str, str]]]
    pure: list[str]
    frameworks: dict[str, str]

    def level(self, package: str) -> int | None:
        """0 for the top layer; None for a package the file does not name."""
        for i, (_, packages) in enumerate(self.layers):
            if package in packages:
                return i
        return None


def load_layers(path: Path = LAYERS_FILE) -> Layers:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    layers = [(str(x["name"]), dict(x["packages"])) for x in data["layer"]]
    return Layers(
        layers=layers,
        pure=list(data.get("pure", {}).get("modules", [])),
        frameworks=dict(data.get("frameworks", {})),
    )


def top_package(module: str) -> str:
    """``empathos.run.config`` -> ``run``; the root module ``empathos`` -> ``empathos``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _inside(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def build_graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE, cache_dir=None, include_external_packages=True)


def violations(graph: grimp.ImportGraph, layers: Layers) -> list[str]:
    """Every import that breaks the layers, one line each (empty: none)."""
    found: list[str] = []
    ours = sorted(m for m in graph.modules if _inside(m, PACKAGE))
    for module in ours:
        src = top_package(module)
        level = layers.level(src)
        if level is None:
            found.append(f"{module}: package {src!r} is in no layer of docs/layers.toml")
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            found.extend(_check_edge(module, imported, src, level, layers))
    return found


def _check_edge(module: str, imported: str, src: str, level: int, layers: Layers) -> list[str]:
    if not _inside(imported, PACKAGE):
        owner = layers.frameworks.get(imported.split(".")[0])
        if owner is not None and not _inside(module, owner):
            return [f"{module} imports {imported}: only {owner} may import it"]
        return []
    dst = top_package(imported)
    problems = []
    pure = [p for p in layers.pure if _inside(module, p)]
    if pure and not any(_inside(imported, p) for p in [*layers.pure, f"{PACKAGE}.errors"]):
        problems.append(f"{module} imports {imported}: the pure core imports only itself, errors")
    if dst == src:
        return problems
    there = layers.level(dst)
    if there is None or there > level:
        return problems
    way = "sideways" if there == level else "upward"
    problems.append(f"{module} imports {imported}: {way} ({src} -> {dst})")
    return problems


def draw(layers: Layers) -> str:
    """The picture of docs/architecture.md: each layer, its packages and what they hold."""
    lines = ["```"]
    for i, (name, packages) in enumerate(layers.layers):
        if i:
            lines.append("        |")
            lines.append("        v")
        lines.append(f"[{name}]  " + "  |  ".join(_shown(p) for p in packages))
        for package, holds in packages.items():
            wrapped = textwrap.wrap(holds, width=76)
            lines.append(f"    {package + ':':<14}{wrapped[0]}")
            lines.extend(f"    {'':<14}{rest}" for rest in wrapped[1:])
    lines.append("```")
    return "\n".join(lines)


def _shown(package: str) -> str:
    """``run/`` for a package folder, ``errors.py`` for a module, ``empathos`` for the root."""
    where = ROOT / "src" / PACKAGE / package
    if package == PACKAGE:
        return f"{PACKAGE} (root)"
    return f"{package}/" if where.is_dir() else f"{package}.py"


def _replace_block(text: str, block: str) -> str:
    head, sep, rest = text.partition(BEGIN)
    if not sep or END not in rest:
        raise SystemExit(f"{ARCHITECTURE} has no {BEGIN!r} ... {END!r} block")
    return head + BEGIN + "\n" + block + "\n" + END + rest.partition(END)[2]


def picture_is_current(layers: Layers) -> bool:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    return _replace_block(text, draw(layers)) == text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="redraw docs/architecture.md")
    parser.add_argument("--check", action="store_true", help="fail if the picture is stale")
    args = parser.parse_args(argv)
    layers = load_layers()
    if args.write:
        text = ARCHITECTURE.read_text(encoding="utf-8")
        ARCHITECTURE.write_text(_replace_block(text, draw(layers)), encoding="utf-8")
        return 0
    if args.check:
        if picture_is_current(layers):
            return 0
        print("docs/architecture.md's picture is stale: python scripts/layers.py --write")
        return 1
    found = violations(build_graph(), layers)
    print("\n".join(found) if found else "no import breaks the layers")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
