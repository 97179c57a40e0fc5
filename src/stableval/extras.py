"""The optional extras of ``pip install 'stableval[EXTRA]'``: what each one unlocks, and the check a command runs
before it starts (one line naming the install command instead of a traceback halfway through).

:data:`EXTRAS` names, for each extra of pyproject.toml, the modules whose absence means it is not installed (a test
compares it with pyproject.toml); the commands that need one say so in ``stableval.commands.COMMANDS``.

>>> sorted(EXTRAS)
['dask', 'fast', 'neural', 'nrp', 'portal']
>>> missing_module("portal") is None or missing_module("portal") in EXTRAS["portal"]
True
>>> install_hint("nrp")
"pip install 'stableval[nrp]'"
"""

from __future__ import annotations

import importlib.util

from stableval.errors import StableValError

__all__ = ["EXTRAS", "install_hint", "missing_module", "require_extra"]

#: extra → the modules it installs that stableval imports (probed without importing them)
EXTRAS: dict[str, tuple[str, ...]] = {
    "portal": ("fastapi", "uvicorn", "sqlalchemy", "alembic", "multipart", "nh3"),
    "nrp": ("bm25s", "httpx"),
    "neural": ("torch", "transformers", "sentence_transformers"),
    "dask": ("dask", "distributed"),
    "fast": ("numba",),
}


def install_hint(extra: str) -> str:
    """The command that installs ``extra``."""
    return f"pip install 'stableval[{extra}]'"


def missing_module(extra: str) -> str | None:
    """The first module of ``extra`` that is not installed, or ``None`` when all are (nothing is imported)."""
    for module in EXTRAS[extra]:
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):  # a broken or half-removed install counts as missing
            found = None
        if found is None:
            return module
    return None


def require_extra(extra: str, what: str) -> None:
    """Raise :class:`~stableval.errors.StableValError` saying how to install ``extra`` when it is missing; ``what``
    names what needs it (``"stableval serve"``)."""
    module = missing_module(extra)
    if module is not None:
        raise StableValError(f"{what} needs the '{extra}' extra ({module} is not installed): {install_hint(extra)}")
