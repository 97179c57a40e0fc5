"""The portal's modules import each other without a cycle (function-level imports included), and the route
modules hold no SQL: they call the functions of the portal's modules."""

from __future__ import annotations

import ast
from pathlib import Path

import stableval

PORTAL = Path(stableval.__file__).resolve().parent / "portal"
PACKAGE = "stableval.portal"
ROUTES = ("rater_routes", "admin_routes")


def _module_name(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


def _imported(path: Path, modules: set[str]) -> set[str]:
    """Portal modules that ``path`` imports anywhere in its body (top level, functions, TYPE_CHECKING blocks)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import: every portal module sits directly in the package
                parent = PACKAGE.rsplit(".", node.level - 1)[0] if node.level > 1 else PACKAGE
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from package import module`
    return {name for name in found if name in modules}


def _graph() -> dict[str, set[str]]:
    paths = sorted(PORTAL.glob("*.py"))
    modules = {_module_name(path) for path in paths}
    return {_module_name(path): _imported(path, modules) - {_module_name(path)} for path in paths}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first search (each reported from where the search closed it)."""
    state: dict[str, str] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                cycles.append([*stack[stack.index(target):], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_portal_modules_import_without_a_cycle() -> None:
    graph = _graph()
    assert f"{PACKAGE}.app" in graph and f"{PACKAGE}.web" in graph
    assert graph[f"{PACKAGE}.app"] >= {f"{PACKAGE}.{name}" for name in ROUTES}  # the app imports its routers
    cycles = _cycles(graph)
    assert cycles == [], "import cycles in stableval.portal: " + "; ".join(" -> ".join(c) for c in cycles)


def test_route_modules_use_the_helpers_and_hold_no_sql() -> None:
    graph = _graph()
    for name in ROUTES:
        assert f"{PACKAGE}.web" in graph[f"{PACKAGE}.{name}"]
        assert f"{PACKAGE}.app" not in graph[f"{PACKAGE}.{name}"]
        tree = ast.parse((PORTAL / f"{name}.py").read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not any(module.split(".")[0] == "sqlalchemy" for module in imported), name
        calls = {node.func.attr for node in ast.walk(tree)
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
        assert not calls & {"reading", "writing", "execute", "scalar", "scalars"}, name
