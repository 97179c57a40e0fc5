"""The data release of the NRP paper read as shipped (Heineking et al., "Ranking Generated Answers", ECIR 2025;
the repository ``webis-de/ecir25-ranking-generated-answers``): CLEF eHealth 2021 topics and assessments, the
crawled pages and the ranked answers of eight LLMs.

======================================================================  ==========================================
file of the release                                                     read as
======================================================================  ==========================================
``dataset/topics/topics.txt`` (TREC XML, 50 topics)                      the questions
``dataset/assessments/qrels.txt`` (0/1/2)                                relevance
``dataset/assessments/qcredibility.txt`` (0/1/2; 3 "unable to judge")   credibility; 3 is unjudged by default
``dataset/assessments/qreadability.txt`` (0/1/2)                         readability
``dataset/Webdoc/data/txt_min_length_50.tsv`` (or ``.tsv.zip``)          the documents (``docid, text``)
``top_k_rankings/top_1_answers_with_original_ranking/qid_<id>.csv``      the texts of the judged pages among
                                                                        each topic's top 5, when the full texts
                                                                        are absent
``indexing/results/monoT5/<model>_rankings.csv``                         the answers (:func:`read_webis_answers`)
======================================================================  ==========================================

The other files of the assessments and topics folders are named in the notes (:data:`NOT_READ` says why each
known one is not read); an unknown file is reported as such. The crawled texts are a Git LFS file of the release,
so a copy may lack them: then only the judged pages among the top 5 of each topic have a text, and reading says so
(``missing_text="drop"`` ranks among those).

>>> sorted(NOT_READ)[:2]
['assessed_docs.csv', 'patients-topics.txt']
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stableval.errors import InputError
from stableval.nrp.testcollection import (
    TestCollection,
    clef_grade_map,
    collection_from_frames,
    qrels_dimension,
    read_qrels,
    read_topics,
    unread_note,
)

__all__ = ["NOT_READ", "TEXT_FILES", "read_webis_answers", "read_webis_release", "webis_dataset_folder"]

#: The release's judgment files, in the order they are read.
QRELS_FILES = ("qrels.txt", "qcredibility.txt", "qreadability.txt")
#: Where the release keeps the crawled page texts (``docid, text``), relative to ``dataset/``.
TEXT_FILES = ("Webdoc/data/txt_min_length_50.tsv", "Webdoc/data/txt_min_length_50.tsv.zip")
#: The top-ranked pages and answers per topic, with their texts (relative to the release root).
TOP_K_FOLDER = "top_k_rankings/top_1_answers_with_original_ranking"
#: Files of the release's topics and assessments folders that are known and not read, and why.
NOT_READ = {
    "qrels_cred_read.txt": "the three qrels files joined: the same judgments",
    "qrels_cred_read_rel2.txt": "a 4-line excerpt of the joined qrels with page texts",
    "assessed_docs.csv": "CommonCrawl records of the judged pages, no texts",
    "topics_narrative.txt": "the 55 topics with narratives; topics.txt holds the 50 with judged pages",
    "topics  all.txt": "the 55 topics; topics.txt holds the 50 with judged pages",
    "patients-topics.txt": "30 of the 55 topics",
    "reddit-topics.txt": "25 of the 55 topics",
}


def webis_dataset_folder(path: str | Path) -> Path | None:
    """The release's ``dataset`` folder when ``path`` is the release (or that folder), else ``None``."""
    path = Path(path)
    for folder in (path / "dataset", path):
        if (folder / "assessments" / "qrels.txt").is_file() and (folder / "topics" / "topics.txt").is_file():
            return folder
    return None


def _page_texts(dataset: Path, root: Path, judged: set[str], notes: list[str]) -> tuple[pd.DataFrame, Path]:
    """The page texts: the crawled TSV when the release has it, else the judged pages of the top-k files."""
    for name in TEXT_FILES:
        path = dataset / name
        if path.is_file():
            frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
            if "docid" not in frame.columns or "text" not in frame.columns:
                raise InputError("page texts: missing column(s)", file=str(path), value=list(frame.columns),
                                 allowed="docid, text (the release's format_as_tsv.py output)")
            return frame.rename(columns={"docid": "docno"})[["docno", "text"]], path
    folder = root / TOP_K_FOLDER
    files = sorted(folder.glob("qid_*.csv")) if folder.is_dir() else []
    parts = [pd.read_csv(file, dtype=str, keep_default_na=False, usecols=["docno", "text"]) for file in files]
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["docno", "text"])
    frame = frame[frame["docno"].isin(judged)].drop_duplicates("docno")
    notes.append(f"warning: the crawled page texts ({dataset / TEXT_FILES[1]}) are not here: {len(frame)} of "
                 f"{len(judged)} judged pages have a text (those among the top 5 of each topic, in {TOP_K_FOLDER})")
    return frame, dataset / TEXT_FILES[1]


