"""Test collections (questions, judged documents with texts, graded judgments) and generated-answer files.

A **test collection** is what NRP ranks answers against (Heineking et al. 2024, "Ranking Generated Answers",
section 2): questions ``Q``, for each question the human-written documents ``D_q`` that were judged for it, and
one or more graded quality dimensions (relevance, readability, credibility, ...). It is read from a directory:

===========================  ===============================================================================
file                         content
===========================  ===============================================================================
``queries.{csv,tsv,jsonl}``  columns ``qid, query`` (or a TREC-style ``topics.txt`` with ``<id>``/``<query>``)
``documents.{csv,tsv,jsonl}`` columns ``docno`` (or ``docid``), ``text``
``qrels.txt``                TREC qrels ``qid 0 docno grade`` -> dimension ``relevance``
``qrels-<dim>.txt``          the same for dimension ``<dim>`` (``qrels_<dim>.txt``, CLEF's ``q<dim>.txt`` also)
``judgments.{csv,...}``      alternatively: columns ``qid, docno, grade`` and optionally ``dimension``
``grade-map.csv``            optional: ``dimension, grade, gain`` (gain ``unjudged``: not a judgment)
===========================  ===============================================================================

Grades are non-negative numbers used as gains; ``D_q`` is every document judged for ``q`` in any dimension.
The LiveQA medical data (``read_liveqa``) is recognised by its three pool folders and merged per question; the
Webis release of the NRP paper (:mod:`stableval.nrp.webis`) by its ``dataset/`` folder. Any other file of the
directory is named in the collection's notes, never passed over silently.

Generated answers (``read_answers``) are CSV/TSV/JSONL/Parquet with ``qid, model, prompt, answer_id, text``
(``prompt`` and ``answer_id`` optional; an optional numeric ``params`` column gives the model size).

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
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from stableval.data.files import read_table_file
from stableval.errors import InputError

__all__ = [
    "ANSWER_COLUMNS",
    "CLEF_CREDIBILITY",
    "CLEF_DIMENSIONS",
    "LIVEQA_GRADES",
    "LIVEQA_POOLS",
    "LIVEQA_QUERY_FIELDS",
    "TestCollection",
    "answers_from_frame",
    "clef_grade_map",
    "collection_from_frames",
    "qrels_dimension",
    "read_answers",
    "read_answers_table",
    "read_collection",
    "read_grade_map",
    "read_liveqa",
    "read_liveqa_references",
    "read_mediqa_answers",
    "read_qrels",
    "unread_note",
    "write_collection",
]

_TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet")
#: Columns of an answers frame after reading (``params`` is NaN when no size is given).
ANSWER_COLUMNS = ("qid", "model", "prompt", "answer_id", "text", "params")
#: LiveQA pools, by folder: TREC 2017 participants (NIST), MedQuAD (NLM), CHiQA / MEDIQA 2019 (NLM).
LIVEQA_POOLS = {"trec": "trec2017_liveqa", "medquad": "medquad_judged", "mediqa": "mediqa2019_liveqamed"}


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


# ================================================================================== building and checks
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
    _require(frame, ("dimension", "grade", "gain"), str(path), "grade map")
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
    queries = _require(queries, ("qid", "query"), file, "queries")
    blank = queries["query"].isna() | (queries["query"].astype(str).str.strip() == "")
    if blank.any():  # an empty query scores every text alike: every answer would get NRP 0.5 by ties alone
        row = int(np.flatnonzero(blank.to_numpy())[0])
        raise InputError(f"question text is empty ({int(blank.sum())} question(s): "
                         f"{', '.join(map(str, queries.loc[blank, 'qid']))})", file=file, row=row + 1,
                         column="query", value=queries["qid"].iloc[row], allowed="a non-empty query for every qid")
    queries = queries.astype({"qid": str, "query": str})
    documents = _require(documents, ("docno", "text"), file, "documents").astype({"docno": str})
    judgments = _require(judgments, ("qid", "docno", "grade"), file, "judgments")
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


def _require(frame: pd.DataFrame, columns: Sequence[str], file: str | None, what: str) -> pd.DataFrame:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{what}: missing column(s) {', '.join(missing)}", file=file,
                         value=list(map(str, frame.columns)), allowed=f"columns {', '.join(columns)}")
    return frame


# ================================================================================== reading a directory
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
    rows = [parts for parts in rows if parts]
    if not rows:
        raise InputError("qrels file has no lines", file=str(path), allowed="lines 'qid 0 docno grade'")
    frame = pd.DataFrame(rows, columns=["qid", "iter", "docno", "grade"])
    grade = pd.to_numeric(frame["grade"], errors="coerce")
    if grade.isna().any():
        row = int(np.flatnonzero(grade.isna().to_numpy())[0])
        raise InputError("grade is not a number", file=str(path), row=row + 1, column="grade",
                         value=frame["grade"].iloc[row], allowed="an integer grade")
    return frame.assign(grade=grade.astype(float), dimension=dimension)[["qid", "docno", "dimension", "grade"]]


def _find(directory: Path, stem: str) -> Path | None:
    for suffix in _TABLE_SUFFIXES:
        if (directory / f"{stem}{suffix}").is_file():
            return directory / f"{stem}{suffix}"
    return None


def _read_topics(path: Path) -> pd.DataFrame:
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


def read_collection(path: str | Path, *, pool: str = "merged", query_field: str = "paraphrase",
                    missing_text: str = "error", grade_map: str | Path | None = None) -> TestCollection:
    """Read a test collection directory (layout in the module docstring), the LiveQA medical data or the Webis
    release of the NRP paper as shipped (:func:`stableval.nrp.webis.read_webis_release`).

    ``pool`` and ``query_field`` apply to LiveQA only (see :func:`read_liveqa`). ``grade_map``: a table read by
    :func:`read_grade_map`; by default the directory's ``grade-map.csv`` when there is one. Credibility read from
    CLEF eHealth's ``qcredibility.txt`` maps grade 3 ("unable to judge") to unjudged unless the grade map says
    otherwise (:data:`CLEF_CREDIBILITY`). Files of the directory that are not read are named in ``notes``.
    """
    from stableval.nrp.webis import read_webis_release, webis_dataset_folder

    directory = Path(path)
    if not directory.is_dir():
        raise InputError("test collection must be a directory", file=str(directory),
                         allowed="a directory with queries.csv, documents.csv and qrels.txt (or judgments.csv)")
    if all((directory / folder).is_dir() for folder in LIVEQA_POOLS.values()):
        return read_liveqa(directory, pools=pool, query_field=query_field)
    if webis_dataset_folder(directory) is not None:
        return read_webis_release(directory, missing_text=missing_text, grade_map=grade_map)
    queries_path = _find(directory, "queries")
    if queries_path is not None:
        queries = read_table_file(queries_path)
        if "query" not in queries.columns and "text" in queries.columns:
            queries = queries.rename(columns={"text": "query"})
    elif (directory / "topics.txt").is_file():
        queries_path = directory / "topics.txt"
        queries = _read_topics(queries_path)
    else:
        raise InputError("no queries file", file=str(directory),
                         allowed="queries.csv|tsv|jsonl (qid, query) or topics.txt")
    _require(queries, ("qid", "query"), str(queries_path), "queries")
    documents_path = _find(directory, "documents")
    if documents_path is None:
        raise InputError("no documents file", file=str(directory), allowed="documents.csv|tsv|jsonl (docno, text)")
    documents = _documents_table(read_table_file(documents_path), documents_path)
    read = [queries_path, documents_path]
    judgments_path = _find(directory, "judgments")
    parts = []
    if judgments_path is not None:
        parts.append(read_table_file(judgments_path))
        read.append(judgments_path)
    qrels_files = {qrels.name: qrels for qrels in sorted(directory.glob("q*.txt"), key=lambda path: (
        qrels_dimension(path.name) != "relevance", path.name)) if qrels_dimension(qrels.name)}  # relevance first
    for name, qrels in qrels_files.items():
        parts.append(read_qrels(qrels, dimension=str(qrels_dimension(name))))
        read.append(qrels)
    if not parts:
        raise InputError("no judgments", file=str(directory),
                         allowed="qrels.txt / qrels-<dimension>.txt / q<dimension>.txt (TREC) or judgments.csv "
                                 "(qid, docno, grade)")
    if grade_map is None and (directory / "grade-map.csv").is_file():
        grade_map = directory / "grade-map.csv"
    if grade_map is not None:
        read.append(Path(grade_map))
    notes = unread_note(directory, read)
    mapping = clef_grade_map(grade_map, credibility_file="qcredibility.txt" in qrels_files, notes=notes)
    return collection_from_frames(queries, documents, pd.concat(parts, ignore_index=True), name=directory.name,
                                  missing_text=missing_text, file=str(directory), grade_map=mapping, notes=notes)


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


def _documents_table(documents: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The documents table with ``docno, text`` (a ``docid`` column, as the Webis release writes, is the docno)."""
    if "docno" not in documents.columns and "docid" in documents.columns:
        documents = documents.rename(columns={"docid": "docno"})
    return _require(documents, ("docno", "text"), str(path), "documents")


