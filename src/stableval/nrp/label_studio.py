"""Expert rankings from a Label Studio export, and system rankings to compare them with.

A Label Studio "ranker" project export (JSON list of tasks) holds, per task, the items shown
(``data.items[*]`` with ``id``, ``text`` and optionally a ranker ``score``) and each annotation's ranking
(``annotations[*].result[*].value.ranker.rank``, best first). :func:`read_label_studio` turns it into one row per
(task, annotator, item); tasks without a usable annotation and cancelled annotations are counted, not silently
lost. A CSV/TSV/JSONL with ``qid, item, rank`` (1 = best) is accepted too.

System rankings (:func:`read_system_scores`) are a table ``qid, docno|item, score`` (or ``rank``, 1 = best), a
TREC run (``qid Q0 docno rank score tag``) or a directory of per-question CSV files named ``*_<qid>.csv`` with
``docno, score`` (the layout of ``top_k_rankings/top_1_answers_with_original_ranking``). Expert tasks are matched
to system questions by their item ids, so a Label Studio task needs no question id.

>>> import json, tempfile, pathlib
>>> task = {"id": 7, "data": {"query": "flu", "items": [{"id": "x", "score": 0.2}, {"id": "y", "score": 0.9}]},
...         "annotations": [{"completed_by": 1, "was_cancelled": False,
...                          "result": [{"type": "ranker", "value": {"ranker": {"rank": ["x", "y"]}}}]}]}
>>> path = pathlib.Path(tempfile.mkdtemp()) / "export.json"
>>> _ = path.write_text(json.dumps([task]))
>>> read_label_studio(path).frame[["task", "item", "rank", "score"]].to_dict("records")
[{'task': '7', 'item': 'x', 'rank': 1, 'score': 0.2}, {'task': '7', 'item': 'y', 'rank': 2, 'score': 0.9}]
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from stableval.data.files import line_offset, read_table_file, row_error
from stableval.data.files.formats import not_utf8, utf8_problem
from stableval.errors import InputError

__all__ = ["ExpertRankings", "match_tasks", "read_expert_rankings", "read_label_studio", "read_system_scores"]


@dataclass(frozen=True)
class ExpertRankings:
    """``frame``: ``task, query, annotator, item, rank`` (1 = best), ``score`` (the item's stored ranker score or
    NaN); ``notes``: what was left out, with counts."""

    frame: pd.DataFrame
    notes: tuple[str, ...] = field(default=())


def read_label_studio(path: str | Path, *, annotator: str | None = None) -> ExpertRankings:
    """Read a Label Studio ranker export (see the module docstring). ``annotator`` keeps one user's rankings."""
    path = Path(path)
    try:
        tasks = json.loads(_utf8_text(path, "a Label Studio JSON export (UTF-8)"))
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(f"cannot read the Label Studio export ({error})", file=str(path),
                         allowed="a Label Studio JSON export (a list of tasks)") from None
    if not isinstance(tasks, list):
        raise InputError("Label Studio export is not a list of tasks", file=str(path), value=type(tasks).__name__,
                         allowed="the JSON export of a Label Studio project")
    rows = []
    no_annotation = cancelled = other_user = 0
    for number, task in enumerate(tasks, start=1):
        data = task.get("data", {}) if isinstance(task, dict) else {}
        if not isinstance(data, dict):
            raise _malformed(path, number, "data", data, "an object with an items list")
        items = data.get("items")
        if not isinstance(items, list):
            raise InputError("task has no data.items list", file=str(path), row=number, column="data.items",
                             allowed="ranker tasks with data.items")
        scores = {}
        for item in items:
            if not isinstance(item, dict):
                raise _malformed(path, number, "data.items", item, "objects with an id (and a ranker score)")
            score = _number(item.get("score"))
            if score is None:
                raise _malformed(path, number, "data.items.score", item.get("score"), "a finite number, or no score")
            scores[str(item.get("id"))] = score
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            raise _malformed(path, number, "annotations", annotations, "a list of annotation objects")
        if not annotations:
            no_annotation += 1
        for annotation in annotations:
            if not isinstance(annotation, dict):
                raise _malformed(path, number, "annotations", annotation, "annotation objects with a result list")
            if annotation.get("was_cancelled"):
                cancelled += 1
                continue
            user = str(annotation.get("completed_by", ""))
            if annotator is not None and user != annotator:
                other_user += 1
                continue
            ranking = None
            results = annotation.get("result", [])
            for result in results if isinstance(results, list) else [results]:
                if not isinstance(result, dict):
                    raise _malformed(path, number, "annotations.result", result, "result objects with value.ranker")
                value = result.get("value", {})
                ranker = value.get("ranker") if isinstance(value, dict) else None
                if isinstance(ranker, dict):
                    ranking = next(iter(ranker.values()), None)
                    if ranking is not None and not isinstance(ranking, list):
                        raise _malformed(path, number, "annotations.result.value.ranker", ranking,
                                         "a list of item ids, best first")
            if not ranking:
                no_annotation += 1
                continue
            for position, item in enumerate(map(str, ranking), start=1):
                if item not in scores:
                    raise InputError("ranked item is not among the task's items", file=str(path), row=number,
                                     column="annotations.result.value.ranker", value=item,
                                     allowed=", ".join(scores))
                rows.append((str(task.get("id", number)), str(data.get("query", "")), user, item, position,
                             scores[item]))
    if not rows:
        raise InputError("no rankings in the Label Studio export", file=str(path),
                         allowed="completed, not cancelled ranker annotations")
    notes = []
    if no_annotation:
        notes.append(f"{no_annotation} task(s) or annotation(s) without a ranking left out")
    if cancelled:
        notes.append(f"{cancelled} cancelled annotation(s) left out")
    if other_user:
        notes.append(f"{other_user} annotation(s) by other annotators left out")
    frame = pd.DataFrame(rows, columns=["task", "query", "annotator", "item", "rank", "score"])
    return ExpertRankings(frame, tuple(notes))


