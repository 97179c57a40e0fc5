"""Gold (attention-check) answers of the task types other than pairwise: what the question file's ``gold`` column
holds for each type, and whether a rater's confirmed answer matches it.

A gold question of a task-type track has ``Question.gold`` = :data:`GOLD_MARK` and its known answer in
``Question.payload["gold"]`` (the answer may be longer than the ``gold`` column's 16 characters). Per task type:

* ``single`` — the expected level per criterion: one level of the track's scale (every criterion), or
  ``criterion=level`` pairs separated by ``;`` (only those criteria are checked), or a JSON object
  ``{"accuracy": "correct"}``. One gold judgment per checked criterion; it is correct when the rater chose that
  level ("unable to judge" is not correct).
* ``mcq`` — the correct option letter. One judgment, on the **blind** answer (given before the key is shown):
  correct when the rater ticked exactly that option.
* ``ddx`` — the expected top condition, a name of the track's condition list. One judgment: correct when the
  condition is in the rater's first group (the most likely condition, or one of the equally likely first ones).
* ``rank-documents`` — the known order: item ids, best first (comma-separated or a JSON list; a prefix is
  enough). The first id is the planted best item; one judgment: correct when the rater ranks it first. (Top-1
  rather than a Kendall-tau threshold: an attention check should have one unambiguous answer, and the order of
  the other items is often a matter of judgment.)

This is the gold-standard design of crowdsourcing quality control (Oleson et al., 2011, *Programmatic gold:
targeted and scalable quality assurance in crowdsourcing*, AAAI HCOMP workshop), applied per task type.

>>> gold_score("mcq", "B", {"blind": ["B"]}, ["accuracy"]), gold_score("mcq", "B", {"blind": ["A", "B"]}, [])
((1, 1), (1, 0))
>>> gold_score("single", {"accuracy": "correct", "safety": "partial"},
...            {"levels": {"accuracy": "correct", "safety": "na"}}, ["accuracy", "safety"])
(2, 1)
>>> gold_score("rank-documents", ["d2", "d0"], {"order": ["d2", "d1", "d0"]}, [])
(1, 1)
"""

from __future__ import annotations

import json
import math
from typing import Any

from stableval.errors import InputError

__all__ = ["GOLD_MARK", "gold_score", "gold_summary", "parse_task_gold", "question_gold_text"]

#: ``Question.gold`` of a task-type gold question (its known answer is in ``payload["gold"]``).
GOLD_MARK = "task"


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, str) and not value.strip())