def write_collection(collection: TestCollection, directory: str | Path) -> Path:
    """Write ``collection`` in the directory layout that :func:`read_collection` reads back."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    collection.queries.to_csv(directory / "queries.csv", index=False)
    collection.documents.to_csv(directory / "documents.csv", index=False)
    collection.judgments.to_csv(directory / "judgments.csv", index=False)
    return directory


# ================================================================================== LiveQA medical
def _qnum(qid: str) -> str:
    return qid[2:] if qid.startswith("TQ") else qid


#: LiveQA question fields usable as the query, by ``query_field`` name; an empty one falls back to the next.
LIVEQA_QUERY_FIELDS = {"paraphrase": "NIST-PARAPHRASE", "summary": "NLM-Summary",
                       "original": "Original-Question/SUBJECT + Original-Question/MESSAGE"}
#: LiveQA grades (1 Incorrect, 2 Related, 3 Incomplete, 4 Excellent; TREC's -2 unintelligible) as gains.
LIVEQA_GRADES: GradeMap = {"relevance": {-2.0: 0.0, 1.0: 0.0, 2.0: 1.0, 3.0: 2.0, 4.0: 3.0}}


def _liveqa_field(question: ET.Element, name: str) -> str:
    if name == "original":
        text = f"{question.findtext('Original-Question/SUBJECT') or ''} " \
               f"{question.findtext('Original-Question/MESSAGE') or ''}"
    else:
        text = question.findtext(LIVEQA_QUERY_FIELDS[name]) or ""
    return " ".join(text.split())


def _read_liveqa_questions(directory: Path, query_field: str,
                           notes: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Questions (``qid, query``) and reference answers. A question whose ``query_field`` is empty (3 of the 104
    have no NIST paraphrase) takes the next non-empty field instead, named with its qids in ``notes``."""
    path = directory / LIVEQA_POOLS["trec"] / "TestDataset" / "TREC-2017-LiveQA-Medical-Test-Questions-w-summaries.xml"
    if not path.is_file():
        raise InputError("LiveQA question file not found", file=str(path), allowed="the TREC 2017 LiveQA files")
    if query_field not in LIVEQA_QUERY_FIELDS:
        raise InputError("unknown query field", value=query_field, allowed=", ".join(LIVEQA_QUERY_FIELDS))
    order = [query_field, *(name for name in ("summary", "paraphrase", "original") if name != query_field)]
    root = ET.parse(path).getroot()
    queries, references = [], []
    fallback: dict[str, list[str]] = {}
    for question in root.iter("NLM-QUESTION"):
        qid = _qnum(question.get("qid", ""))
        for name in order:
            query = _liveqa_field(question, name)
            if query:
                break
        if name != query_field:
            fallback.setdefault(name, []).append(qid)
        queries.append((qid, query))
        for answer in [*question.iter("ReferenceAnswer"), *question.iter("RefAnswer")]:
            text = " ".join((answer.findtext("ANSWER") or "").split())
            if text:
                references.append((qid, "reference", "-", answer.get("aid", ""), text))
    for name, qids in fallback.items():
        if notes is not None:
            notes.append(f"warning: query field {query_field} is empty for {len(qids)} question(s) "
                         f"({', '.join(qids)}): their {name} is the query instead")
    refs = pd.DataFrame(references, columns=["qid", "model", "prompt", "answer_id", "text"]).assign(params=np.nan)
    return pd.DataFrame(queries, columns=["qid", "query"]), refs