def _utf8_text(path: Path, allowed: str) -> str:
    """The text of ``path``; a file that is not UTF-8 is refused, naming its first bad line."""
    data = path.read_bytes()
    problem = utf8_problem(data)
    if problem is not None:
        raise not_utf8(path, problem, allowed)
    return data.decode("utf-8")


def _malformed(path: Path, task: int, field: str, value: object, allowed: str) -> InputError:
    """The error for a field of the ``task``-th task (1-based) of a Label Studio export that has the wrong shape."""
    shown = value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else json.dumps(value)
    return InputError(f"{field} is malformed", file=str(path), row=task, column=field, value=shown, allowed=allowed)


def _number(value: object) -> float | None:
    """A stored ranker score as a float: NaN when there is none; None (refused) when it is not a finite number.

    >>> _number(0.5), _number("2"), _number(None), _number([1]), _number("Infinity"), _number(True)
    (0.5, 2.0, nan, None, None, None)
    """
    if value is None:
        return float("nan")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if np.isfinite(number) else None


def _finite_column(table: pd.DataFrame, column: str, file: str, allowed: str, *, whole: bool = False) -> pd.Series:
    """``table[column]`` as numbers; the first value that is not a finite number (or, with ``whole``, not a whole
    number >= 1) is refused, naming its row and line."""
    value = pd.to_numeric(table[column], errors="coerce")
    numbers = value.to_numpy(dtype=float)
    bad = ~np.isfinite(numbers)
    if whole:
        finite = np.where(bad, 1.0, numbers)
        bad |= (finite % 1 != 0) | (finite < 1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise row_error(f"{column} is not a {'whole number >= 1' if whole else 'finite number'}", source=file,
                        row=row + 1, offset=line_offset(table), column=column, value=table[column].iloc[row],
                        allowed=allowed)
    return value


def read_expert_rankings(path: str | Path, *, annotator: str | None = None) -> ExpertRankings:
    """A Label Studio export (``.json``) or a table ``qid, item, rank`` (1 = best; ``annotator`` optional)."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        return read_label_studio(path, annotator=annotator)
    table = read_table_file(path)
    table = table.rename(columns={"qid": "task", "docno": "item"})
    missing = [c for c in ("task", "item", "rank") if c not in table.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", file=str(path), value=list(table.columns),
                         allowed="qid, item, rank (1 = best), or a Label Studio .json export")
    rank = _finite_column(table, "rank", str(path), "1 = best, 2, ...", whole=True)
    frame = pd.DataFrame({"task": table["task"], "query": "", "annotator": table.get("annotator", ""),
                          "item": table["item"], "rank": rank.astype(int), "score": np.nan})
    notes: list[str] = []
    if annotator is not None:
        if "annotator" not in table.columns:
            raise InputError("the table has no annotator column to choose from", file=str(path),
                             value=f"--annotator {annotator}", allowed="a table with an annotator column, or no "
                             "--annotator")
        chosen = frame["annotator"].astype(str) == str(annotator)
        if not chosen.any():
            raise InputError("no rankings by this annotator", file=str(path), column="annotator",
                             value=str(annotator), allowed=", ".join(sorted(frame["annotator"].astype(str).unique())))
        notes.append(f"annotator {annotator}: {int(chosen.sum()):,} of {len(frame):,} ranked items kept")
        frame = frame[chosen]
    return ExpertRankings(frame.sort_values(["task", "annotator", "rank"], kind="stable").reset_index(drop=True),
                          notes=tuple(notes))


def read_system_scores(path: str | Path) -> pd.DataFrame:
    """System rankings as ``qid, item, score`` (higher = better) from a table, a TREC run or a directory."""
    path = Path(path)
    if path.is_dir():
        parts = []
        for file in sorted(path.glob("*.csv")):
            match = re.search(r"_([^_]+)\.csv$", file.name)
            if not match:
                raise InputError("cannot read the question id from the file name", file=str(file),
                                 allowed="files named <prefix>_<qid>.csv")
            table = read_table_file(file)
            parts.append(_scores_from_table(table, str(file)).assign(qid=match.group(1)))
        if not parts:
            raise InputError("no CSV files in the rankings directory", file=str(path),
                             allowed="<prefix>_<qid>.csv files with docno, score")
        return pd.concat(parts, ignore_index=True)[["qid", "item", "score"]]
    if path.suffix.lower() in (".run", ".trec", ".txt"):
        text = _utf8_text(path, "a UTF-8 TREC run: qid Q0 docno rank score tag")
        lines = [line.split() for line in text.splitlines() if line.strip()]
        for number, parts_ in enumerate(lines, start=1):
            if len(parts_) != 6:
                raise InputError(f"TREC run line has {len(parts_)} fields", file=str(path), row=number,
                                 allowed="qid Q0 docno rank score tag")
        run = pd.DataFrame(lines, columns=["qid", "q0", "item", "rank", "score", "tag"])
        score = _finite_column(run, "score", str(path), "a finite number (higher = better)")
        return run.assign(score=score)[["qid", "item", "score"]]
    table = read_table_file(path)
    return _scores_from_table(table, str(path))


def _scores_from_table(table: pd.DataFrame, file: str) -> pd.DataFrame:
    table = table.rename(columns={"docno": "item", "id": "item"})
    if "item" not in table.columns or not ({"score", "rank"} & set(table.columns)):
        raise InputError("missing columns", file=file, value=list(table.columns),
                         allowed="docno (or item) and score (higher = better) or rank (1 = best)")
    column = "score" if "score" in table.columns else "rank"
    value = _finite_column(table, column, file, "a finite number")
    score = value if column == "score" else -value
    return pd.DataFrame({"qid": table["qid"] if "qid" in table.columns else "", "item": table["item"],
                         "score": score.astype(float)})


def match_tasks(expert: pd.DataFrame, system: pd.DataFrame) -> dict[str, str]:
    """Map each expert task to the system question whose items include all of the task's items; a task whose id is
    itself such a question (tables ``qid, item, rank``) maps to it, so item ids may repeat across questions."""
    owner = system.groupby("item")["qid"].agg(lambda s: sorted(set(s)))
    mapping = {}
    for task, items in expert.groupby("task", sort=False)["item"]:
        candidates: set[str] | None = None
        for item in items:
            qids = set(owner.get(item, []))
            candidates = qids if candidates is None else candidates & qids
        if not candidates:
            raise InputError("no system question ranks all items of this expert task", value=str(task),
                             allowed="system rankings containing every expert-ranked item")
        if str(task) in candidates:
            mapping[str(task)] = str(task)
            continue
        if len(candidates) > 1:
            raise InputError("expert task matches several system questions", value=str(task),
                             allowed=f"one of {sorted(candidates)}")
        mapping[str(task)] = next(iter(candidates))
    return mapping
