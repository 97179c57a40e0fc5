"""Safe Markdown: markdown-it-py (CommonMark, raw HTML off) renders, then nh3 (ammonia) sanitises the HTML.

Raw HTML in a model answer is shown as text, never run; links keep only http, https and mailto URLs; nh3
removes any attribute or tag outside its allow-list (event handlers such as ``onerror`` included). Finally the
text spellings ``javascript:`` and ``onXXX=`` are written with character references (``&#58;``, ``&#61;``): they
read the same but can never be matched as active content by a later consumer of the HTML.

>>> markdown_to_html("**bold** <script>alert(1)</script>")
'<p><strong>bold</strong> &lt;script&gt;alert(1)&lt;/script&gt;</p>\\n'
>>> markdown_to_html("[x](javascript:alert(1))")
'<p>[x](javascript&#58;alert(1))</p>\\n'

Images are never loaded (no request leaves the rater's browser); each is shown as a visible placeholder with its
alt text, so the rater knows the answer contained one:

>>> markdown_to_html("See ![chest X-ray](http://example.org/x.png).")
'<p>See [image: chest X-ray].</p>\\n'
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from markupsafe import Markup, escape

__all__ = ["defang", "escape_text", "isolate", "markdown_to_html", "radio_options"]

_TAGS = {"p", "br", "hr", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "a", "h1", "h2", "h3",
         "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "del", "s"}
_DEFANG = re.compile(r"(javascript|vbscript|data)(:)|(\bon[a-z]+)(=)", re.IGNORECASE)
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"style"}, "td": {"style"}}


def isolate(text: str) -> str:
    """``text`` between the Unicode isolates FSI and PDI, for a value quoted in a message: right-to-left text or an
    override inside it cannot reorder the rest of the message.

    >>> isolate("abc") == "\u2068abc\u2069"
    True
    """
    return f"\u2068{text}\u2069"


@lru_cache(maxsize=1)
def _renderer() -> Any:
    from markdown_it import MarkdownIt
    from markupsafe import escape

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")

    def image(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        alt = renderer.renderInlineAsText(tokens[idx].children or [], options, env).strip()
        return str(escape(f"[image: {alt}]" if alt else "[image]"))

    md.add_render_rule("image", image)
    return md


#: Rendered texts kept (question prompts and answers repeat on every page load of a question).
MARKDOWN_CACHE = 2048


@lru_cache(maxsize=MARKDOWN_CACHE)
def markdown_to_html(text: str) -> str:
    """Render Markdown to sanitised HTML (safe to insert unescaped into a page); cached per text."""
    import nh3

    html = _renderer().render(text or "")
    clean = nh3.clean(html, tags=_TAGS, attributes=_ATTRIBUTES, url_schemes={"http", "https", "mailto"},
                      link_rel="noopener noreferrer nofollow", filter_style_properties={"text-align"})
    return defang(clean)


def defang(html: str) -> str:
    """Write ``javascript:``-like schemes and ``onXXX=`` with character references (same text when shown).

    >>> defang("onerror=x javascript:y")
    'onerror&#61;x javascript&#58;y'
    """
    return _DEFANG.sub(lambda m: f"{m[1]}&#58;" if m[1] else f"{m[3]}&#61;", html)


def escape_text(value: Any) -> Any:
    """Jinja ``finalize`` hook: plain strings are HTML-escaped and defanged; safe markup and numbers pass.

    >>> escape_text("<b>onclick=x</b>"), escape_text(3), escape_text(Markup("<b>ok</b>"))
    (Markup('&lt;b&gt;onclick&#61;x&lt;/b&gt;'), 3, Markup('<b>ok</b>'))
    """
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return Markup(defang(str(escape(value))))


@lru_cache(maxsize=4096)
def radio_options(name: str, options: tuple[tuple[str, str], ...], checked: str | None = None) -> Markup:
    """The ``<label><input type="radio">`` options of one radio group, as markup (the id of the first option is
    ``name``, where the error summary links; the others ``name-value``). Cached: a question page prints dozens of
    these, and each would otherwise escape its fragments one by one in the template.

    >>> print(radio_options("ra-accuracy", (("1", "1"), ("na", "Unable to judge")), "na"))
    <label><input type="radio" name="ra-accuracy" value="1" id="ra-accuracy"> 1</label>
    <label><input type="radio" name="ra-accuracy" value="na" id="ra-accuracy-na" checked> Unable to judge</label>
    <BLANKLINE>
    """
    parts = []
    for position, (value, text) in enumerate(options):
        ident = name if position == 0 else f"{name}-{value}"
        mark = " checked" if value == checked else ""
        parts.append(f'<label><input type="radio" name="{escape_text(name)}" value="{escape_text(value)}" '
                     f'id="{escape_text(ident)}"{mark}> {escape_text(text)}</label>\n')
    return Markup("".join(parts))
