"""Relabeled MedQA ratings: the clinicians' answers per question and the three flags derived from each rating.

Data: ``medqa_relabelling.csv`` of the Med-Gemini MedQA relabelling (Saab et al. 2024, "Capabilities of Gemini
Models in Medicine", arXiv:2404.18416, App. C.2; github.com/Google-Health/med-gemini-medqa-relabelling, annotations
CC BY 4.0): at least 3 clinicians per MedQA (USMLE, 4-option) test question answered it blind, then saw the key
and could change their answer.

Per rating (one row of the CSV) three flags are derived:

* **missing_info** — ``important_info_missing`` is TRUE (``missing="info_missing"``: the rater's ``info_missing``
  flag, whether or not the missing information is important; :data:`MISSING_OPTION`).
* **label_error** — the rater does not accept the key after seeing it. The rater's *final answers* are
  ``seen_answers`` when ``seen_change`` is TRUE (empty when ``seen_answerable`` is FALSE: the rater, having seen
  the key, judged no option correct) and ``blind_answers`` otherwise (the rater saw the key and kept the blind
  answer). The flag is set when the key (``answer_idx``) is not among the final answers; a rater with no final
  answer accepts no key.
* **multiple_answers** — the final answers contain more than one option.

The study that votes on these flags over bootstrapped raters is :mod:`stableval.studies.medqa`.

>>> import io
>>> csv = io.StringIO(
...     "qid,worker_id,answer_idx,blind_answerable,blind_answers,info_missing,important_info_missing,"
...     "seen_change,seen_answerable,seen_answers\\n"
...     "1,a,A,TRUE,['A'],FALSE,FALSE,FALSE,,\\n"
...     "1,b,A,TRUE,['B'],FALSE,FALSE,FALSE,,\\n"
...     "2,a,C,TRUE,['B'],FALSE,FALSE,TRUE,TRUE,\\"['B', 'C']\\"\\n")
>>> ratings = load_medqa(csv)
>>> ratings.flags.astype(int).tolist()     # missing_info, label_error, multiple_answers per rating
[[0, 0, 0], [0, 1, 0], [0, 0, 1]]
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from stableval.data.files import read_table_file
from stableval.datasets.medqa_format import LETTERS, MISSING_OPTION, REASONS, REQUIRED
from stableval.errors import InputError

__all__ = ["LETTERS", "MISSING_OPTION", "REASONS", "REQUIRED", "MedQARatings", "answer_text", "load_medqa",
           "read_medqa_predictions"]

_TRUE = {"true": True, "false": False, "1": True, "0": False}


@dataclass(frozen=True, eq=False)
class MedQARatings:
    """Relabeled MedQA ratings, grouped by question.

    Attributes:
        qids: the N question ids (text, sorted numerically when they are numbers).
        key: (N,) MedQA's key per question as a code 0..3 (A..D).
        offsets: (N+1,) the ratings of question ``i`` are rows ``offsets[i]:offsets[i+1]`` of the arrays below.
        worker: (M,) rater id per rating.
        final_answers: (M, 4) bool, the rater's final answer set (see the module docstring).
        flags: (M, 3) bool, ``missing_info``, ``label_error``, ``multiple_answers`` per rating.
        source: the file read. notes: what reading found (inconsistent rows, counts).
        blind_answers: (M, 4) bool, the answers given before seeing the key (all False: none given).
        changed: (M,) bool, ``seen_change``: the rater changed the answer after seeing the key.
        missing: the column read as the ``missing_info`` flag (:data:`MISSING_OPTION`).
    """

    qids: pd.Index
    key: np.ndarray
    offsets: np.ndarray
    worker: np.ndarray
    final_answers: np.ndarray
    flags: np.ndarray
    source: str = "<memory>"
    notes: tuple[str, ...] = field(default=())
    blind_answers: np.ndarray | None = None
    changed: np.ndarray | None = None
    missing: str = "important_info_missing"

    @property
    def n_questions(self) -> int:
        return len(self.qids)

    @property
    def n_ratings(self) -> int:
        return int(self.worker.size)

    @property
    def question(self) -> np.ndarray:
        """(M,) the question index of each rating."""
        return np.repeat(np.arange(self.n_questions), np.diff(self.offsets))

    def flag_counts(self) -> pd.DataFrame:
        """One row per question: ``qid, key, ratings`` and how many ratings carry each flag."""
        question = self.question
        frame = pd.DataFrame({"qid": self.qids, "key": np.asarray(LETTERS)[self.key],
                              "ratings": np.diff(self.offsets)})
        for r, reason in enumerate(REASONS):
            frame[reason] = np.bincount(question, weights=self.flags[:, r], minlength=self.n_questions).astype(int)
        return frame


def _parse_bool(frame: pd.DataFrame, column: str, *, source: str, allow_empty: bool = False) -> np.ndarray:
    text = frame[column].astype(str).str.strip().str.lower()
    mapped = text.map(_TRUE)
    bad = mapped.isna() & ~((text == "") & allow_empty)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError("not a boolean", file=source, row=row + 1, column=column, value=frame[column].iloc[row],
                         allowed="TRUE or FALSE" + (" (or empty)" if allow_empty else ""))
    return text.isin(["true", "1"]).to_numpy()


def _parse_answers(frame: pd.DataFrame, column: str, *, source: str) -> np.ndarray:
    """(M, 4) bool from list-valued text such as ``['B', 'A']``; parsed with ast.literal_eval, never eval."""
    text = frame[column].astype(str).str.strip()
    code, uniques = pd.factorize(text)
    table = np.zeros((len(uniques), len(LETTERS)), dtype=bool)
    for u, value in enumerate(uniques):
        if value in ("", "[]", "nan"):
            continue
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            parsed = None
        if not isinstance(parsed, list | tuple) or not all(str(x).strip() in LETTERS for x in parsed):
            row = int(np.flatnonzero(code == u)[0])
            raise InputError("not a list of answer letters", file=source, row=row + 1, column=column, value=value,
                             allowed="a list such as ['B'] or ['B', 'A'] of letters A, B, C, D, or empty")
        for letter in parsed:
            table[u, LETTERS.index(str(letter).strip())] = True
    return table[code]


def _sort_key(values: pd.Index) -> np.ndarray:
    numbers = pd.to_numeric(pd.Series(values), errors="coerce")
    if numbers.notna().all():
        return np.argsort(numbers.to_numpy(), kind="stable")
    return np.argsort(values.to_numpy().astype(str), kind="stable")


def answer_text(answers: np.ndarray) -> np.ndarray:
    """(M,) text of (M, 4) bool answer sets: ``"A"``, ``"A,C"``, ``""`` for none.

    >>> answer_text(np.array([[1, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]], dtype=bool)).tolist()
    ['A', 'A,C', '']
    """
    code = answers.astype(np.int64) @ (1 << np.arange(len(LETTERS)))
    table = np.array([",".join(x for b, x in enumerate(LETTERS) if c >> b & 1) for c in range(1 << len(LETTERS))],
                     dtype=object)
    return np.asarray(table[code])


def load_medqa(path: str | os.PathLike[str] | IO[str], *, missing: str = "important_info_missing") -> MedQARatings:
    """Read ``medqa_relabelling.csv`` (columns in its SOURCE.md); extra columns are ignored. ``missing`` names the
    column read as the missing-information flag (:data:`MISSING_OPTION`: ``important_info_missing`` or
    ``info_missing``).

    Errors (with file, row, column, value and what is allowed): a missing column, a non-boolean flag, an answer
    list that is not a list of A–D, a key that is not A–D or differs between the rows of one question, and the
    same worker rating one question twice. Inconsistent but usable rows are counted in ``notes``.
    """
    source = path if isinstance(path, str | os.PathLike) else "<stream>"
    source = str(source)
    try:
        missing = MISSING_OPTION.check(missing)
    except ValueError as error:
        raise InputError(str(error), option="reason", value=missing, allowed=MISSING_OPTION.constraint) from None
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError("file not found", file=source, allowed="the medqa_relabelling.csv file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read as CSV: {' '.join(str(error).split())}", file=source) from None
    required = dict.fromkeys([*REQUIRED, missing])
    absent = [c for c in required if c not in frame.columns]
    if absent:
        raise InputError(f"missing column(s): {', '.join(absent)}", file=source, value=list(frame.columns),
                         allowed="the columns of medqa_relabelling.csv: " + ", ".join(required))
    if len(frame) == 0:
        raise InputError("no data rows", file=source)
    qid = frame["qid"].astype(str).str.strip()
    worker = frame["worker_id"].astype(str).str.strip()
    for column, values in (("qid", qid), ("worker_id", worker)):
        if (values == "").any():
            row = int(np.flatnonzero((values == "").to_numpy())[0])
            raise InputError("empty id", file=source, row=row + 1, column=column, allowed="a non-empty id")
    key_text = frame["answer_idx"].astype(str).str.strip()
    key = pd.Index(LETTERS).get_indexer(pd.Index(key_text))
    if np.any(key < 0):
        row = int(np.flatnonzero(key < 0)[0])
        raise InputError("key is not an option letter", file=source, row=row + 1, column="answer_idx",
                         value=key_text.iloc[row], allowed="A, B, C or D")
    pair = qid + "\x00" + worker
    if pair.duplicated().any():
        row = int(np.flatnonzero(pair.duplicated().to_numpy())[0])
        raise InputError("the same worker rated this question twice", file=source, row=row + 1,
                         column="worker_id", value=worker.iloc[row], allowed="one rating per (qid, worker_id)")
    important = _parse_bool(frame, missing, source=source)
    final, blind, changed, notes = _final_answers(frame, source=source)
    ratings = _by_question(qid, key, key_text, worker, important, final, source=source, notes=notes)
    order = _rating_order(qid)
    return replace(ratings, blind_answers=blind[order], changed=changed[order], missing=missing)


def _final_answers(frame: pd.DataFrame, *, source: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(M, 4) bool final answers of each rating (the seen answers after a change, else the blind ones), the blind
    answers, ``seen_change``, and notes on inconsistent but usable rows."""
    changed = _parse_bool(frame, "seen_change", source=source)
    seen_answerable = _parse_bool(frame, "seen_answerable", source=source, allow_empty=True)
    blind = _parse_answers(frame, "blind_answers", source=source)
    seen = _parse_answers(frame, "seen_answers", source=source)
    notes = []
    ignored_seen = ~changed & seen.any(axis=1)
    if ignored_seen.any():
        notes.append(f"{int(ignored_seen.sum())} rating(s) list seen_answers without seen_change; "
                     "their blind answers are used")
    odd = changed & seen_answerable & ~seen.any(axis=1)
    if odd.any():
        notes.append(f"{int(odd.sum())} rating(s) have seen_answerable TRUE but no seen_answers; "
                     "they accept no key")
    rejected = changed & ~seen.any(axis=1)
    if rejected.any():
        notes.append(f"{int(rejected.sum())} rating(s) changed to 'no option answers the question' after "
                     "seeing the key; they count as rejecting the key")
    return np.where(changed[:, None], seen, blind), blind, changed, notes


