"""The layering: imports only run downward, so every package can be read, tested and replaced from the bottom up.

    cli → commands → {report, studies, nrp, portal, simulate} → evaluate → {datasets, aggregate} → data → base

Function-level imports count too (they are how heavy modules load lazily, not a licence to import upwards).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "stableval"

#: each top-level part of the package and its floor; a module may import its own floor and those below
LEVELS: dict[str, int] = {
    "_version": 0, "errors": 0,
    "_json": 1, "_lazy": 1, "_options": 1, "progress": 1, "parallel": 1, "markup": 1, "wording": 1,
    "data": 2,
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