def _liveqa_trec(directory: Path) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    path = directory / LIVEQA_POOLS["trec"] / "TestDataset" / "TREC-2017-LiveQA-Medical-qrels-NIST-692.txt"
    rows = [line.rstrip("\n").split(" ", 2) for line in path.read_text(encoding="utf-8").splitlines() if line]
    frame = pd.DataFrame(rows, columns=["qid", "grade", "text"])
    frame["grade"] = frame["grade"].astype(int)
    frame["text"] = frame["text"].str.strip()
    n = len(frame)
    frame = frame.drop_duplicates(["qid", "text"])
    # the line is the id; number the distinct texts per question
    frame["docno"] = "trec-" + frame["qid"] + "-" + (frame.groupby("qid").cumcount() + 1).astype(str)
    unintelligible = int((frame["grade"] == -2).sum())
    notes = [f"trec: {n - len(frame)} repeated (question, text) line(s) merged (same judgment)",
             f"trec: {unintelligible} answer(s) judged -2 (unintelligible) get gain 0"]
    return frame[["qid", "docno", "grade"]], frame[["docno", "text"]], notes


def _liveqa_medquad(directory: Path) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    folder = directory / LIVEQA_POOLS["medquad"]
    qrels = pd.read_csv(folder / "All-qrels_LiveQAMed2017-TestQuestions_2479_Judged-Answers.txt", sep=" ",
                        header=None, names=["qid", "grade", "answer"], dtype=str)
    texts = pd.read_csv(folder / "All-2479-Answers-retrieved-from-MedQuAD.csv", dtype=str)
    qrels["grade"] = qrels["grade"].str.split("-").str[0].astype(int)
    n = len(qrels)
    qrels = qrels.groupby(["qid", "answer"], as_index=False, sort=False).agg(grade=("grade", "max"))
    texts = texts.drop_duplicates("AnswerID")
    # strip the "Question: ..." and "URL: ..." lines (the MedQuAD question would otherwise match the query)
    body = texts["Answer"].str.replace(r"(?s)^\s*Question:.*?\bAnswer:\s*", "", regex=True).str.strip()
    docs = pd.DataFrame({"docno": "medquad-" + texts["AnswerID"], "text": body})
    qrels["docno"] = "medquad-" + qrels["answer"]
    notes = [f"medquad: {n - len(qrels)} (question, answer) pair(s) judged twice with different grades: "
             "the higher grade is kept"]
    return qrels[["qid", "docno", "grade"]], docs, notes


