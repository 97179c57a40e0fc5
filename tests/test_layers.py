"""The layering: imports only run downward, so every package can be read, tested and replaced from the bottom up.

    cli → commands → {report, studies, nrp, portal, simulate} → evaluate → {datasets, aggregate} → data → base

Function-level imports count too (they are how heavy modules load lazily, not a licence to import upwards).
Inside a part, no module imports itself back through others: there is no import cycle anywhere, counting
``TYPE_CHECKING`` and function-level imports.

The tests mirror the package: ``tests/<package>/test_<module>.py`` tests ``src/stableval/<package>/<module>.py``
(``test_X.py`` also stands for ``_X.py`` and for the package ``X/``), apart from the few files listed in
``OTHER_TESTS`` and the portal's tests (``tests/portal``). Shared helpers live in ``conftest.py`` files and in
helper modules whose names do not start with ``test_``."""

from __future__ import annotations

import ast
from pathlib import Path

from stableval._lazy import declared_exports

from paths import SRC

#: each top-level part of the package and its floor; a module may import its own floor and those below
LEVELS: dict[str, int] = {
    "_version": 0, "errors": 0,
    "_json": 1, "_lazy": 1, "_options": 1, "progress": 1, "parallel": 1, "markup": 1, "wording": 1, "extras": 1,
    "data": 2, "console": 2,
    "aggregate": 3, "datasets": 3,
    "evaluate": 4, "crowdkit": 4,
    "simulate": 5, "studies": 5, "nrp": 5,
    "portal": 6, "report": 6,
    "commands": 7,
    "cli": 8,
    "__main__": 9, "__init__": 9,
}


#: imports between parts on the same floor (none today: a sibling import is a step towards a cycle)
SIBLINGS: set[tuple[str, str]] = set()


def part_of(module: str) -> str:
    name = module.split(".")[1] if module.count(".") else "__init__"
    return name.removesuffix(".py")


def imports(root: Path = SRC) -> list[tuple[str, str, int, str]]:
    """(importing part, imported part, line, file) for every ``stableval.*`` import in the package at ``root``."""
    found = []
    for path in root.rglob("*.py"):
        relative = path.relative_to(root.parent).with_suffix("")
        source = ".".join(relative.parts)
        if source.endswith(".__init__"):
            source = source[: -len(".__init__")]
        here = part_of(source) if source != "stableval" else "__init__"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("stableval"):
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names if alias.name.startswith("stableval")]
            else:
                continue
            for target in targets:
                there = part_of(target) if target != "stableval" else "__init__"
                found.append((here, there, node.lineno, str(path.relative_to(root.parent))))
    return found


def test_every_part_has_a_floor() -> None:
    parts = {path.name.removesuffix(".py") for path in SRC.iterdir()
             if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists())}
    assert parts <= set(LEVELS), f"give these parts a floor in LEVELS: {sorted(parts - set(LEVELS))}"


def test_imports_run_downward() -> None:
    edges = imports()
    assert len(edges) > 300  # the scan sees the package's imports
    upward = [f"{path}:{line}: {here} (floor {LEVELS[here]}) imports {there} (floor {LEVELS[there]})"
              for here, there, line, path in edges
              if here != there and LEVELS[here] <= LEVELS[there] and (here, there) not in SIBLINGS]
    assert not upward, "\n".join(upward)


def test_the_scan_catches_an_upward_import(tmp_path: Path) -> None:
    package = tmp_path / "stableval"
    (package / "data").mkdir(parents=True)
    (package / "data" / "bad.py").write_text("def f():\n    from stableval.commands import common\n")
    assert [edge[:2] for edge in imports(package)] == [("data", "commands")]


# ====================================================================================== no import cycle
def module_imports(root: Path = SRC) -> dict[str, set[str]]:
    """Module → the package modules it imports anywhere (top level, ``TYPE_CHECKING``, inside functions).

    ``from package import name`` counts as an import of the module ``package.name`` when that is a module, of the
    module a lazy package declares ``name`` in (:mod:`stableval._lazy`), and else of the package itself.
    """
    paths = {}
    for path in root.rglob("*.py"):
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        paths[name] = path
    lazy = {name: declared_exports(path.read_text(encoding="utf-8"))
            for name, path in paths.items() if path.name == "__init__.py"}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from .x import y
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                for alias in node.names:
                    if f"{base}.{alias.name}" in paths:
                        targets.add(f"{base}.{alias.name}")
                    elif base != name and alias.name in lazy.get(base, {}):
                        targets.add(lazy[base][alias.name])
                    else:
                        targets.add(base)
        graph[name] = {target for target in targets if target in paths and target != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import one another round a loop (strongly connected, more than one module)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return cycles


def test_there_is_no_import_cycle() -> None:
    graph = module_imports()
    assert len(graph) > 150 and sum(map(len, graph.values())) > 500  # the scan sees the modules and their imports
    assert graph["stableval.data.loader"] >= {"stableval.data.integer_ids", "stableval.data.options"}
    assert "stableval.data.loader" in graph["stableval.report.html"]  # `from stableval.data import Loaded` (lazy)
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(group) for group in cycles)


