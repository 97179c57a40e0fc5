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
    plan,
    portal,
    rater_bootstrap,
    reliability,
    report,
    score,
    serve,
    simulate,
    stability,
    studies,
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
    studies,
    nrp,
    pairwise,
    plan,
    report,
    serve,
    portal,
    export,
)


def register_all(app: typer.Typer) -> None:
    """Register every command; on/off flags get no ``<bool>`` type hint in ``--help``, and third-party progress
    bars (tqdm: model downloads, embeddings) stay off when stderr is not a terminal."""
    import os
    import sys

    _flags_without_type_hint()
    if not sys.stderr.isatty():
        os.environ.setdefault("TQDM_DISABLE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for module in COMMANDS:
        module.register(app)


def _flags_without_type_hint() -> None:
    """typer shows ``<bool>`` beside on/off flags such as ``--help`` and ``--quick``: say nothing there."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_stableval", False):
        return

    def display_type_rich(self: TyperOption, ctx: object) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich._stableval = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