def _liveqa_mediqa(directory: Path) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    path = directory / LIVEQA_POOLS["mediqa"] / "MEDIQA2019-Task3-QA-TrainingSet1-LiveQAMed.xml"
    root = ET.parse(path).getroot()
    rows = []
    for question in root.iter("Question"):
        qid = question.get("QID", "")
        for answer in question.iter("Answer"):
            rows.append((qid, "mediqa-" + answer.get("AID", ""), int(answer.get("ReferenceScore", "0")),
                         " ".join((answer.findtext("AnswerText") or "").split())))
    frame = pd.DataFrame(rows, columns=["qid", "docno", "grade", "text"])
    return frame[["qid", "docno", "grade"]], frame[["docno", "text"]], []


def read_liveqa(path: str | Path, *, pools: str | Sequence[str] = "merged", query_field: str = "paraphrase",
                ) -> TestCollection:
    """Read the LiveQA medical questions with one or more judged pools, merged per question.

    The 104 TREC 2017 LiveQA medical test questions (Ben Abacha et al. 2017) were judged in three pools, all on
    1 Incorrect, 2 Related, 3 Incomplete, 4 Excellent: ``trec`` (participants' answers, NIST), ``medquad``
    (MedQuAD answers, Ben Abacha & Demner-Fushman 2019) and ``mediqa`` (CHiQA answers, MEDIQA 2019).
    Gain = max(grade - 1, 0) (:data:`LIVEQA_GRADES`, kept in ``grade_maps``), so Incorrect and the TREC "-2
    unintelligible" give 0 and Excellent 3. Repeated TREC texts are merged, MedQuAD pairs judged twice keep the
    higher grade, and MedQuAD's ``Question:``/``URL:`` header lines are stripped; ``notes`` counts each. Document
    ids are prefixed by the pool (``trec-``, ``medquad-``, ``mediqa-``). ``query_field``: ``paraphrase`` (NIST,
    default), ``summary`` (NLM) or ``original`` (subject + message); a question whose field is empty takes the
    next non-empty one (summary, paraphrase, original), named in ``notes`` (3 of the 104 questions have no NIST
    paraphrase). ``pools``: one name, several (a list or ``"trec,medquad"``) or ``merged``.
    :func:`read_liveqa_references` gives the expert reference answers.
    """
    directory = Path(path)
    if isinstance(pools, str):
        pools = [part.strip() for part in pools.split(",") if part.strip()]
    names = list(LIVEQA_POOLS) if list(pools) in (["merged"], ["all"]) else list(dict.fromkeys(pools))
    for name in names:
        if name not in LIVEQA_POOLS:
            raise InputError("unknown LiveQA pool", value=name, allowed=", ".join([*LIVEQA_POOLS, "merged"]))
        if not (directory / LIVEQA_POOLS[name]).is_dir():
            raise InputError("LiveQA pool folder not found", file=str(directory / LIVEQA_POOLS[name]),
                             allowed="the liveqa_medical directory with its three pool folders")
    notes: list[str] = []
    queries, _ = _read_liveqa_questions(directory, query_field, notes)
    readers = {"trec": _liveqa_trec, "medquad": _liveqa_medquad, "mediqa": _liveqa_mediqa}
    qrels, docs = [], []
    for name in names:
        q, d, n = readers[name](directory)
        qrels.append(q)
        docs.append(d)
        notes.extend(n)
    judgments = pd.concat(qrels, ignore_index=True)
    documents = pd.concat(docs, ignore_index=True).drop_duplicates("docno")
    empty = documents["text"].fillna("").str.strip() == ""
    if empty.any():
        notes.append(f"{int(empty.sum())} document(s) with an empty text and their judgments are left out")
        documents = documents[~empty]
    judgments = judgments[judgments["docno"].isin(set(documents["docno"]))]
    name = "liveqa-" + ("merged" if len(names) == len(LIVEQA_POOLS) else "+".join(names))
    return collection_from_frames(queries, documents, judgments, name=name, notes=notes, file=str(directory),
                                  grade_map=LIVEQA_GRADES)


