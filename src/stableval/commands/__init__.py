"""Sub-commands of ``stableval``: one module per command (or command group), each with ``register(app)``.

To add a command, create ``stableval/commands/NAME.py`` with ``def register(app: typer.Typer) -> None`` and add it
to :data:`COMMANDS` below (in the order ``stableval --help`` lists it). A command that reads ratings takes its
input flags from :func:`stableval.commands.common.input_options` and its method flags from
:func:`~stableval.commands.common.method_options`, and writes its result with :func:`stableval.commands.output.emit`
(see CONTRIBUTING.md). Keep heavy imports inside the command functions so ``stableval --help`` stays fast.
"""

from __future__ import annotations

from types import ModuleType

import typer

from stableval.commands import (
    ablate,
    agreement,
    convert,
    diagnose,
    export,
    mt_bench,
    nrp,
    pairwise,
    rater_bootstrap,
    reliability,
    report,
    score,
    serve,
    simulate,
    stability,
)

#: every command module, in ``stableval --help`` order
COMMANDS: tuple[ModuleType, ...] = (
    score,
    stability,
    diagnose,
    agreement,
    reliability,
    convert,
    mt_bench,
    simulate,
    ablate,
    rater_bootstrap,
    nrp,
    pairwise,
    report,
    serve,
    export,
)


def register_all(app: typer.Typer) -> None:
    """Register every command."""
    for module in COMMANDS:
        module.register(app)
