"""A check that a result shows in a notebook: its ``_repr_html_`` is the terminal's table as escaped HTML and its
``to_frame()`` a non-empty DataFrame."""

from __future__ import annotations

import io
import re
from html import unescape
from typing import Any

import pandas as pd

from stableval.console import Displayed, make_console


def html_text(html: str) -> str:
    """The text a browser shows of ``html`` (tags dropped, entities read)."""
    return unescape(re.sub(r"<[^>]+>", "", html))


def check_displayed(result: Any) -> None:
    """Assert that ``result`` draws the same text in a notebook as in the terminal, and gives its data as a frame."""
    assert isinstance(result, Displayed), type(result).__name__
    html = result._repr_html_()
    buffer = io.StringIO()
    result.render(make_console(buffer, to_file=True))
    assert buffer.getvalue().strip() and html_text(html) == buffer.getvalue()
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame)
