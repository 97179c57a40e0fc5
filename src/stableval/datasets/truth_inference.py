"""Crowdsourcing truth-inference format: ``answer.csv`` (question, worker, answer) + ``truth.csv`` (gold).

Source of the format and of the benchmark folders (``d_Duck_Identification``, ``d_jn-product``, ``d_sentiment``,
``s4_Dog_data``, ``s4_Face_Sentiment_Identification``, ``s4_Relevance``, ``s5_AdultContent``, ...): Y. Zheng,
G. Li, Y. Li, C. Shan, R. Cheng (2017), "Truth Inference in Crowdsourcing: Is the Problem Solved?", PVLDB
10(5):541-552; github.com/zhydhkcws/crowd_truth_infer. License: none stated; the data come from earlier public
crowdsourcing studies (research use; not redistributed with stableval).

Conversion: item = ``question`` (the first column; ``id`` in d_sentiment); rater = ``worker``; label = ``answer``,
integer class codes 0..K-1 with K = 1 + the largest code in the answers or the gold (or the names in ``levels``);
agent = ``agent`` (default: the folder's name), since one labelling task is one "system" here. The same worker
answering the same question twice (S_Rel, S_Adult) follows ``duplicates``: ``"first"`` (default; gives the 89,799
S_Adult answers the paper used), ``"last"``, ``"keep"`` or ``"error"``. Gold rows of questions nobody answered
are left out of ``gold`` and counted in ``table.notes`` (S_Adult: 1,517 gold rows, 333 answered).

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp()) / "toy"
>>> folder.mkdir()
>>> _ = (folder / "answer.csv").write_text("question,worker,answer\\nq1,w1,1\\nq1,w2,0\\nq2,w1,0\\n")
>>> _ = (folder / "truth.csv").write_text("question,truth\\nq1,1\\nq2,0\\nq9,1\\n")
>>> data = load_truth_inference(folder)
>>> data.table.n_judgments, data.table.agents.tolist(), data.gold
(3, ['toy'], {('q1', 'toy'): '1', ('q2', 'toy'): '0'})
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from stableval.data.annotations import annotations_from_frame
from stableval.data.files import read_table_file, row_error
from stableval.data.labels import MAX_INTEGER_LEVELS
from stableval.datasets._common import Dataset, resolve_file
from stableval.errors import InputError
from stableval.wording import plural

__all__ = ["load_truth_inference"]


def _integer_codes(column: pd.Series, *, source: str, name: str) -> np.ndarray:
    """Non-negative integer codes of a text column; the first other value raises with its row."""
    text = column.astype(str).str.strip()
    number = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(number) & (number >= 0) & (number == np.floor(number)) & (number < MAX_INTEGER_LEVELS)
    if not ok.all():
        pos = int(np.flatnonzero(~ok)[0])
        raise row_error(f"not an integer class code ({plural(int((~ok).sum()), 'row')} in all)", source=source,
                        row=pos + 1, offset=1, line_at="problem", column=name, value=str(column.iloc[pos]),
                        has_value=True,
                        allowed=f"integers 0..{MAX_INTEGER_LEVELS - 1}, or pass {{levels}} naming every answer "
                                "value; continuous scales (f201_Emotion) need binning first",
                        options={"levels": "a,b,c"})
    return number.astype(np.int64)


def load_truth_inference(
    path: str | os.PathLike[str],
    *,
    truth: str | os.PathLike[str] | None = None,
    agent: str | None = None,
    levels: Sequence[str] | str | None = None,
    duplicates: str = "first",
) -> Dataset:
    """Read a truth-inference folder (or its ``answer.csv``) and its gold ``truth.csv`` as a :class:`Dataset`.

    Args:
        path: the folder holding ``answer.csv``, or the answer file itself.
        truth: the gold file; default ``truth.csv`` beside the answers (no gold when absent).
        agent: the agent name of every response; default the folder's name.
        levels: level names, worst first, to match answers against; default integer codes 0..K-1.
        duplicates: the same worker answering the same question again: ``"first"``, ``"last"``, ``"keep"``,
            ``"error"``.

    Returns:
        A :class:`Dataset` whose ``gold`` maps ``(question, agent)`` → level name (``None`` without a gold file).
    """
    answers = resolve_file(path, ("answer.csv",), what="answer.csv")
    source = str(answers)
    agent_name = (agent if agent is not None else answers.parent.name).strip() or "crowd"
    frame = read_table_file(answers, format="csv")
    if frame.shape[1] < 3:
        raise InputError(f"need 3 columns (question, worker, answer); found {frame.shape[1]}", file=source,
                         value=[str(c) for c in frame.columns], allowed="header question,worker,answer")
    question_col, worker_col, answer_col = (str(c) for c in frame.columns[:3])
    truth_file = Path(truth) if truth is not None else answers.parent / "truth.csv"
    gold_frame = None
    if truth is not None or truth_file.is_file():
        gold_frame = read_table_file(truth_file, format="csv")
        if gold_frame.shape[1] < 2:
            raise InputError(f"need 2 columns (question, truth); found {gold_frame.shape[1]}", file=str(truth_file),
                             value=[str(c) for c in gold_frame.columns], allowed="header question,truth")
    if levels is None:
        top = int(_integer_codes(frame[answer_col], source=source, name=answer_col).max())
        if gold_frame is not None:
            gold_codes = _integer_codes(gold_frame.iloc[:, 1], source=str(truth_file), name=str(gold_frame.columns[1]))
            top = max(top, int(gold_codes.max()))
        level_names: Sequence[str] | str = [str(v) for v in range(max(top, 1) + 1)]
    else:
        level_names = levels
    judgments = pd.DataFrame({"item": frame[question_col], "agent": agent_name, "rater": frame[worker_col],
                              "label": frame[answer_col]})
    judgments.attrs.update(frame.attrs)
    table = annotations_from_frame(judgments, levels=level_names, duplicates=duplicates, source=source)
    notes = [f"{plural(len(frame), 'answer')} read ({question_col}, {worker_col}, {answer_col}); "
             f"agent {agent_name!r} for every question", *table.notes]
    gold: dict[tuple[str, str], str] | None = None
    if gold_frame is not None:
        gold_source = str(truth_file)
        item = gold_frame.iloc[:, 0].astype(str).str.strip()
        value = gold_frame.iloc[:, 1].astype(str).str.strip()
        unknown = ~value.isin(list(table.levels)).to_numpy()
        if unknown.any():
            pos = int(np.flatnonzero(unknown)[0])
            raise row_error(f"gold label is not one of the levels ({plural(int(unknown.sum()), 'row')} in all)",
                            source=gold_source, row=pos + 1, offset=1, line_at="problem",
                            column=str(gold_frame.columns[1]), value=gold_frame.iloc[pos, 1], has_value=True,
                            allowed=", ".join(table.levels))
        pairs = pd.DataFrame({"item": item, "value": value})
        repeated = pairs.duplicated(["item"], keep="first").to_numpy()
        conflicting = pairs.loc[repeated].merge(pairs.loc[~repeated], on="item", suffixes=("", "_first"))
        conflicting = conflicting.loc[conflicting["value"] != conflicting["value_first"]]
        if len(conflicting):
            first = conflicting.iloc[0]
            raise InputError("two different gold labels for one question", file=gold_source,
                             column=str(gold_frame.columns[0]), value=str(first["item"]),
                             allowed="one gold label per question")
        pairs = pairs.loc[~repeated]
        answered = pairs["item"].isin(table.items).to_numpy()
        gold = dict(zip(zip(pairs["item"].loc[answered], [agent_name] * int(answered.sum()), strict=True),
                        pairs["value"].loc[answered], strict=True))
        notes.append(f"gold: {plural(len(gold_frame), 'row')} in {truth_file.name}; {plural(len(gold), 'question')} "
                     f"with answers kept" + (f"; left out {int((~answered).sum()):,} gold question(s) nobody "
                                             "answered" if (~answered).any() else "")
                     + (f"; {int(repeated.sum()):,} repeated gold row(s) merged" if repeated.any() else ""))
    else:
        notes.append("no gold file (truth.csv) beside the answers")
    from dataclasses import replace

    table = replace(table, notes=tuple(notes))
    n_gold = 0 if gold is None else len(gold)
    description = (f"Truth-inference dataset {answers.parent.name!r} (Zheng et al. 2017 format): "
                   f"{table.n_judgments:,} answers to {table.n_items:,} questions by {table.n_raters:,} workers, "
                   f"{table.n_levels} classes, gold for {n_gold:,} questions.")
    return Dataset(name="truth-inference", table=table, gold=gold, description=description)
