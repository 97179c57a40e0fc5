"""The test collection NRP ranks answers against, and the building blocks every format's reader shares.

A **test collection** (Heineking et al. 2024, "Ranking Generated Answers", section 2) holds questions ``Q``, for
each question the human-written documents ``D_q`` that were judged for it, and one or more graded quality
dimensions (relevance, readability, credibility, ...). :func:`collection_from_frames` checks and builds one from
three frames. The readers (a directory: :mod:`stableval.nrp.collection`; LiveQA: :mod:`stableval.nrp.liveqa`; the
Webis release: :mod:`stableval.nrp.webis`) use the pieces here: TREC qrels (:func:`read_qrels`,
:func:`qrels_dimension`) and topics (:func:`read_topics`), grade maps (raw grade -> gain; CLEF eHealth's "unable to
judge" as unjudged: :func:`clef_grade_map`) and the note naming the files a reader left unread (:func:`unread_note`).

>>> import pandas as pd
>>> c = collection_from_frames(
...     queries=pd.DataFrame({"qid": ["1"], "query": ["flu symptoms"]}),
...     documents=pd.DataFrame({"docno": ["d1", "d2"], "text": ["fever and cough", "tax forms"]}),
...     judgments=pd.DataFrame({"qid": ["1", "1"], "docno": ["d1", "d2"], "grade": [2, 0]}))
>>> c.n_questions, c.n_documents, c.dimensions
(1, 2, ('relevance',))
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from stableval.data.files import read_table_file
from stableval.errors import InputError

__all__ = [
    "CLEF_CREDIBILITY",
    "CLEF_DIMENSIONS",
    "GradeMap",
    "TestCollection",
    "clef_grade_map",
    "collection_from_frames",
    "qrels_dimension",
    "read_grade_map",
    "read_qrels",
    "read_topics",
    "require_columns",
    "unread_note",
]


@dataclass(frozen=True)
class TestCollection:
    """Questions, judged documents and graded judgments.

    ``queries``: ``qid, query``; ``documents``: ``docno, text`` (one row per distinct docno);
    ``judgments``: ``qid, docno, dimension, grade`` (one row per judged pair and dimension, grade >= 0);
    ``notes``: what was merged, dropped or recoded while reading, with counts; ``grade_maps``: per dimension, the
    raw grade -> gain map applied while reading (``None``: unjudged; a dimension without one was read as gains).
    """

    __test__ = False  # not a pytest class

    name: str
    queries: pd.DataFrame
    documents: pd.DataFrame
    judgments: pd.DataFrame
    notes: tuple[str, ...] = field(default=())
    grade_maps: Mapping[str, Mapping[float, float | None]] = field(default_factory=dict)

    @property
    def dimensions(self) -> tuple[str, ...]:
        return tuple(pd.unique(self.judgments["dimension"]))

    @property
    def n_questions(self) -> int:
        return len(self.queries)

    @property
    def n_documents(self) -> int:
        return len(self.documents)

    def pool(self) -> pd.DataFrame:
        """Every (question, judged document) pair once: ``qid, query, docno, text``, sorted by qid then docno."""
        pairs = self.judgments[["qid", "docno"]].drop_duplicates()
        out = pairs.merge(self.queries, on="qid").merge(self.documents, on="docno")
        return out.sort_values(["qid", "docno"], kind="stable").reset_index(drop=True)[
            ["qid", "query", "docno", "text"]]

    def qrels(self, dimension: str) -> pd.DataFrame:
        """Judgments of one dimension: ``qid, docno, grade``."""
        if dimension not in self.dimensions:
            raise InputError("unknown quality dimension", value=dimension,
                             allowed=", ".join(self.dimensions))
        part = self.judgments[self.judgments["dimension"] == dimension]
        return part[["qid", "docno", "grade"]].reset_index(drop=True)

    def subset(self, qids: Sequence[str]) -> TestCollection:
        """The collection restricted to some questions."""
        keep = set(map(str, qids))
        judgments = self.judgments[self.judgments["qid"].isin(keep)].reset_index(drop=True)
        documents = self.documents[self.documents["docno"].isin(set(judgments["docno"]))].reset_index(drop=True)
        queries = self.queries[self.queries["qid"].isin(keep)].reset_index(drop=True)
        return replace(self, queries=queries, documents=documents, judgments=judgments)


#: A grade map: per dimension, raw grade -> gain (``None``: "unjudged", the judgment is dropped).
GradeMap = dict[str, dict[float, float | None]]


def read_grade_map(path: str | Path) -> GradeMap:
    """Read a grade map table with columns ``dimension, grade, gain``; a gain of ``unjudged`` (or empty) marks
    grades that are not judgments (e.g. CLEF eHealth credibility 3, "unable to judge").

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "grade-map.csv"
    >>> _ = p.write_text("dimension,grade,gain\\ncredibility,0,0\\ncredibility,1,1\\ncredibility,3,unjudged\\n")
    >>> read_grade_map(p)
    {'credibility': {0.0: 0.0, 1.0: 1.0, 3.0: None}}
    """
    frame = read_table_file(path)
    require_columns(frame, ("dimension", "grade", "gain"), str(path), "grade map")
    out: GradeMap = {}
    for row, (dimension, grade, gain) in enumerate(frame[["dimension", "grade", "gain"]].itertuples(index=False),
                                                   start=1):
        raw = pd.to_numeric(pd.Series([grade]), errors="coerce").iloc[0]
        text = "" if pd.isna(gain) else str(gain).strip()
        value = pd.to_numeric(pd.Series([text]), errors="coerce").iloc[0] if text not in ("", "unjudged") else None
        if pd.isna(raw) or (text not in ("", "unjudged") and (pd.isna(value) or value < 0)):
            raise InputError("grade map row is not 'dimension, grade, gain'", file=str(path), row=row,
                             column="grade" if pd.isna(raw) else "gain", value=grade if pd.isna(raw) else gain,
                             allowed="a numeric grade and a gain >= 0 or 'unjudged'")
        out.setdefault(str(dimension), {})[float(raw)] = None if value is None else float(value)
    return out


def _apply_grade_map(judgments: pd.DataFrame, grade_map: GradeMap, file: str | None,
                     notes: list[str]) -> pd.DataFrame:
    """Recode the grades of each mapped dimension; drop the "unjudged" ones (counted in ``notes``)."""
    grade = pd.to_numeric(judgments["grade"], errors="coerce").to_numpy(dtype=float)
    gain = grade.copy()
    drop = np.zeros(len(judgments), dtype=bool)
    dims = judgments["dimension"].to_numpy()
    for dimension, mapping in grade_map.items():
        rows = dims == dimension
        known = np.isin(grade, np.array(list(mapping), dtype=float))
        bad = rows & ~known
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"grade not in the grade map of dimension {dimension!r} ({int(bad.sum())} judgment(s))",
                             file=file, row=row + 1, column="grade", value=judgments["grade"].iloc[row],
                             allowed=", ".join(f"{g:g}" for g in mapping))
        for raw, value in mapping.items():
            hit = rows & (grade == raw)
            if value is None:
                drop |= hit
            else:
                gain[hit] = value
        if (rows & drop).any():
            notes.append(f"{dimension}: {int((rows & drop).sum())} judgment(s) with a grade mapped to 'unjudged' "
                         "left out (not counted as gains)")
    return judgments.assign(grade=gain)[~drop].reset_index(drop=True)


def collection_from_frames(queries: pd.DataFrame, documents: pd.DataFrame, judgments: pd.DataFrame, *,
                           name: str = "collection", missing_text: str = "error",
                           notes: Sequence[str] = (), file: str | None = None,
                           grade_map: GradeMap | None = None) -> TestCollection:
    """Validate and build a :class:`TestCollection`.

    ``judgments`` needs ``qid, docno, grade`` (``dimension`` defaults to ``relevance``). A judged document without
    a text is an error unless ``missing_text="drop"``, which drops its judgments and says how many in ``notes``.
    Questions without any judged document are kept out of the pool and counted in ``notes``. ``grade_map``
    (:func:`read_grade_map`) recodes grades to gains per dimension before the checks; grades mapped to
    "unjudged" are dropped, so they count neither in nDCG nor in ``D_q`` (unless judged in another dimension).
    """
    if missing_text not in ("error", "drop"):
        raise ValueError(f"missing_text must be 'error' or 'drop', not {missing_text!r}")
    notes = list(notes)
    queries = require_columns(queries, ("qid", "query"), file, "queries")
    blank = queries["query"].isna() | (queries["query"].astype(str).str.strip() == "")
    if blank.any():  # an empty query scores every text alike: every answer would get NRP 0.5 by ties alone
        row = int(np.flatnonzero(blank.to_numpy())[0])
        raise InputError(f"question text is empty ({int(blank.sum())} question(s): "
                         f"{', '.join(map(str, queries.loc[blank, 'qid']))})", file=file, row=row + 1,
                         column="query", value=queries["qid"].iloc[row], allowed="a non-empty query for every qid")
    queries = queries.astype({"qid": str, "query": str})
    documents = require_columns(documents, ("docno", "text"), file, "documents").astype({"docno": str})
    judgments = require_columns(judgments, ("qid", "docno", "grade"), file, "judgments")
    if "dimension" not in judgments.columns:
        judgments = judgments.assign(dimension="relevance")
    judgments = judgments[["qid", "docno", "dimension", "grade"]].astype(
        {"qid": str, "docno": str, "dimension": str})
    if grade_map:
        judgments = _apply_grade_map(judgments, grade_map, file, notes)
    grade = pd.to_numeric(judgments["grade"], errors="coerce")
    bad = ~np.isfinite(grade.to_numpy(dtype=float)) | (grade.to_numpy(dtype=float) < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"grade is not a non-negative number ({int(bad.sum())} row(s) in all)", file=file,
                         row=row + 1, column="grade", value=judgments["grade"].iloc[row],
                         allowed="a number >= 0 (recode negative grades first)")
    judgments = judgments.assign(grade=grade.astype(float))
    for frame, key, what in ((queries, ["qid"], "queries"), (documents, ["docno"], "documents"),
                             (judgments, ["qid", "docno", "dimension"], "judgments")):
        dup = frame.duplicated(key)
        if dup.any():
            row = int(np.flatnonzero(dup.to_numpy())[0])
            raise InputError(f"duplicate {'/'.join(key)} in {what} ({int(dup.sum())} row(s) in all)", file=file,
                             row=row + 1, column=key[-1], value=frame[key[-1]].iloc[row],
                             allowed=f"each {'/'.join(key)} once")
    text = documents["text"]
    empty = text.isna() | (text.astype(str).str.strip() == "")
    if empty.any():
        row = int(np.flatnonzero(empty.to_numpy())[0])
        raise InputError(f"document text is empty ({int(empty.sum())} document(s) in all)", file=file,
                         row=row + 1, column="text", value=documents["docno"].iloc[row],
                         allowed="a non-empty text for every document")
    documents = documents.assign(text=text.astype(str))
    unknown_q = ~judgments["qid"].isin(set(queries["qid"]))
    if unknown_q.any():
        row = int(np.flatnonzero(unknown_q.to_numpy())[0])
        raise InputError(f"judgment for a question that is not in the queries ({int(unknown_q.sum())} row(s))",
                         file=file, row=row + 1, column="qid", value=judgments["qid"].iloc[row],
                         allowed="a qid listed in the queries")
    no_text = ~judgments["docno"].isin(set(documents["docno"]))
    if no_text.any():
        if missing_text == "error":
            row = int(np.flatnonzero(no_text.to_numpy())[0])
            raise InputError(f"judged document has no text ({int(no_text.sum())} judgment(s), "
                             f"{judgments.loc[no_text, 'docno'].nunique()} document(s) in all)", file=file,
                             row=row + 1, column="docno", value=judgments["docno"].iloc[row],
                             allowed="a docno listed in the documents (or missing_text='drop')")
        notes.append(f"dropped {int(no_text.sum())} judgment(s) of {judgments.loc[no_text, 'docno'].nunique()} "
                     "document(s) without text")
        judgments = judgments[~no_text]
    unjudged = ~queries["qid"].isin(set(judgments["qid"]))
    if unjudged.any():
        notes.append(f"{int(unjudged.sum())} question(s) have no judged document and are left out")
        queries = queries[~unjudged]
    used = documents["docno"].isin(set(judgments["docno"]))
    if (~used).any():
        notes.append(f"{int((~used).sum())} document(s) are judged for no question and are left out")
        documents = documents[used]
    return TestCollection(name, queries.reset_index(drop=True)[["qid", "query"]],
                          documents.reset_index(drop=True)[["docno", "text"]],
                          judgments.reset_index(drop=True), tuple(notes), dict(grade_map or {}))


def require_columns(frame: pd.DataFrame, columns: Sequence[str], file: str | None, what: str) -> pd.DataFrame:
    """``frame`` itself when it has ``columns``; else an :class:`~stableval.errors.InputError` naming the missing
    ones and ``what`` the table is.

    >>> require_columns(pd.DataFrame({"qid": ["1"]}), ("qid", "query"), None, "queries")
    Traceback (most recent call last):
    ...
    stableval.errors.InputError: queries: missing column(s) query: got ['qid']; allowed: columns qid, query
    """
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{what}: missing column(s) {', '.join(missing)}", file=file,
                         value=list(map(str, frame.columns)), allowed=f"columns {', '.join(columns)}")
    return frame


def read_qrels(path: str | Path, *, dimension: str = "relevance") -> pd.DataFrame:
    """Read TREC qrels (``qid iter docno grade``, whitespace separated) into ``qid, docno, dimension, grade``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = p.write_text("1 0 d1 2\\n1 0 d2 0\\n")
    >>> read_qrels(p)["grade"].tolist()
    [2.0, 0.0]
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("qrels file not found", file=str(path), allowed="a TREC qrels file: qid 0 docno grade")
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [line.split() for line in lines]
    for number, parts in enumerate(rows, start=1):
        if parts and len(parts) != 4:
            raise InputError(f"qrels line has {len(parts)} fields", file=str(path), row=number,
                             value=lines[number - 1][:80], allowed="4 fields: qid iteration docno grade")
    numbers = [number for number, parts in enumerate(rows, start=1) if parts]  # the file's line of each row
    rows = [parts for parts in rows if parts]
    if not rows:
        raise InputError("qrels file has no lines", file=str(path), allowed="lines 'qid 0 docno grade'")
    frame = pd.DataFrame(rows, columns=["qid", "iter", "docno", "grade"])
    grade = pd.to_numeric(frame["grade"], errors="coerce")
    values = grade.to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"grade is not a non-negative number ({int(bad.sum())} line(s) in all)", file=str(path),
                         row=numbers[row], column="grade", value=str(frame["grade"].iloc[row]),
                         allowed="a finite number >= 0 (an integer grade)")
    return frame.assign(grade=grade.astype(float), dimension=dimension)[["qid", "docno", "dimension", "grade"]]


