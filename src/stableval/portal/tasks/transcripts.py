"""Agent transcripts as answers: detect, validate and render a JSON list of messages safely.

An answer is either Markdown text or a *transcript*: a JSON list of messages (the first an object with a
``role``), as tool-using agents such as TxAgent (Gao et al. 2025, "TxAgent: An AI Agent for Therapeutic Reasoning
Across a Universe of Tools", arXiv:2503.10970) produce them::

    [{"role": "user", "content": "Dose of X?"},
     {"role": "assistant", "content": "Checking.", "reasoning": "Look up the label.",
      "tool_calls": [{"id": "c1", "name": "fda_label", "arguments": {"drug": "X"}}]},
     {"role": "tool", "tool_call_id": "c1", "name": "fda_label", "content": {"dose": "5 mg"}},
     {"role": "assistant", "content": "**5 mg** daily."}]

Roles: ``system``, ``user``, ``assistant``, ``tool``. ``content`` is text (Markdown) or, for a tool result, any
JSON; ``reasoning`` is optional text; ``tool_calls`` an optional list of ``{"name", "arguments"}`` (OpenAI's nested
``{"function": {"name", "arguments"}}`` is accepted too; ``arguments`` may be a JSON string). Each message renders
as a ``<details>`` block (reasoning and tool calls nested, collapsed); text goes through the portal's sanitising
Markdown renderer and JSON (arguments, tool results) is shown escaped in ``<pre>``.

>>> text = '[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "**Hello**"}]'
>>> len(parse_transcript(text) or [])
2
>>> parse_transcript("[a link](http://x.org) is Markdown") is None
True
>>> "<strong>Hello</strong>" in answer_to_html(text)
True
>>> "&lt;b&gt;" in answer_to_html('[{"role": "tool", "content": {"x": "<b>"}}]')
True
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from markupsafe import escape

from stableval.portal.tasks.render import defang, markdown_to_html

__all__ = ["MAX_MESSAGES", "ROLES", "TranscriptError", "answer_to_html", "check_transcript", "parse_transcript",
           "transcript_problem"]

#: The roles a transcript message may have.
ROLES = ("system", "user", "assistant", "tool")
#: Most messages accepted in one transcript.
MAX_MESSAGES = 500
_ROLE_TITLES = {"system": "System", "user": "User", "assistant": "Assistant", "tool": "Tool result"}


class TranscriptError(ValueError):
    """A transcript that does not follow the format; the message says which message and what is allowed."""


def _looks_like_transcript(text: str) -> Any:
    """The parsed JSON when ``text`` is a JSON list whose first element is an object with a ``role``, else None."""
    stripped = text.lstrip()
    if not stripped.startswith("["):
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, list) and value and isinstance(value[0], dict) and "role" in value[0]:
        return value
    return None


def _call(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise TranscriptError(f"{where} is not an object; use {{\"name\": ..., \"arguments\": {{...}}}}")
    nested = raw.get("function")
    function: dict[str, Any] = nested if isinstance(nested, dict) else raw
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TranscriptError(f"{where} has no name; give the tool's name as text")
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            pass  # shown as the text it is
    return {"id": str(raw.get("id") or ""), "name": name, "arguments": arguments}


def check_transcript(value: Any) -> list[dict[str, Any]]:
    """Validate parsed transcript JSON and return it normalised (tool calls as ``{"id", "name", "arguments"}``).

    >>> try:
    ...     check_transcript([{"role": "bot", "content": "x"}])
    ... except TranscriptError as error:
    ...     print(error)
    message 1: role 'bot' is not one of system, user, assistant, tool
    """
    if not isinstance(value, list) or not value:
        raise TranscriptError("a transcript is a non-empty JSON list of messages")
    if len(value) > MAX_MESSAGES:
        raise TranscriptError(f"{len(value)} messages; at most {MAX_MESSAGES}")
    out = []
    for number, message in enumerate(value, start=1):
        where = f"message {number}"
        if not isinstance(message, dict):
            raise TranscriptError(f"{where} is not an object with role and content")
        role = message.get("role")
        if role not in ROLES:
            raise TranscriptError(f"{where}: role {role!r} is not one of {', '.join(ROLES)}")
        content = message.get("content")
        if role != "tool" and content is not None and not isinstance(content, str):
            raise TranscriptError(f"{where}: content is {type(content).__name__}; a {role} message's content is "
                                  "text (only tool results may be JSON)")
        reasoning = message.get("reasoning")
        if reasoning is not None and not isinstance(reasoning, str):
            raise TranscriptError(f"{where}: reasoning is {type(reasoning).__name__}; it must be text")
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise TranscriptError(f"{where}: tool_calls is not a list")
        if calls and role != "assistant":
            raise TranscriptError(f"{where}: only assistant messages make tool calls (role is {role!r})")
        if content is None and not calls and not reasoning:
            raise TranscriptError(f"{where} is empty: give content, reasoning or tool_calls")
        out.append({"role": role, "content": content, "reasoning": reasoning or "",
                    "name": str(message.get("name") or ""), "tool_call_id": str(message.get("tool_call_id") or ""),
                    "tool_calls": [_call(c, f"{where}, tool call {i}") for i, c in enumerate(calls, start=1)]})
    return out


def parse_transcript(text: str) -> list[dict[str, Any]] | None:
    """The validated transcript when ``text`` is one (raises :class:`TranscriptError` when it looks like one but
    breaks the format), else None (Markdown)."""
    value = _looks_like_transcript(text or "")
    return None if value is None else check_transcript(value)


def transcript_problem(text: str) -> str | None:
    """Why ``text`` is a broken transcript, or None (a valid transcript or plain Markdown): for import checks."""
    try:
        parse_transcript(text)
    except TranscriptError as error:
        return f"transcript {error}"
    return None


def _json_block(value: Any) -> str:
    shown = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
    return f'<pre class="json">{defang(str(escape(shown)))}</pre>'


def _message_html(message: dict[str, Any]) -> str:
    role = message["role"]
    title = _ROLE_TITLES[role] + (f": {message['name']}" if message["name"] else "")
    parts = []
    if message["reasoning"]:
        parts.append(f'<details class="reasoning"><summary>Reasoning</summary><div class="md">'
                     f'{markdown_to_html(message["reasoning"])}</div></details>')
    content = message["content"]
    if role == "tool":
        if content is not None:
            parts.append(_json_block(content))
    elif content:
        parts.append(f'<div class="md">{markdown_to_html(content)}</div>')
    for call in message["tool_calls"]:
        label = f"Tool call: {call['name']}" + (f" ({call['id']})" if call["id"] else "")
        parts.append(f'<details class="tool-call"><summary>{defang(str(escape(label)))}</summary>'
                     f'{_json_block(call["arguments"])}</details>')
    # user and final assistant messages open; system prompts and tool results collapsed
    opened = " open" if role in ("user", "assistant") else ""
    return (f'<details class="message {role}"{opened}><summary>{defang(str(escape(title)))}</summary>'
            f'{"".join(parts)}</details>')


@lru_cache(maxsize=256)
def answer_to_html(text: str) -> str:
    """An answer as sanitised HTML: a transcript as collapsible messages, anything else as Markdown. A broken
    transcript (possible only in data imported before validation) is shown as Markdown text."""
    try:
        transcript = parse_transcript(text or "")
    except TranscriptError:
        transcript = None
    if transcript is None:
        return markdown_to_html(text)
    return '<div class="transcript">' + "".join(_message_html(m) for m in transcript) + "</div>"
