"""Sub-commands of ``stableval``: one module per command (group), each with ``register(app)``.

To add a command, create ``stableval/commands/NAME.py`` with ``def register(app: typer.Typer) -> None`` and add
NAME to ``MODULES`` (in the order ``stableval --help`` should list it). Keep heavy imports inside the command
functions so ``stableval --help`` stays fast.
"""

from __future__ import annotations

import importlib

import typer

MODULES: tuple[str, ...] = (
    "score",
    "stability",
    "diagnose",
    "agreement",
    "reliability",
    "convert",
    "simulate",
    "ablate",
    "rater_bootstrap",
    "nrp",
    "pairwise",
    "report",
    "serve",
    "export",
)


def register_all(app: typer.Typer) -> None:
    """Register every command module that exists in this installation."""
    for name in MODULES:
        try:
            module = importlib.import_module(f"stableval.commands.{name}")
        except ModuleNotFoundError as error:
            if error.name == f"stableval.commands.{name}":
                continue  # not written yet
            raise
        module.register(app)
