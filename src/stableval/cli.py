"""The ``stableval`` command.

    stableval score ratings.csv --levels incorrect,partial,correct
    stableval score votes.jsonl --method stableval --bootstrap 2000 --format json -o scores.json
    stableval demo

Each sub-command lives in ``stableval/commands/NAME.py``, listed in ``stableval.commands.COMMANDS`` and imported
only when it runs.
Exit codes: 0 success, 1 bad input (the message names file, row, column, value and what is allowed),
2 usage error (unknown option or option value).
"""

from __future__ import annotations

from typing import Annotated

import typer

from stableval._version import __version__
from stableval.commands import LazyGroup, register_all

app = typer.Typer(
    name="stableval",
    cls=LazyGroup,
    help="Disagreement-aware, stable evaluation of AI systems from human and LLM-judge ratings.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"stableval {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    """stableval: which model is better, how sure you can be, and which raters and items to trust."""


register_all(app)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