def _rating_order(qid: pd.Series) -> np.ndarray:
    """The file rows of the ratings in question order (as :func:`_by_question` orders them)."""
    code, uniques = pd.factorize(qid)
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[_sort_key(pd.Index(uniques))] = np.arange(len(uniques))
    return np.argsort(rank[code], kind="stable")


def _by_question(qid: pd.Series, key: np.ndarray, key_text: pd.Series, worker: pd.Series, important: np.ndarray,
                 final: np.ndarray, *, source: str, notes: list[str]) -> MedQARatings:
    """Group the ratings by question (numeric qid order when the ids are numbers), check that each question has
    one key, and derive the three flags of every rating."""
    code, uniques = pd.factorize(qid)
    order_q = _sort_key(pd.Index(uniques))
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[order_q] = np.arange(len(uniques))
    question = rank[code]
    per_question_key = np.full(len(uniques), -1)
    first = np.unique(question, return_index=True)[1]      # each question's first row sets its key
    per_question_key[question[first]] = key[first]
    conflict = per_question_key[question] != key
    if conflict.any():
        row = int(np.flatnonzero(conflict)[0])
        raise InputError("key differs between ratings of the same question", file=source, row=row + 1,
                         column="answer_idx", value=key_text.iloc[row],
                         allowed=f"{LETTERS[per_question_key[question[row]]]} (as on the other rows of qid "
                                 f"{qid.iloc[row]})")
    order = _rating_order(qid)
    sizes = np.bincount(question, minlength=len(uniques))
    final = final[order]
    key_rows = key[order]
    flags = np.column_stack([
        important[order],
        ~final[np.arange(final.shape[0]), key_rows],
        final.sum(axis=1) > 1,
    ])
    return MedQARatings(
        qids=pd.Index(np.asarray(uniques, dtype=object)[order_q], dtype=object),
        key=per_question_key.astype(np.int64), offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        worker=worker.to_numpy()[order], final_answers=final, flags=flags, source=source, notes=tuple(notes),
    )


def read_medqa_predictions(path: str | os.PathLike[str]) -> pd.Series:
    """A predictions file with columns ``qid`` and ``answer`` (one option letter A–D per question; any case)."""
    source = str(path)
    frame = read_table_file(Path(path))
    for column in ("qid", "answer"):
        if column not in frame.columns:
            raise InputError("missing column", file=source, column=column, value=list(frame.columns),
                             allowed="columns qid and answer (one option letter A–D per question)")
    qid = frame["qid"].astype(str).str.strip()
    answer = frame["answer"].astype(str).str.strip().str.upper()
    bad = ~answer.isin(LETTERS)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError("answer is not an option letter", file=source, row=row + 1, column="answer",
                         value=frame["answer"].iloc[row], allowed="A, B, C or D")
    if qid.duplicated().any():
        row = int(np.flatnonzero(qid.duplicated().to_numpy())[0])
        raise InputError("question answered twice", file=source, row=row + 1, column="qid", value=qid.iloc[row],
                         allowed="one answer per qid")
    return pd.Series(answer.to_numpy(), index=qid.to_numpy(), name=source)
