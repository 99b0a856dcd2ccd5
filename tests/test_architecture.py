"""The shape of the code: no import cycle between the harness's modules (imports inside
functions and in package `__init__`s count), no module over 800 lines and no function
over 80."""

from __future__ import annotations

import ast
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent / "harness"


def _modules() -> dict[str, Path]:
    out = {}
    for p in HARNESS.rglob("*.py"):
        parts = list(p.relative_to(HARNESS.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of harness modules: the module a statement names (`from P
    import N`: P, and P.N where that is a module), wherever the statement stands. The
    parent packages Python initialises first are not counted: a module inside a package
    is loaded while its package is."""
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rsplit(".", 1)[0]
                where = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
                deps.add(where)
                deps.update(f"{where}.{a.name}" for a in node.names)
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_between_harness_modules() -> None:
    graph = imports(_modules())
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_package() -> None:
    graph = {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p"}, "q": {"p"}}
    assert cycles(graph) == [["p", "p.a", "p.b"]]


MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80


def test_no_module_over_800_lines() -> None:
    big = {name: n for name, p in _modules().items() if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert big == {}, f"modules over {MAX_MODULE_LINES} lines (split them by concern): {big}"


def test_no_function_over_80_lines() -> None:
    long = {}
    for name, p in _modules().items():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{name}.{node.name}"] = n
    assert long == {}, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_model_package_imports_nothing_of_the_harness() -> None:
    """The typed records are the bottom layer: every other package may use them."""
    graph = imports(_modules())
    assert {m: deps for m, deps in graph.items() if m.startswith("harness.model") and
            any(not d.startswith("harness.model") for d in deps)} == {}


def test_a_local_run_starts_its_games_without_loading_scipy_dask_or_the_site() -> None:
    """What `p10-tourney run` loads before its workers are forked: not SciPy, Dask, Jinja or
    the board (half a second and more of every run; `tournament.warmup` loads them while
    the games are played)."""
    import subprocess
    import sys

    code = ("import sys, harness.cli\n"
            "from harness.tournament.runner import run_tournament\n"
            "from harness.tournament.executor import ClusterError, LocalExecutor\n"
            "from harness.tournament.config import load_config\n"
            "print(sorted(m for m in ('scipy', 'distributed', 'dask', 'jinja2', 'harness.tournament.board')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.strip() == "[]", out.stdout
