"""What every figure shares: a new matplotlib ``Figure`` (Agg, no pyplot state), saving, inline SVG.

Every figure function in :mod:`stableval.report.figures` returns a ``Figure`` with a title and axis labels with
units; callers save it with :func:`save_figure` (format from the suffix) or embed it with :func:`figure_to_svg`.

>>> import pathlib, tempfile
>>> fig = new_figure(3, 2)
>>> _ = fig.add_subplot().set_title("demo")
>>> save_figure(fig, pathlib.Path(tempfile.mkdtemp()) / "sub" / "demo.svg").suffix
'.svg'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from stableval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["FIGURE_SUFFIXES", "check_figure_path", "figure_to_svg", "new_figure", "save_figure"]

#: image formats a figure can be saved as (by the file suffix)
FIGURE_SUFFIXES: tuple[str, ...] = (".png", ".svg", ".pdf")


def new_figure(width: float, height: float, *, layout: Literal["constrained", "tight"] | None = "constrained",
               dpi: float = 100) -> Figure:
    """A blank figure of ``width`` × ``height`` inches on the Agg backend (no global pyplot state)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout=layout, dpi=dpi)


def check_figure_path(path: str | os.PathLike[str], *, option: str = "--plot") -> Path:
    """``path`` if its suffix is an image format and it is not a folder (checked before any work is done)."""
    target = Path(path)
    if target.suffix.lower() not in FIGURE_SUFFIXES:
        raise InputError(f"{option}: cannot tell the image format from the file name's suffix", file=str(target),
                         value=target.suffix or "(no suffix)", allowed=", ".join(FIGURE_SUFFIXES))
    if target.is_dir():
        raise InputError(f"{option}: is a folder, not a file name", file=str(target),
                         allowed="a file name ending in " + ", ".join(FIGURE_SUFFIXES))
    return target


def save_figure(fig: Figure, path: str | os.PathLike[str], *, dpi: float = 150) -> Path:
    """Save ``fig`` in the format of ``path``'s suffix (.png, .svg, .pdf), creating missing parent folders."""
    target = check_figure_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, format=target.suffix.lower().lstrip("."), dpi=dpi, bbox_inches="tight")
    return target


def figure_to_svg(fig: Figure) -> str:
    """The figure as an inline SVG string (no external references)."""
    import io

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]
