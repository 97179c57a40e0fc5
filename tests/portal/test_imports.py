"""The portal's modules import each other without a cycle (function-level and type-checking imports included), its
sub-packages only downward (store → tasks → work → admin → web), no module imports another's private names, and the
route modules hold no SQL: they call the functions of the portal's modules. Only modules of ``stableval.portal.tasks``
(and the templates a type owns) branch on a task type's name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import stableval

PORTAL = Path(stableval.__file__).resolve().parent / "portal"
PACKAGE = "stableval.portal"
#: The sub-packages, bottom first: a module may import its own sub-package and those before it. Modules directly
#: in the package (the track settings) sit below all of them; the package's ``__init__`` (its public names) above.
FLOORS = ("store", "tasks", "work", "admin", "web")
ROUTES = ("web.rater_routes", "web.step_routes", "web.admin_routes")
#: A task type's name, quoted, as a branch on it would spell it.
TYPE_NAME = re.compile(r"""["'](pairwise|single|mcq|ddx|rank-documents)["']""")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PORTAL).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE, *parts))


def _paths() -> list[Path]:
    return sorted(p for p in PORTAL.rglob("*.py") if "migrations" not in p.relative_to(PORTAL).parts)


def _imports(path: Path) -> list[ast.ImportFrom | ast.Import]:
    return [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
            if isinstance(node, ast.Import | ast.ImportFrom)]


def _imported(path: Path, modules: set[str]) -> set[str]:
    """Portal modules that ``path`` imports anywhere in its body (top level, functions, TYPE_CHECKING blocks)."""
    found: set[str] = set()
    package = _module_name(path) if path.stem == "__init__" else _module_name(path).rsplit(".", 1)[0]
    for node in _imports(path):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:  # relative import
            parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            base = f"{parent}.{base}" if base else parent
        found.add(base)
        found.update(f"{base}.{alias.name}" for alias in node.names)  # `from package import module`
    return {name for name in found if name in modules}


def _graph() -> dict[str, set[str]]:
    paths = _paths()
    modules = {_module_name(path) for path in paths}
    return {_module_name(path): _imported(path, modules) - {_module_name(path)} for path in paths}


def _floor(module: str) -> int:
    """0 for a module directly in the package, 1.. for the sub-packages in :data:`FLOORS`, top for the package."""
    if module == PACKAGE:
        return len(FLOORS) + 1
    part = module.removeprefix(PACKAGE + ".").split(".")[0]
    return FLOORS.index(part) + 1 if part in FLOORS else 0


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
    assert f"{PACKAGE}.web.app" in graph and f"{PACKAGE}.web.common" in graph and len(graph) > 40
    assert graph[f"{PACKAGE}.web.app"] >= {f"{PACKAGE}.{name}" for name in ROUTES}  # the app imports its routers
    cycles = _cycles(graph)
    assert cycles == [], "import cycles in stableval.portal: " + "; ".join(" -> ".join(c) for c in cycles)


def test_sub_packages_import_only_downward() -> None:
    graph = _graph()
    assert {_floor(module) for module in graph} >= set(range(1, len(FLOORS) + 2))  # every floor is seen
    upward = [f"{module} (floor {_floor(module)}) imports {target} (floor {_floor(target)})"
              for module, targets in graph.items() for target in targets if _floor(target) > _floor(module)]
    assert not upward, "\n".join(upward)


def test_the_floor_scan_catches_an_upward_import() -> None:
    assert _floor(f"{PACKAGE}.work.flow") > _floor(f"{PACKAGE}.tasks.base") > _floor(f"{PACKAGE}.store.models")
    assert _floor(f"{PACKAGE}.web.app") > _floor(f"{PACKAGE}.admin.manage") > _floor(f"{PACKAGE}.work.flow")
    assert _floor(PACKAGE) > _floor(f"{PACKAGE}.web.app")


def test_no_module_imports_private_names() -> None:
    private = [f"{path.relative_to(PORTAL)}:{node.lineno}: {alias.name} from {node.module}"
               for path in _paths() for node in _imports(path)
               if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE)
               for alias in node.names if alias.name.startswith("_")]
    assert not private, "\n".join(private)


def test_only_the_task_types_name_task_types() -> None:
    """Outside ``tasks/`` (the types' own modules) and the templates a type owns, no code spells a type's name; the
    track settings declare the default type (a value, not a branch)."""
    owned = {template for path in (PORTAL / "tasks").glob("*.py")
             for template in re.findall(r'"([a-z_]+\.html)"', path.read_text(encoding="utf-8"))}
    assert {"pairwise.html", "task_mcq.html", "task_confirm.html"} <= owned
    named = []
    for path in [*_paths(), *sorted((PORTAL / "templates").glob("*.html"))]:
        relative = path.relative_to(PORTAL)
        if relative.parts[0] == "tasks" or relative.name == "settings.py" or (
                relative.parts[0] == "templates" and path.name in owned
                                             and path.name != "task_confirm.html" and path.name != "task_results.html"):
            continue
        named += [f"{relative}:{number}: {line.strip()[:100]}"
                  for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                  if TYPE_NAME.search(line)]
    assert not named, "\n".join(named)


def test_route_modules_use_the_helpers_and_hold_no_sql() -> None:
    graph = _graph()
    for name in ROUTES:
        assert f"{PACKAGE}.web.common" in graph[f"{PACKAGE}.{name}"]
        assert f"{PACKAGE}.web.app" not in graph[f"{PACKAGE}.{name}"]
        tree = ast.parse((PORTAL / f"{name.replace('.', '/')}.py").read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not any(module.split(".")[0] == "sqlalchemy" for module in imported), name
        calls = {node.func.attr for node in ast.walk(tree)
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
        assert not calls & {"reading", "writing", "execute", "scalar", "scalars"}, name