def read_topics(path: str | Path) -> pd.DataFrame:
    """Read TREC-style topics (``<topic><id>..</id><query>..</query></topic>``) into ``qid, query``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "topics.txt"
    >>> _ = p.write_text("<topics><topic><id>7</id><query>flu &amp; fever</query></topic></topics>")
    >>> read_topics(p).values.tolist()
    [['7', 'flu & fever']]
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    topics = re.findall(r"<topic>.*?</topic>", text, flags=re.S)
    rows = []
    for number, topic in enumerate(topics, start=1):
        qid = re.search(r"<id>(.*?)</id>", topic, flags=re.S)
        query = re.search(r"<query>(.*?)</query>", topic, flags=re.S)
        if qid is None or query is None:
            raise InputError("topic without <id> or <query>", file=str(path), row=number, value=topic[:60],
                             allowed="<topic><id>..</id><query>..</query></topic>")
        rows.append((qid.group(1).strip(), html.unescape(" ".join(query.group(1).split()))))
    if not rows:
        raise InputError("no <topic> elements", file=str(path), allowed="TREC-style <topics><topic>...")
    return pd.DataFrame(rows, columns=["qid", "query"])


#: CLEF eHealth names its per-dimension qrels ``q<dimension>.txt`` (2021: ``qcredibility.txt``, ``qreadability.txt``).
CLEF_DIMENSIONS = ("credibility", "readability", "understandability", "trustworthiness")
#: CLEF eHealth 2021 credibility: 0 not, 1 somewhat, 2 highly credible, 3 "I am not able to judge" (not a grade).
CLEF_CREDIBILITY: GradeMap = {"credibility": {0.0: 0.0, 1.0: 1.0, 2.0: 2.0, 3.0: None}}
#: Files that document a folder rather than hold its data (never reported as unread).
_DOCUMENTATION = re.compile(r"(?i)(readme|licen[cs]e|source|notice)(\..*)?|.*\.(md|rst)")


def qrels_dimension(name: str) -> str | None:
    """The quality dimension a TREC qrels file holds, from its name (``None``: not a qrels file name).

    >>> [qrels_dimension(n) for n in ("qrels.txt", "qrels-readability.txt", "qcredibility.txt", "queries.txt")]
    ['relevance', 'readability', 'credibility', None]
    """
    match = re.fullmatch(r"qrels(?:[-_](.+))?\.txt", name)
    if match:
        return match.group(1) or "relevance"
    match = re.fullmatch(rf"q({'|'.join(CLEF_DIMENSIONS)})\.txt", name)
    return match.group(1) if match else None


def unread_note(directory: Path, read: Sequence[Path], *, known: Mapping[str, str] | None = None) -> list[str]:
    """Notes on the entries of ``directory`` that were not read: one naming the ``known`` files present (name ->
    why it is not read) and a warning naming every other unread entry (documentation files aside), so no data
    file is passed over silently.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("qrels.txt", "notes.xlsx", "README.md", "old.txt"):
    ...     _ = (folder / name).write_text("")
    >>> [note.split(" (in ")[0] for note in unread_note(folder, [folder / "qrels.txt"], known={"old.txt": "stale"})]
    ["not read in ...: 'old.txt' (stale)", "warning: not read, not a recognised collection file: 'notes.xlsx'"]
    """
    used = {path.resolve() for path in read}
    known = known or {}
    skipped, others = [], []
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith(".") or entry.resolve() in used or _DOCUMENTATION.fullmatch(entry.name):
            continue
        if entry.name in known:
            skipped.append(f"{entry.name!r} ({known[entry.name]})")
        else:
            others.append(repr(entry.name + ("/" if entry.is_dir() else "")))
    notes = [f"not read in {directory.name}/: {'; '.join(skipped)}"] if skipped else []
    if others:
        notes.append(f"warning: not read, not a recognised collection file: {', '.join(others)} (in {directory})")
    return notes



def clef_grade_map(path: str | Path | None, *, credibility_file: bool, notes: list[str]) -> GradeMap | None:
    """The grade map to read a collection with: the table at ``path`` (:func:`read_grade_map`) and, when the
    credibility judgments come from CLEF eHealth's ``qcredibility.txt`` and the table does not map credibility,
    :data:`CLEF_CREDIBILITY` (grade 3, "unable to judge", is unjudged), said in ``notes``."""
    mapping = read_grade_map(path) if path is not None else {}
    if credibility_file and "credibility" not in mapping:
        mapping = {**CLEF_CREDIBILITY, **mapping}
        notes.append("credibility: grade 3 of qcredibility.txt is CLEF eHealth's 'unable to judge', read as "
                     "unjudged by default (a grade map, --grade-map, changes it)")
    return mapping or None
