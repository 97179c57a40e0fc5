"""Reading test collections and generated answers, whatever their format, and the directory layout of a collection.

A test collection (:class:`~stableval.nrp.testcollection.TestCollection`) is read from a directory:

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
:func:`read_collection` recognises the LiveQA medical data (:mod:`stableval.nrp.liveqa`) by its three pool folders
and the Webis release of the NRP paper (:mod:`stableval.nrp.webis`) by its ``dataset/`` folder, and hands them to
their readers. Any other file of the directory is named in the collection's notes, never passed over silently.

Generated answers (:func:`read_answers`) are CSV/TSV/JSONL/Parquet with ``qid, model, prompt, answer_id, text``
(``prompt`` and ``answer_id`` optional; an optional numeric ``params`` column gives the model size), checked by
:func:`stableval.nrp.answers.answers_from_frame`; the Webis release's answer folder and MEDIQA 2019 XML are read too.

The building blocks keep their homes (:mod:`~stableval.nrp.testcollection`, :mod:`~stableval.nrp.liveqa`,
:mod:`~stableval.nrp.answers`) and are importable from here as well.

>>> import tempfile
>>> import pandas as pd
>>> c = collection_from_frames(
...     queries=pd.DataFrame({"qid": ["1"], "query": ["flu symptoms"]}),
...     documents=pd.DataFrame({"docno": ["d1", "d2"], "text": ["fever and cough", "tax forms"]}),
...     judgments=pd.DataFrame({"qid": ["1", "1"], "docno": ["d1", "d2"], "grade": [2, 0]}))
>>> back = read_collection(write_collection(c, tempfile.mkdtemp()))
>>> back.n_questions, back.n_documents, back.dimensions
(1, 2, ('relevance',))
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stableval.data.files import read_table_file
from stableval.errors import InputError
from stableval.nrp.answers import ANSWER_COLUMNS, answers_from_frame
from stableval.nrp.liveqa import (
    LIVEQA_GRADES,
    LIVEQA_POOLS,
    LIVEQA_QUERY_FIELDS,
    is_liveqa_folder,
    read_liveqa,
    read_liveqa_references,
    read_mediqa_answers,
)
from stableval.nrp.testcollection import (
    CLEF_CREDIBILITY,
    CLEF_DIMENSIONS,
    TestCollection,
    clef_grade_map,
    collection_from_frames,
    qrels_dimension,
    read_grade_map,
    read_qrels,
    read_topics,
    require_columns,
    unread_note,
)
from stableval.nrp.webis import read_webis_answers, read_webis_release, webis_dataset_folder

#: This module's readers and writer, and the names it re-exports from their homes (existing imports keep working).
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


def _find(directory: Path, stem: str) -> Path | None:
    for suffix in _TABLE_SUFFIXES:
        if (directory / f"{stem}{suffix}").is_file():
            return directory / f"{stem}{suffix}"
    return None


def read_collection(path: str | Path, *, pool: str = "merged", query_field: str = "paraphrase",
                    missing_text: str = "error", grade_map: str | Path | None = None) -> TestCollection:
    """Read a test collection directory (layout in the module docstring), the LiveQA medical data or the Webis
    release of the NRP paper as shipped (:func:`stableval.nrp.webis.read_webis_release`).

    ``pool`` and ``query_field`` apply to LiveQA only (see :func:`read_liveqa`). ``grade_map``: a table read by
    :func:`read_grade_map`; by default the directory's ``grade-map.csv`` when there is one. Credibility read from
    CLEF eHealth's ``qcredibility.txt`` maps grade 3 ("unable to judge") to unjudged unless the grade map says
    otherwise (:data:`CLEF_CREDIBILITY`). Files of the directory that are not read are named in ``notes``.
    """
    directory = Path(path)
    if not directory.is_dir():
        raise InputError("test collection must be a directory", file=str(directory),
                         allowed="a directory with queries.csv, documents.csv and qrels.txt (or judgments.csv)")
    if is_liveqa_folder(directory):
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
        queries = read_topics(queries_path)
    else:
        raise InputError("no queries file", file=str(directory),
                         allowed="queries.csv|tsv|jsonl (qid, query) or topics.txt")
    require_columns(queries, ("qid", "query"), str(queries_path), "queries")
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


def _documents_table(documents: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The documents table with ``docno, text`` (a ``docid`` column, as the Webis release writes, is the docno)."""
    if "docno" not in documents.columns and "docid" in documents.columns:
        documents = documents.rename(columns={"docid": "docno"})
    return require_columns(documents, ("docno", "text"), str(path), "documents")


def write_collection(collection: TestCollection, directory: str | Path) -> Path:
    """Write ``collection`` in the directory layout that :func:`read_collection` reads back."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    collection.queries.to_csv(directory / "queries.csv", index=False)
    collection.documents.to_csv(directory / "documents.csv", index=False)
    collection.judgments.to_csv(directory / "judgments.csv", index=False)
    return directory


def read_answers_table(path: str | Path) -> pd.DataFrame:
    """The raw answers table (any columns, e.g. a human ``grade``), unchecked; see :func:`read_answers`. A folder
    of ``<model>_rankings.csv`` files is the Webis release's answers (:func:`stableval.nrp.webis.read_webis_answers`),
    an ``.xml`` file MEDIQA 2019 graded answers (:func:`read_mediqa_answers`).
    """
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