def read_webis_release(path: str | Path, *, missing_text: str = "error",
                       grade_map: str | Path | None = None) -> TestCollection:
    """Read the release at ``path`` (its root or its ``dataset`` folder) as a test collection with the dimensions
    relevance, credibility and readability (credibility 3, "unable to judge", unjudged unless ``grade_map`` maps
    credibility). Without the crawled texts, a judged page without text is an error naming what to do, unless
    ``missing_text="drop"`` (its judgments are left out and counted)."""
    root = Path(path)
    dataset = webis_dataset_folder(root)
    if dataset is None:
        raise InputError("not the Webis release of 'Ranking Generated Answers'", file=str(root),
                         allowed="its root, with dataset/topics/topics.txt and dataset/assessments/qrels.txt")
    root = dataset.parent if dataset.name == "dataset" and dataset != root else root
    assessments, topics = dataset / "assessments", dataset / "topics"
    read = [topics / "topics.txt"]
    parts = []
    for name in QRELS_FILES:
        if (assessments / name).is_file():
            parts.append(read_qrels(assessments / name, dimension=str(qrels_dimension(name))))
            read.append(assessments / name)
    judgments = pd.concat(parts, ignore_index=True)
    notes = [*unread_note(topics, read, known=NOT_READ), *unread_note(assessments, read, known=NOT_READ)]
    documents, text_file = _page_texts(dataset, root, set(judgments["docno"]), notes)
    missing = ~judgments["docno"].isin(set(documents["docno"]))
    if missing.any() and missing_text == "error":
        raise InputError(f"{judgments.loc[missing, 'docno'].nunique()} of {judgments['docno'].nunique()} judged "
                         f"pages have no text ({int(missing.sum())} judgments)", file=str(text_file),
                         value=judgments.loc[missing, "docno"].iloc[0],
                         allowed=f"the crawled texts (docid, text) at {dataset / TEXT_FILES[0]} or .tsv.zip, or "
                                 "missing_text='drop' (--drop-missing-text) to rank among the pages that have one")
    mapping = clef_grade_map(grade_map, credibility_file=(assessments / "qcredibility.txt").is_file(), notes=notes)
    return collection_from_frames(read_topics(topics / "topics.txt"), documents, judgments, name="webis-clef2021",
                                  missing_text=missing_text, file=str(dataset), grade_map=mapping, notes=notes)


def read_webis_answers(directory: str | Path) -> pd.DataFrame:
    """The answers of the release's ``indexing/results/monoT5/<model>_rankings.csv`` files: ``qid, model``
    (the file's name), ``prompt, answer_id`` (``<model>_<qid>_<prompt>_<n>``, as
    :func:`stableval.nrp.score.read_webis_rank_files` names them) and ``text``; answers with no text (the release
    has a few) are left out with a count in the frame's ``attrs["notes"]``."""
    directory = Path(directory)
    files = sorted(directory.glob("*_rankings.csv"))
    if not files:
        raise InputError("no *_rankings.csv files", file=str(directory),
                         allowed="the indexing/results/monoT5 folder of the Webis release")
    parts = []
    for path in files:
        frame = pd.read_csv(path, usecols=["qid", "prompt", "answer_number", "text"], dtype=str,
                            keep_default_na=False)
        model = path.name.removesuffix("_rankings.csv")
        parts.append(pd.DataFrame({
            "qid": frame["qid"], "model": model, "prompt": frame["prompt"],
            "answer_id": model + "_" + frame["qid"] + "_" + frame["prompt"] + "_" + frame["answer_number"],
            "text": frame["text"]}))
    answers = pd.concat(parts, ignore_index=True)
    empty = answers["text"].str.strip() == ""
    answers = answers[~empty].reset_index(drop=True)
    answers.attrs["notes"] = [f"{int(empty.sum())} answer(s) of the release have no text and are left out"] if \
        empty.any() else []
    return answers
