"""Synthetic NRP data: random test collections, graded answers, the expert-study data and generation queries."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stableval.nrp.collection import collection_from_frames

WORDS = np.array("flu fever cough heart pain drug dose sleep diet skin blood sugar insulin tax car tree".split())


def random_collection(seed: int = 0, questions: int = 4, docs: int = 12) -> object:
    rng = np.random.default_rng(seed)
    q = pd.DataFrame({"qid": [f"q{i}" for i in range(questions)],
                      "query": [" ".join(rng.choice(WORDS, 2, replace=False)) for _ in range(questions)]})
    documents = pd.DataFrame({"docno": [f"d{i}" for i in range(questions * docs)],
                              "text": [" ".join(rng.choice(WORDS, rng.integers(3, 15)))
                                       for _ in range(questions * docs)]})
    judgments = pd.DataFrame({"qid": np.repeat(q["qid"], docs).to_numpy(), "docno": documents["docno"],
                              "grade": rng.integers(0, 3, questions * docs)})
    return collection_from_frames(q, documents, judgments)


def random_texts(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, rng.integers(2, 20))) for _ in range(n)]


QUERIES = pd.DataFrame({"qid": ["q1", "q2"], "question": ["Can diabetes be cured?", "what is flu fever"]})


STUDY_WORDS = [f"w{i}" for i in range(40)]


STUDY_MODELS = ["chatgpt", "llama-2-13b", "gpt2-xl", "gpt2"]


def study_frames(n_questions: int = 30):
    rng = np.random.default_rng(1)
    queries, docs, judgments, answers = [], [], [], []
    for q in range(n_questions):
        terms = rng.choice(STUDY_WORDS, size=3, replace=False)
        queries.append((f"q{q}", " ".join(terms)))
        for d in range(6):
            overlap = rng.integers(0, 4)
            text = " ".join([*terms[:overlap], *rng.choice(STUDY_WORDS, size=8)])
            docs.append((f"q{q}d{d}", text))
            judgments.append((f"q{q}", f"q{q}d{d}", int(rng.integers(0, 3)) if d else 2))
        for m, model in enumerate(STUDY_MODELS):
            for s in range(3):
                if model == "gpt2" and q == 0:
                    continue  # gpt2 did not answer q0: q0 is never eligible
                text = " ".join([*terms[:max(0, 3 - m)], *rng.choice(STUDY_WORDS, size=6 + s)])
                answers.append((f"q{q}", model, "multimedqa", f"{model}-q{q}-{s}", text))
                answers.append((f"q{q}", model, "none", f"{model}-q{q}-{s}-none", "w1 w2"))
    collection = collection_from_frames(pd.DataFrame(queries, columns=["qid", "query"]),
                                        pd.DataFrame(docs, columns=["docno", "text"]),
                                        pd.DataFrame(judgments, columns=["qid", "docno", "grade"]))
    return collection, pd.DataFrame(answers, columns=["qid", "model", "prompt", "answer_id", "text"])


def small_collection(seed: int = 0, questions: int = 3, docs: int = 6):
    rng = np.random.default_rng(seed)
    queries = pd.DataFrame({"qid": [f"q{i}" for i in range(questions)],
                            "query": [" ".join(rng.choice(WORDS, 2, replace=False)) for _ in range(questions)]})
    documents = pd.DataFrame({"docno": [f"d{i}" for i in range(questions * docs)],
                              "text": [" ".join(rng.choice(WORDS, 12)) for _ in range(questions * docs)]})
    judgments = pd.DataFrame({"qid": np.repeat(queries["qid"], docs).to_numpy(), "docno": documents["docno"],
                              "grade": rng.integers(0, 3, questions * docs)})
    return collection_from_frames(queries, documents, judgments)


def graded_collection(seed: int = 0, questions: int = 5, docs: int = 10):
    rng = np.random.default_rng(seed)
    queries = pd.DataFrame({"qid": [f"q{i}" for i in range(questions)],
                            "query": [" ".join(rng.choice(WORDS[:8], 2, replace=False)) for _ in range(questions)]})
    texts, grades = [], []
    for i in range(questions * docs):  # graded documents: more query words, higher grade
        query = queries["query"].iloc[i // docs].split()
        hits = int(rng.integers(0, 4))
        texts.append(" ".join([*rng.choice(query, hits), *rng.choice(WORDS[8:], int(rng.integers(2, 8)))]))
        grades.append(min(hits, 3))
    documents = pd.DataFrame({"docno": [f"d{i:03d}" for i in range(questions * docs)], "text": texts})
    judgments = pd.DataFrame({"qid": np.repeat(queries["qid"], docs).to_numpy(), "docno": documents["docno"],
                              "grade": grades})
    return collection_from_frames(queries, documents, judgments)


def graded_answers(collection, seed: int = 7) -> pd.DataFrame:
    """Graded answers of 5 to 12 words: more query words, higher grade (none a copy of a document)."""
    rng = np.random.default_rng(seed)
    rows = []
    for qid, query in collection.queries[["qid", "query"]].itertuples(index=False):
        for k in range(8):
            hits = int(rng.integers(0, 4))
            words = [*rng.choice(query.split(), hits), *rng.choice(WORDS[8:], int(rng.integers(3, 8)))]
            text = " ".join([*words, f"note{qid}x{k}", f"more{qid}y{k}"])  # no copy of a document
            rows.append((qid, f"{qid}-a{k}", text, min(hits, 3)))
    return pd.DataFrame(rows, columns=["qid", "answer_id", "text", "grade"]).assign(model="m")


def with_intruders(collection, clean: pd.DataFrame) -> pd.DataFrame:
    """``clean`` with copies of judged documents and answers to unknown questions inserted in the middle, graded
    against the grain (a misaligned grade would change the result)."""
    pool = collection.pool()
    copies = pd.DataFrame({"qid": pool["qid"].iloc[[0, 15, 31]].to_numpy(), "answer_id": ["c1", "c2", "c3"],
                           "text": pool["text"].iloc[[0, 15, 31]].str.upper().to_numpy(), "grade": [0, 3, 0],
                           "model": "m"})
    unknown = pd.DataFrame({"qid": ["zz", "zz"], "answer_id": ["u1", "u2"], "text": ["flu fever", "tax car"],
                            "grade": [3, 0], "model": "m"})
    parts = [clean.iloc[:5], copies.iloc[:2], clean.iloc[5:17], unknown, clean.iloc[17:30], copies.iloc[2:],
             clean.iloc[30:]]
    return pd.concat(parts, ignore_index=True)


def raw_graded_answers(collection, seed: int = 4) -> pd.DataFrame:
    """Six answers per question with 0-3 grades by the query words they contain (the unseen-answer tests)."""
    rng = np.random.default_rng(seed)
    rows = []
    for qid, query in collection.queries[["qid", "query"]].itertuples(index=False):
        for k in range(6):
            hits = int(rng.integers(0, 4))
            words = [*rng.choice(query.split(), hits), *rng.choice(WORDS[8:], 4), f"x{qid}{k}"]
            rows.append((qid, f"{qid}-{k}", " ".join(words), min(hits, 3)))
    return pd.DataFrame(rows, columns=["qid", "answer_id", "text", "grade"]).assign(model="m")


def tiny_score_files(folder: Path) -> tuple[Path, Path]:
    """A two-question collection (queries, documents, judgments CSV) and answers of m1, m2 to it, written in
    ``folder``: the inputs of ``nrp score``."""
    collection = folder / "c"
    collection.mkdir()
    pd.DataFrame({"qid": ["1", "2"], "query": ["flu fever", "heart pain"]}).to_csv(collection / "queries.csv",
                                                                                    index=False)
    pd.DataFrame({"docno": list("abcd"), "text": ["flu fever cough", "tax", "heart pain drug", "car"]}
                 ).to_csv(collection / "documents.csv", index=False)
    pd.DataFrame({"qid": ["1", "1", "2", "2"], "docno": list("abcd"), "grade": [2, 0, 2, 0]}
                 ).to_csv(collection / "judgments.csv", index=False)
    answers = folder / "answers.csv"
    pd.DataFrame({"qid": ["1", "2"] * 4, "model": ["m1"] * 4 + ["m2"] * 4, "prompt": ["p"] * 8,
                  "text": ["flu", "heart", "fever", "pain", "tax", "car", "tree", "sky"]}).to_csv(answers, index=False)
    return collection, answers
