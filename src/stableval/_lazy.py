"""Lazy public names for a package, declared once: ``import stableval`` and ``stableval --help`` load no numerical
library until a name is used.

A package declares its public names in one place, the ``if TYPE_CHECKING:`` block of its ``__init__.py``, each
imported as ``name as name`` (the explicit re-export type checkers read). :func:`lazy_package` reads that block
from the package's source and returns ``__getattr__`` (import the defining module on first use), ``__dir__`` and
``__all__`` (those names plus the public names the ``__init__`` defines itself), so the three can never disagree.

>>> import stableval.data as data
>>> "read_any" in data.__all__ and "example_path" in data.__all__
True
>>> data.read_any.__module__
'stableval.data.loader'
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

__all__ = ["declared_exports", "imported_class", "lazy_package"]


def declared_exports(source: str) -> dict[str, str]:
    """Public name → defining module, from the ``if TYPE_CHECKING:`` block(s) of a package's source.

    >>> declared_exports("if TYPE_CHECKING:\\n    from a.b import c as c, d as d\\n")
    {'c': 'a.b', 'd': 'a.b'}
    """
    home: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        for statement in node.body:
            if isinstance(statement, ast.ImportFrom) and statement.module:
                for alias in statement.names:
                    home[alias.asname or alias.name] = statement.module
    return home


def lazy_package(namespace: MutableMapping[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]],
                                                                  list[str]]:
    """``(__getattr__, __dir__, __all__)`` for the package whose module namespace (``globals()``) is given.

    Call it last in the ``__init__.py``, so the names the package defines itself (``example_path``) are public too.
    """
    path = Path(str(namespace["__file__"]))
    home: Mapping[str, str] = declared_exports(path.read_text(encoding="utf-8"))
    package = str(namespace.get("__name__", "package"))
    own = [name for name, value in namespace.items() if not name.startswith("_") and name != "TYPE_CHECKING"
           and getattr(value, "__module__", package) == package and not isinstance(value, type(importlib))]
    names = sorted(set(home) | set(own) | ({"__version__"} if "__version__" in namespace else set()))

    def __getattr__(name: str) -> Any:
        if name in home:
            value = getattr(importlib.import_module(home[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return list(names)

    return __getattr__, __dir__, names


def imported_class(at: str | type) -> Any:
    """The class ``at`` names as ``"module:Class"`` (its module imported now, if it was not yet), or ``at`` itself.

    >>> imported_class("collections:OrderedDict").__name__, imported_class(int)
    ('OrderedDict', <class 'int'>)
    """
    if not isinstance(at, str):
        return at
    module, _, name = at.partition(":")
    return getattr(importlib.import_module(module), name)
