"""Generated answers: the table NRP scores, checked (:func:`answers_from_frame`).

Answers have the columns ``qid, model, prompt, answer_id, text, params`` (:data:`ANSWER_COLUMNS`; ``prompt`` and
``answer_id`` are optional, ``params`` is the model size, NaN when not given). Reading them from files, whatever
the format, is :func:`stableval.nrp.collection.read_answers`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.nrp.testcollection import TestCollection

__all__ = ["ANSWER_COLUMNS", "answers_from_frame"]

#: Columns of an answers frame after reading (``params`` is NaN when no size is given).
ANSWER_COLUMNS = ("qid", "model", "prompt", "answer_id", "text", "params")


def answers_from_frame(frame: pd.DataFrame, *, collection: TestCollection | None = None,
                       file: str | None = None, unknown: str = "error", notes: list[str] | None = None,
                       extra: Sequence[str] = ()) -> pd.DataFrame:
    """Validate generated answers: ``qid, text`` required; ``model`` (default ``-``, one system), ``prompt``
    (default ``-``), ``answer_id`` (default ``<row>``), ``params`` (model size, a number; default NaN) optional.

    Empty texts, duplicate ``answer_id`` and, given ``collection``, questions without judged documents are errors
    naming the first offending row; ``unknown="skip"`` drops the answers to such questions instead and appends
    their count to ``notes``. ``extra``: further columns kept, unchecked, on the same rows (e.g. a human grade).

    >>> import pandas as pd
    >>> answers_from_frame(pd.DataFrame({"qid": ["1"], "model": ["m"], "text": ["hi"]}))[["answer_id", "prompt"]]
      answer_id prompt
    0         1      -
    """
    frame = frame.copy()
    if "question_id" in frame.columns and "qid" not in frame.columns:
        frame = frame.rename(columns={"question_id": "qid"})
    missing = [c for c in ("qid", "text") if c not in frame.columns]
    if missing:
        raise InputError(f"answers: missing column(s) {', '.join(missing)}", file=file,
                         value=list(map(str, frame.columns)),
                         allowed="columns qid, text (and optionally model, prompt, answer_id, params)")
    if unknown not in ("error", "skip"):
        raise ValueError(f"unknown must be 'error' or 'skip', not {unknown!r}")
    if "model" not in frame.columns:
        frame["model"] = "-"
    if "prompt" not in frame.columns:
        frame["prompt"] = "-"
    if "answer_id" not in frame.columns:
        frame["answer_id"] = [str(i) for i in range(1, len(frame) + 1)]
    if "params" not in frame.columns:
        frame["params"] = np.nan
    for column in ("qid", "model", "prompt", "answer_id"):
        blank = frame[column].isna() | (frame[column].astype(str).str.strip() == "")
        if blank.any():
            row = int(np.flatnonzero(blank.to_numpy())[0])
            raise InputError(f"empty {column} ({int(blank.sum())} row(s) in all)", file=file, row=row + 1,
                             column=column, value=frame[column].iloc[row], allowed="a non-empty value")
        frame[column] = frame[column].astype(str).str.strip()
    text = frame["text"]
    empty = text.isna() | (text.astype(str).str.strip() == "")
    if empty.any():
        row = int(np.flatnonzero(empty.to_numpy())[0])
        raise InputError(f"answer text is empty ({int(empty.sum())} row(s) in all)", file=file, row=row + 1,
                         column="text", value=frame["answer_id"].iloc[row],
                         allowed="a non-empty answer (remove failed generations or give them a placeholder)")
    frame["text"] = text.astype(str)
    params = pd.to_numeric(frame["params"], errors="coerce")
    bad = params.isna() & frame["params"].notna() & (frame["params"].astype(str).str.strip() != "")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError("params (model size) is not a number", file=file, row=row + 1, column="params",
                         value=frame["params"].iloc[row], allowed="a number of parameters, e.g. 7e9, or empty")
    frame["params"] = params.astype(float)
    dup = frame.duplicated("answer_id")
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(f"duplicate answer_id ({int(dup.sum())} row(s) in all)", file=file, row=row + 1,
                         column="answer_id", value=frame["answer_id"].iloc[row], allowed="each answer_id once")
    if collection is not None:
        known = set(collection.queries["qid"])
        absent = ~frame["qid"].isin(known)
        if absent.any() and unknown == "skip":
            if notes is not None:
                notes.append(f"skipped {int(absent.sum())} answer(s) to {frame.loc[absent, 'qid'].nunique()} "
                             f"question(s) not in {collection.name}")
            frame = frame[~absent]
        elif absent.any():
            row = int(np.flatnonzero(absent.to_numpy())[0])
            raise InputError(f"question not in the test collection ({int(absent.sum())} answer(s), "
                             f"{frame.loc[absent, 'qid'].nunique()} question(s) in all)", file=file,
                             row=row + 1, column="qid", value=frame["qid"].iloc[row],
                             allowed=f"a qid with judged documents in {collection.name} (or "
                                     "--skip-unknown-questions)")
    kept = [*ANSWER_COLUMNS, *(c for c in dict.fromkeys(extra) if c not in ANSWER_COLUMNS)]
    return frame[kept].reset_index(drop=True)

