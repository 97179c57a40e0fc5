"""Names from the data inside lines that carry the project's own style tags (``[bold]…[/]``).

The console of :mod:`stableval.commands.output` styles only the project's closed tags; a name that happens to
be spelled like one (an agent called ``[bold]x[/]``) must still be shown as written. :func:`literal` marks such
brackets with an invisible word joiner that the console skips and removes. Low in the layers so that every
renderer (``evaluate``, ``report``) can mark names without importing the command line.
"""

from __future__ import annotations

import re

__all__ = ["LITERAL_MARK", "TAG", "literal"]

# a word joiner (zero width) that :func:`literal` puts before a tag-like bracket of data text: such a bracket is
# never read as a tag, and the joiner is removed when the text is shown
LITERAL_MARK = "\u2060"
TAG = re.compile(r"(?<!\u2060)\[(/?)([a-z ]*)\]")


def literal(text: object) -> str:
    """``text`` (a name from the data) made safe to interpolate into a line that also carries the project's style
    tags: bracketed text in it that looks like one of the tags is shown as written, never read as a tag.

    >>> literal("[bold]x[/] and [note]") == "\u2060[bold]x\u2060[/] and \u2060[note]"
    True
    """
    return TAG.sub(lambda match: LITERAL_MARK + match.group(), str(text))