def test_the_scan_catches_a_planted_cycle(tmp_path: Path) -> None:
    package = tmp_path / "stableval"
    (package / "data").mkdir(parents=True)
    (package / "data" / "__init__.py").write_text("if TYPE_CHECKING:\n    from stableval.data.c import f as f\n")
    (package / "data" / "a.py").write_text("if TYPE_CHECKING:\n    from stableval.data.b import B\n")
    (package / "data" / "b.py").write_text("def g():\n    from stableval.data import a\n")
    (package / "data" / "c.py").write_text("from . import b\n\ndef f():\n    pass\n")
    (package / "data" / "d.py").write_text("from stableval.data import f\n")  # lazy: an import of c, not of data
    graph = module_imports(package)
    assert graph["stableval.data.d"] == {"stableval.data.c"} and graph["stableval.data.c"] == {"stableval.data.b"}
    assert import_cycles(graph) == [["stableval.data.a", "stableval.data.b"]]


def test_studies_sit_above_evaluate_and_datasets() -> None:
    """studies/ may import evaluate/ and datasets/, never the reverse."""
    import re

    src = SRC
    upward = re.compile(r"^\s*(from|import) stableval\.studies", re.MULTILINE)
    for package in ("evaluate", "datasets", "data", "aggregate"):
        for module in (src / package).rglob("*.py"):
            assert not upward.search(module.read_text(encoding="utf-8")), module


# ---------------------------------------------------------------------------------------------- the test layout
TESTS = SRC.parents[1] / "tests"
#: test files not named after a module, and what they check instead
OTHER_TESTS = {
    "test_docs.py": "the docs: every command, flag and snippet of README.md and docs/*.md",
    "test_layers.py": "the architecture: imports run downward, no import cycle, the tests mirror the package",
    "test_packaging.py": "the package build: version, package data, extras, Pythons, the wheel check's scripts",
    "test_docs_site.py": "the docs site's generated navigation, API and command-line references, its links",
    "test_notebooks.py": "the notebooks of docs/notebooks run top to bottom and show tables and figures",
    "test_oracles.py": "the semantic oracles of every command reading a ratings file (hypothesis properties)",
}
#: folders of tests/ outside the mirror: the portal's own tests, fixture files, scripts that make fixtures, and
#: crowd-kit's own tests run against stableval.crowdkit (a copy, its licence kept)
NOT_MIRRORED = ("portal", "fixtures", "oracles", "crowdkit_upstream")


def misplaced_tests(paths: list[Path]) -> list[str]:
    """The test files (paths relative to tests/) that are neither ``test_<module>.py`` in the mirror of their
    module's package nor listed in ``OTHER_TESTS``."""
    wrong = []
    for path in paths:
        folder = SRC.joinpath(*path.parts[:-1])
        name = path.name.removeprefix("test_").removesuffix(".py")
        homes = (folder / f"{name}.py", folder / f"_{name}.py", folder / name / "__init__.py")
        if path.as_posix() in OTHER_TESTS or ((folder / "__init__.py").is_file() and any(h.is_file() for h in homes)):
            continue
        wrong.append(path.as_posix())
    return wrong


def test_every_test_file_mirrors_a_module() -> None:
    paths = [path.relative_to(TESTS) for path in TESTS.rglob("test_*.py")]
    assert misplaced_tests([path for path in paths if path.parts[0] not in NOT_MIRRORED]) == []


def test_the_layout_scan_catches_a_file_named_after_a_theme() -> None:
    planted = [Path("test_robust_em.py"), Path("aggregate/test_conventions.py"), Path("nowhere/test_em.py"),
               Path("aggregate/test_em.py"), Path("aggregate/test_base.py"), Path("test_data.py"), Path("test_docs.py")]
    assert misplaced_tests(planted) == ["test_robust_em.py", "aggregate/test_conventions.py", "nowhere/test_em.py"]