def _maybe_json(value: Any) -> Any:
    """A JSON object or list written as text (CSV cells) is read as JSON; other text stays text."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def parse_task_gold(task: str, value: Any, *, criteria: list[dict[str, str]], scale: list[str] | None,
                    conditions: list[str] | None, payload: dict[str, Any] | None, source: str, row: int) -> Any:
    """The known answer of a ``gold`` cell for a question of this task type (``None``: not a gold question);
    an :class:`InputError` naming the file, row and ``gold`` column when it does not fit the question."""
    if _blank(value):
        return None

    def refuse(problem: str, allowed: str, shown: Any = value) -> InputError:
        text = shown if isinstance(shown, str) else json.dumps(shown, default=str)
        return InputError(problem, file=source, row=row, column="gold", value=text[:80], allowed=allowed)

    if hasattr(value, "item") and not isinstance(value, str | dict | list):  # a numpy scalar from a table
        value = value.item()
    if isinstance(value, float) and value.is_integer():  # a level such as 3 read as a number
        value = int(value)
    value = _maybe_json(value)
    if task == "single":
        return _single_gold(value, criteria, list(scale or []), refuse)
    if task == "mcq":
        letters = list((payload or {}).get("options", {}))
        letter = str(value).strip().upper() if isinstance(value, str | int) else ""
        if letter not in letters:
            raise refuse("the gold answer is not one of the question's options",
                         f"one option letter: {', '.join(letters)} (empty: not a gold question)")
        return letter
    if task == "ddx":
        names = list(conditions or [])
        index = {name.casefold(): i for i, name in enumerate(names)}
        found = index.get(" ".join(str(value).split()).casefold()) if isinstance(value, str) else None
        if found is None:
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            raise refuse("the gold condition is not in the track's condition list",
                         f"one condition name of the track's list ({shown}); empty: not a gold question")
        return found
    if task == "rank-documents":
        items = [item["id"] for item in (payload or {}).get("items", [])]
        order = value if isinstance(value, list) else [v.strip() for v in str(value).split(",")]
        order = [str(v).strip() for v in order]
        if not order or any(v not in items for v in order) or len(set(order)) != len(order):
            raise refuse("the gold order must list item ids of this question, best first, each once",
                         f"item ids, best first, comma-separated or a JSON list (ids here: {', '.join(items)}); "
                         "the first is the planted best item")
        return order
    raise refuse(f"no gold answers for {task} tracks", "no gold column")


def _single_gold(value: Any, criteria: list[dict[str, str]], scale: list[str], refuse: Any) -> dict[str, str]:
    level_of = {level.casefold(): level for level in scale}
    key_of = {c["key"]: c["key"] for c in criteria} | {c["label"].casefold(): c["key"] for c in criteria}
    allowed = (f"one level of the scale ({', '.join(scale)}) for every criterion, or criterion=level pairs "
               f"separated by ';' (criteria: {', '.join(c['key'] for c in criteria)}), or a JSON object")
    if isinstance(value, dict):
        pairs = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, str) and "=" in value:
        pairs = [tuple(p.split("=", 1)) for p in value.split(";") if p.strip()]  # type: ignore[misc]
    elif isinstance(value, str | int):
        pairs = [(c["key"], str(value)) for c in criteria]
    else:
        raise refuse("the gold answer is not a level", allowed)
    out: dict[str, str] = {}
    for name, level in pairs:
        name, level = " ".join(str(name).split()), " ".join(str(level).split()) if isinstance(level, str) else level
        key = key_of.get(name.casefold())
        found = level_of.get(str(level).casefold()) if isinstance(level, str | int) else None
        if key is None or found is None or key in out:
            raise refuse(f"bad gold level {name}={level}" if key is None or found is None
                         else f"criterion {key} twice", allowed)
        out[key] = found
    if not out:
        raise refuse("the gold answer names no criterion", allowed)
    return out


def gold_score(task: str, gold: Any, answer: dict[str, Any] | None, criteria: list[str]) -> tuple[int, int]:
    """(gold judgments, correct ones) of one confirmed answer (``Submission.payload``) to a gold question."""
    answer = answer or {}
    if task == "single":
        levels = answer.get("levels") or {}
        checked = [key for key in criteria if key in (gold or {})]
        return len(checked), sum(levels.get(key) == gold[key] for key in checked)
    if task == "mcq":
        return 1, int(list(answer.get("blind") or []) == [gold])
    if task == "ddx":
        groups = answer.get("groups") or []
        return 1, int(bool(groups) and gold in groups[0])
    if task == "rank-documents":
        order = answer.get("order") or []
        return 1, int(bool(order) and bool(gold) and order[0] == gold[0])
    raise ValueError(f"no gold answers for {task!r}")


def gold_summary(task: str, gold: Any, conditions: list[str] | None = None) -> str:
    """The known answer as the admin's question table shows it.

    >>> gold_summary("single", {"accuracy": "correct"}), gold_summary("ddx", 1, ["Eczema", "Psoriasis"])
    ('accuracy=correct', 'Psoriasis')
    """
    if gold is None:
        return ""
    if task == "single":
        return "; ".join(f"{k}={v}" for k, v in dict(gold).items())
    if task == "ddx":
        names = list(conditions or [])
        return names[gold] if isinstance(gold, int) and 0 <= gold < len(names) else str(gold)
    if task == "rank-documents":
        return " > ".join(str(v) for v in gold)
    return str(gold)


def question_gold_text(track: Any, question: Any) -> str:
    """The known answer of a gold question as the admin's question table shows it (any task type; "" for a
    regular question)."""
    if not question.gold:
        return ""
    if track.task_type == "pairwise":
        return str(question.gold)
    return gold_summary(track.task_type, (question.payload or {}).get("gold"),
                        (track.task_options or {}).get("conditions"))