def read_mediqa_answers(path: str | Path) -> pd.DataFrame:
    """Graded answers in the MEDIQA 2019 Task 3 XML (``<Question QID>`` with ``<Answer AID ReferenceScore>`` and
    ``<AnswerText>``): ``qid, model`` (``chiqa``, the system that retrieved them), ``answer_id, text`` and
    ``grade``, the raw ReferenceScore (1 Incorrect, 2 Related, 3 Incomplete, 4 Excellent; ``nrp validate
    --answer-grades raw`` recodes it as LiveQA's gains). The LiveQAMed split's QIDs are the LiveQA question numbers.
    """
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as error:
        raise InputError(f"cannot read the XML ({error})", file=str(path),
                         allowed="MEDIQA 2019 Task 3 XML: <Question QID=..><Answer AID=.. ReferenceScore=..>") from None
    rows = [(question.get("QID", ""), "chiqa", answer.get("AID", ""),
             " ".join((answer.findtext("AnswerText") or "").split()), answer.get("ReferenceScore", ""))
            for question in root.iter("Question") for answer in question.iter("Answer")]
    if not rows:
        raise InputError("no <Question><Answer> elements", file=str(path),
                         allowed="MEDIQA 2019 Task 3 XML: <Question QID=..><Answer AID=.. ReferenceScore=..>")
    return pd.DataFrame(rows, columns=["qid", "model", "answer_id", "text", "grade"])


def read_liveqa_references(path: str | Path) -> pd.DataFrame:
    """The LiveQA expert reference answers (1-5 per question) as an answers frame with ``model="reference"``."""
    return _read_liveqa_questions(Path(path), "paraphrase")[1]


# ================================================================================== answers
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


def read_answers_table(path: str | Path) -> pd.DataFrame:
    """The raw answers table (any columns, e.g. a human ``grade``), unchecked; see :func:`read_answers`. A folder
    of ``<model>_rankings.csv`` files is the Webis release's answers (:func:`stableval.nrp.webis.read_webis_answers`),
    an ``.xml`` file MEDIQA 2019 graded answers (:func:`read_mediqa_answers`).
    """
    from stableval.nrp.webis import read_webis_answers

    path = Path(path)
    if path.is_dir() and any(path.glob("*_rankings.csv")):
        return read_webis_answers(path)
    if path.suffix.lower() == ".xml":
        return read_mediqa_answers(path)
    return read_table_file(path)


def read_answers(path: str | Path, *, collection: TestCollection | None = None, unknown: str = "error",
                 notes: list[str] | None = None) -> pd.DataFrame:
    """Read generated answers from CSV/TSV/JSONL/Parquet, or the Webis release's answer folder (see
    :func:`answers_from_frame` and :func:`read_answers_table`)."""
    table = read_answers_table(path)
    if notes is not None:
        notes.extend(table.attrs.get("notes", []))
    return answers_from_frame(table, collection=collection, file=str(path), unknown=unknown, notes=notes)
