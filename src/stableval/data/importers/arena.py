"""Chatbot Arena and FastChat battle logs → pairwise votes.

A battle log is a JSON list, JSON Lines or a Parquet file of battles (the layout of LMSYS's
``chatbot_arena_conversations`` and ``clean_battle`` files, and of FastChat's ``mt_bench_human_judgments``):
``model_a``, ``model_b``, ``winner`` (``model_a``, ``model_b``, ``tie``, or ``tie (bothbad)``/``both_bad``: both
answers were bad), ``judge`` (the voter), ``question_id`` (or ``id``) and ``turn``. Newer exports that give the
winner as three 0/1 columns (``winner_model_a``, ``winner_model_b``, ``winner_tie``) are read too.

Each battle is one vote; a both-bad vote is a tie (counted in the notes). The item is the question id; when a
question was judged at several turns (FastChat's MT-Bench judgments), each (question, turn) is its own item
(``81-turn1``). A battle without a judge is the anonymous voter's.

>>> import json, pathlib, tempfile
>>> from stableval.data.options import InputOptions
>>> path = pathlib.Path(tempfile.mkdtemp()) / "clean_battle.json"
>>> battles = [{"question_id": "a1", "model_a": "gpt-4", "model_b": "vicuna", "winner": "model_a", "judge": "u1"},
...            {"question_id": "a2", "model_a": "vicuna", "model_b": "gpt-4", "winner": "tie (bothbad)",
...             "judge": "u2"}]
>>> _ = path.write_text(json.dumps(battles))
>>> imported = read_arena(path, InputOptions())
>>> imported.frame["winner"].tolist(), imported.notes[-1]
(['a', 'tie'], '1 both-bad vote(s) (both answers bad) counted as ties')
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from stableval.data.files import read_table_file
from stableval.data.importers.imported import Imported, Rows
from stableval.data.importers.records import field, id_text, json_records, record_error
from stableval.data.options import InputOptions

__all__ = ["WINNERS", "read_arena"]

#: Winner values (case-insensitive) → vote winner, and whether the vote says both answers were bad.
WINNERS: dict[str, tuple[str, bool]] = {
    "model_a": ("a", False), "model_b": ("b", False), "tie": ("tie", False),
    "tie (bothbad)": ("tie", True), "both_bad": ("tie", True), "bothbad": ("tie", True),
}
_ONE_HOT = {"winner_model_a": "model_a", "winner_model_b": "model_b", "winner_tie": "tie"}
_COLUMNS = ("question_id", "id", "model_a", "model_b", "winner", "judge", "turn", *_ONE_HOT)
_WHAT = "a battle log: a JSON list, JSON Lines or Parquet of battles with model_a, model_b, winner and judge"
_ALLOWED = "model_a, model_b, tie, tie (bothbad), both_bad"


def _battles(path: str | os.PathLike[str]) -> list[Any]:
    if Path(path).suffix.lower() in (".parquet", ".pq"):
        frame = read_table_file(path, columns=list(_COLUMNS))
        return frame.to_dict("records")
    return json_records(path, what=_WHAT)


def _true(value: Any) -> bool:
    return value is True or id_text(value) in ("1", "true")


def read_arena(path: str | os.PathLike[str], options: InputOptions) -> Imported:
    """Read a battle log (see the module docstring)."""
    source = str(path)
    battles = _battles(path)
    rows = Rows("item", "agent_a", "agent_b", "rater", "winner")
    both_bad = anonymous = 0
    turns: dict[str, set[str]] = defaultdict(set)
    turn_of: list[str | None] = []
    for number, battle in enumerate(battles, start=1):
        agents = []
        for side in ("model_a", "model_b"):
            agent = id_text(field(battle, side, source=source, number=number, what="the model's name"))
            if agent is None:
                raise record_error("empty model name", source=source, record=number, field=side,
                                   value=battle[side], has_value=True, allowed="the model's name")
            agents.append(agent)
        winner, bad = _winner(battle, number, source)
        both_bad += bad
        judge = id_text(battle.get("judge"))
        if judge is None:
            anonymous += 1
            judge = "anonymous"
        qid = id_text(battle.get("question_id"))
        qid = qid if qid is not None else id_text(battle.get("id"))
        item = qid if qid is not None else f"battle{number}"
        turn = id_text(battle.get("turn"))
        turns[item].add(turn or "")
        turn_of.append(turn)
        rows.add(number, item=item, agent_a=agents[0], agent_b=agents[1], rater=judge, winner=winner)
    notes = [f"{len(battles):,} battle(s) read: {len(rows):,} vote(s)"]
    if any(len(seen) > 1 for seen in turns.values()):
        rows.values["item"] = [f"{item}-turn{turn}" if turn else item
                               for item, turn in zip(rows.values["item"], turn_of, strict=True)]
        notes.append("questions judged at several turns: each (question, turn) is its own item, e.g. 81-turn1")
    if anonymous:
        notes.append(f"{anonymous:,} battle(s) without a judge: voter 'anonymous'")
    if both_bad:
        notes.append(f"{both_bad:,} both-bad vote(s) (both answers bad) counted as ties")
    fields = {"item": "question_id", "agent_a": "model_a", "agent_b": "model_b", "rater": "judge",
              "winner": "winner"}
    return rows.imported(fields, notes)


def _winner(battle: dict[str, Any], number: int, source: str) -> tuple[str, bool]:
    value = battle.get("winner")
    if value is None and any(key in battle for key in _ONE_HOT):
        marked = [name for key, name in _ONE_HOT.items() if _true(battle.get(key))]
        if len(marked) != 1:
            raise record_error("exactly one of winner_model_a, winner_model_b, winner_tie must be 1", source=source,
                               record=number, field="winner_model_a", value=[battle.get(k) for k in _ONE_HOT],
                               allowed="one 1 and two 0s")
        value = marked[0]
    text = id_text(value)
    key = text.lower() if text is not None else None
    if key not in WINNERS:
        raise record_error("unknown winner", source=source, record=number, field="winner", value=value,
                           has_value=True, allowed=_ALLOWED)
    return WINNERS[str(key)]
