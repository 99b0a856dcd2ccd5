"""The ratings package stays a layer below the tournament: it imports nothing of it (nor of
the referee, the engine or the report's writers), its modules import each other without a
cycle, and none of them grows past 800 lines or has a function past 80. Imports anywhere
in a module count, inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

import harness.ratings

PACKAGE = Path(harness.ratings.__file__).parent
ALLOWED = ("harness.ratings", "harness.model", "harness.spill", "harness.seeds", "harness.report.columns")


def _imports(path: Path) -> set[str]:
    """The harness modules `path` imports, relative imports resolved."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ["harness", "ratings"][: 2 - (node.level - 1)] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out |= {f"{module}.{a.name}" for a in node.names} if node.level and not node.module else {module}
    return {m for m in out if m.startswith("harness")}


def _modules() -> dict[str, set[str]]:
    return {f"harness.ratings.{p.stem}" if p.stem != "__init__" else "harness.ratings": _imports(p)
            for p in sorted(PACKAGE.glob("*.py"))}


def test_the_ratings_import_nothing_above_them() -> None:
    above = {m: bad for m, imps in _modules().items() if (bad := sorted(i for i in imps if not i.startswith(ALLOWED)))}
    assert not above, f"the ratings import from above their layer: {above}"


def test_the_ratings_modules_import_each_other_without_a_cycle() -> None:
    modules = _modules()
    graph = {m: {i for i in imps if i in modules} for m, imps in modules.items()}
    done: set[str] = set()

    def visit(m: str, path: tuple[str, ...]) -> None:
        assert m not in path, " -> ".join(path + (m,))
        if m not in done:
            for n in sorted(graph[m]):
                visit(n, path + (m,))
            done.add(m)

    for m in graph:
        visit(m, ())


def test_no_ratings_module_or_function_is_too_long() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        text = path.read_text()
        assert text.count("\n") <= 800, f"{path.name}: {text.count(chr(10))} lines"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                assert length <= 80, f"{path.name}: {node.name} is {length} lines"
