"""The text of each item (the question, prompt or conversation), to show beside a diagnosis.

It comes from a column of the ratings file (``--item-text prompt``) or from a file of its own with an item column
and a ``text`` column (``--item-text questions.csv``; any two columns: the first is the item, the second the text).
Each item keeps its first text.

>>> import pandas as pd
>>> frame = pd.DataFrame({"item": ["q1", "q1", "q2"], "rater": ["a", "b", "a"], "prompt": ["Hi?", "Hi?", "Bye?"]})
>>> item_text_from_frame(frame, "prompt", source="ratings.csv").to_dict()
{'q1': 'Hi?', 'q2': 'Bye?'}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from stableval.data.columns import ROLE_ALIASES, resolve_columns
from stableval.data.files import read_table_file
from stableval.errors import InputError

__all__ = ["item_text_from_frame", "read_item_text"]

#: Column names taken as the text in a file of item texts.
TEXT_COLUMNS = ("text", "item_text", "question_text", "prompt_text", "conversation")


def item_text_from_frame(frame: pd.DataFrame, text_column: str, *, source: str,
                         columns: Mapping[str, str] | None = None) -> pd.Series:
    """Item id → text from ``frame``: the item column found as the ratings reader finds it, and ``text_column``."""
    if text_column not in frame.columns:
        raise InputError("no such item text column", file=source, column=text_column, value=list(frame.columns),
                         allowed="for {item_text}: a column of the file, or a file of item texts (columns item, "
                                 "text)", options={"item_text": None})
    found = resolve_columns(frame, {"item": ROLE_ALIASES["item"]}, {"item": columns["item"]}
                            if columns and columns.get("item") else None, source=source)
    item = frame[str(found["item"])].astype(str).str.strip()
    text = frame[text_column].astype("string").fillna("").astype(str)
    table = pd.Series(text.to_numpy(), index=item.to_numpy(), name="text")
    return table[~table.index.duplicated()]


def read_item_text(spec: str | os.PathLike[str], ratings: str | os.PathLike[str] | None = None, *,
                   columns: Mapping[str, str] | None = None, format: str | None = None) -> pd.Series:
    """Item id → text: ``spec`` is a file of item texts if one exists at that path, else a column of ``ratings``
    (read with ``format`` and the item column of ``columns``)."""
    path = Path(spec)
    if path.is_file():
        frame = read_table_file(path)
        text = next((c for c in frame.columns if str(c).strip().lower() in TEXT_COLUMNS), None)
        if text is None and len(frame.columns) == 2:
            text = frame.columns[1]
        if text is None:
            raise InputError("no text column in the item text file", file=str(path), value=list(frame.columns),
                             allowed="columns item and text (or exactly two columns: item, text)",
                             option="item_text")
        if len(frame.columns) == 2 and str(frame.columns[0]).strip().lower() not in ROLE_ALIASES["item"]:
            frame = frame.rename(columns={frame.columns[0]: "item"})
        return item_text_from_frame(frame, str(text), source=str(path))
    if ratings is None:
        raise InputError("item text file not found", file=str(path), option="item_text",
                         allowed="a file of item texts, or a column of the ratings file")
    frame = read_table_file(Path(ratings), format=format)
    return item_text_from_frame(frame, str(spec), source=str(ratings), columns=columns)
