"""The LiveQA medical data (TREC 2017 LiveQA medical task and its later judged pools) read as a test collection,
and the MEDIQA 2019 Task 3 graded answers.

The 104 test questions come with three judged pools, one folder each (:data:`LIVEQA_POOLS`): ``trec``
(participants' answers, NIST), ``medquad`` (MedQuAD answers) and ``mediqa`` (CHiQA answers, MEDIQA 2019), all
graded 1 Incorrect, 2 Related, 3 Incomplete, 4 Excellent and read as gains (:data:`LIVEQA_GRADES`).
:func:`read_liveqa` merges them per question; :func:`read_liveqa_references` gives the expert reference answers
and :func:`read_mediqa_answers` the graded CHiQA answers as an answers table.

>>> import tempfile
>>> LIVEQA_GRADES["relevance"][4.0], is_liveqa_folder(tempfile.mkdtemp())
(3.0, False)
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.nrp.testcollection import GradeMap, TestCollection, collection_from_frames

__all__ = [
    "LIVEQA_GRADES",
    "LIVEQA_POOLS",
    "LIVEQA_QUERY_FIELDS",
    "is_liveqa_folder",
    "read_liveqa",
    "read_liveqa_references",
    "read_mediqa_answers",
]

#: LiveQA pools, by folder: TREC 2017 participants (NIST), MedQuAD (NLM), CHiQA / MEDIQA 2019 (NLM).
LIVEQA_POOLS = {"trec": "trec2017_liveqa", "medquad": "medquad_judged", "mediqa": "mediqa2019_liveqamed"}


def is_liveqa_folder(path: str | Path) -> bool:
    """Whether ``path`` is the LiveQA medical directory: it holds the three pool folders."""
    return all((Path(path) / folder).is_dir() for folder in LIVEQA_POOLS.values())


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
