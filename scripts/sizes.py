"""List the functions over 60 lines and the modules over 450 lines in src/ (CI runs this).

    python scripts/sizes.py          # exit 1 if one is not named in docs/architecture.md

A function or module may pass its limit only when docs/architecture.md's size table (between
the ``sizes:begin`` and ``sizes:end`` markers) names it, as ``path::function`` or ``path``,
with the reason. A name in the table that is no longer over its limit is reported too, so the
table never goes stale.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_FUNCTION = 60
MAX_MODULE = 450


def oversized(src: Path = SRC) -> dict[str, int]:
    """``path::function`` (nested: ``outer.inner``) and ``path`` -> lines, over the limits."""
    found: dict[str, int] = {}
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE:
            found[rel] = lines
        for name, length in _functions(ast.parse(text)):
            if length > MAX_FUNCTION:
                found[f"{rel}::{name}"] = length
    return found


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = prefix + node.name
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out.append((name, (node.end_lineno or node.lineno) - start + 1))
            out.extend(_functions(node, name + "."))
        elif isinstance(node, ast.ClassDef):
            out.extend(_functions(node, prefix + node.name + "."))
        else:
            out.extend(_functions(node, prefix))
    return out


def exceptions(doc: Path = ARCHITECTURE) -> set[str]:
    """The names in the architecture document's size table."""
    text = doc.read_text(encoding="utf-8")
    block = text.partition("<!-- sizes:begin -->")[2].partition("<!-- sizes:end -->")[0]
    return set(re.findall(r"^\|\s*`([^`]+)`", block, flags=re.MULTILINE))


def main() -> int:
    found = oversized()
    allowed = exceptions()
    bad = {name: n for name, n in found.items() if name not in allowed}
    stale = sorted(allowed - set(found))
    for name, n in sorted(found.items(), key=lambda x: -x[1]):
        limit = MAX_FUNCTION if "::" in name else MAX_MODULE
        note = "named in docs/architecture.md" if name in allowed else "OVER THE LIMIT"
        print(f"{n:5d} lines (limit {limit})  {name}  [{note}]")
    for name in stale:
        print(f"docs/architecture.md names {name}, which is within its limit now: remove the row")
    if bad or stale:
        return 1
    print(f"no function over {MAX_FUNCTION} lines, no module over {MAX_MODULE}, but those named")
    return 0


if __name__ == "__main__":
    sys.exit(main())
