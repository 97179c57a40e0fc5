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
from typing import TYPE_CHECKING, Any, Literal

from stableval.data.files import unwritable
from stableval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["FIGURE_SUFFIXES", "check_figure_path", "drawable_text", "figure_to_svg", "new_figure", "save_figure"]

#: image formats a figure can be saved as (by the file suffix)
FIGURE_SUFFIXES: tuple[str, ...] = (".png", ".svg", ".pdf")


def new_figure(width: float, height: float, *, layout: Literal["constrained", "tight"] | None = "constrained",
               dpi: float = 100) -> Figure:
    """A blank figure of ``width`` × ``height`` inches on the Agg backend (no global pyplot state)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout=layout, dpi=dpi)


def check_figure_path(path: str | os.PathLike[str], *, option: str | None = None) -> Path:
    """``path`` if its suffix is an image format and it is not a folder (checked before any work is done).
    ``option``: the Python name of the option that gave the path (``plot``), which the error then names (the
    command line spells it as its flag); else the error names the file.

    >>> check_figure_path("rank-flow.gif", option="plot")
    Traceback (most recent call last):
    ...
    stableval.errors.InputError: option 'plot': cannot tell the image format from the file name's suffix: got \
'rank-flow.gif'; allowed: .png, .svg, .pdf
    """
    target = Path(path)
    file, value = (None, str(target)) if option else (str(target), target.suffix or "(no suffix)")
    if target.suffix.lower() not in FIGURE_SUFFIXES:
        raise InputError("cannot tell the image format from the file name's suffix", file=file, option=option,
                         value=value, allowed=", ".join(FIGURE_SUFFIXES))
    why = unwritable(target)
    if why is not None and why.endswith("is a folder, not a file"):
        raise InputError("is a folder, not a file name", file=file, option=option, value=value,
                         has_value=option is not None, allowed="a file name ending in " + ", ".join(FIGURE_SUFFIXES))
    if why is not None:
        raise InputError(f"cannot write the figure: {why}", file=file, option=option, value=value,
                         has_value=option is not None, allowed="a file name ending in " + ", ".join(FIGURE_SUFFIXES))
    return target


def _font_characters() -> frozenset[int]:
    """The code points the default matplotlib font can draw."""
    global _CHARACTERS
    if _CHARACTERS is None:
        from matplotlib.font_manager import FontProperties, findfont
        from matplotlib.ft2font import FT2Font

        _CHARACTERS = frozenset(FT2Font(findfont(FontProperties())).get_charmap())
    return _CHARACTERS


_CHARACTERS: frozenset[int] | None = None


def drawable_text(text: str) -> str:
    r"""``text`` with what the figure font cannot draw (emoji, control characters, unsupported scripts) written as
    escapes, so names from the data never turn into missing-glyph boxes and warnings.

    >>> drawable_text("gpt-4 漢\x1b[31m é")
    'gpt-4 \\u6f22\\x1b[31m é'
    """
    known = _font_characters()

    def shown(char: str) -> str:
        code = ord(char)
        if char in "\n" or (code >= 0x20 and code != 0x7f and not 0x80 <= code < 0xa0 and code in known):
            return char
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    return "".join(map(shown, text))


def _drawable(fig: Figure) -> None:
    """Every text of ``fig`` (titles, labels, tick labels, legends) made drawable (:func:`drawable_text`)."""
    from matplotlib.category import StrCategoryFormatter
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    def drawn(formatter: Any) -> Any:
        wrapped = FuncFormatter(lambda x, pos: drawable_text(str(formatter(x, pos))))
        wrapped.stableval_drawable = True  # type: ignore[attr-defined]
        return wrapped

    for axes in fig.axes:  # tick labels are drawn afresh from their formatter: wrap the ones that give names
        for axis in (axes.xaxis, axes.yaxis):
            major, minor = axis.get_major_formatter(), axis.get_minor_formatter()
            if isinstance(major, FixedFormatter | FuncFormatter | StrCategoryFormatter) \
                    and not getattr(major, "stableval_drawable", False):
                axis.set_major_formatter(drawn(major))
            if isinstance(minor, FixedFormatter | FuncFormatter | StrCategoryFormatter) \
                    and not getattr(minor, "stableval_drawable", False):
                axis.set_minor_formatter(drawn(minor))
    for artist in fig.findobj(Text):
        text = artist.get_text()
        if text and (not text.isascii() or any((ord(c) < 0x20 and c != "\n") or ord(c) == 0x7f for c in text)):
            artist.set_text(drawable_text(text))


def save_figure(fig: Figure, path: str | os.PathLike[str], *, dpi: float = 150) -> Path:
    """Save ``fig`` in the format of ``path``'s suffix (.png, .svg, .pdf), creating missing parent folders; text
    the font cannot draw is written as escapes."""
    target = check_figure_path(path)
    _drawable(fig)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, format=target.suffix.lower().lstrip("."), dpi=dpi, bbox_inches="tight")
    return target


def figure_to_svg(fig: Figure) -> str:
    """The figure as an inline SVG string (no external references)."""
    import io

    buffer = io.StringIO()
    _drawable(fig)
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]
