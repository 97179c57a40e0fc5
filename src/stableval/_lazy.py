"""Lazy public names for a package: ``import stableval`` and ``stableval --help`` load no numerical library until a
name is used.

>>> import types
>>> package = types.ModuleType("demo")
>>> package.__getattr__, package.__dir__ = lazy_exports(vars(package), {"sqrt": "math"}, ["sqrt"])
>>> package.sqrt(9.0)
3.0
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(namespace: MutableMapping[str, Any], home: Mapping[str, str], names: Sequence[str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for a package whose public ``names`` live in the modules ``home`` gives; a name is
    imported on first use and then kept in the package's ``namespace``."""
    package = str(namespace.get("__name__", "package"))

    def __getattr__(name: str) -> Any:
        if name in home:
            value = getattr(importlib.import_module(home[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return list(names)

    return __getattr__, __dir__
