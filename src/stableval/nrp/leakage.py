"""Leakage check: answers that copy (or nearly copy) a judged document of their own question.

An answer that is a judged document of its question ties with that document and tells nothing about a generator
(with the merged LiveQA pool every MEDIQA/CHiQA answer is in its own ``D_q``). Each answer is compared with the
judged documents of its question by the cosine of their word-count vectors (``bm25s`` tokens: lower-cased, stop
words removed; Salton & McGill 1983's vector-space cosine): ``identical`` = the same text up to case and white
space, ``near`` = cosine >= ``threshold`` (default 0.95). Vectorised: one sparse product per question.

>>> import pandas as pd
>>> from stableval.nrp.testcollection import collection_from_frames
>>> c = collection_from_frames(pd.DataFrame({"qid": ["1"], "query": ["flu"]}),
...     pd.DataFrame({"docno": ["a", "b"], "text": ["Flu gives fever and cough.", "Tax forms are due."]}),
...     pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "grade": [2, 0]}))
>>> answers = pd.DataFrame({"qid": ["1", "1"], "answer_id": ["x", "y"],
...                         "text": ["flu  gives fever and cough.", "Rest and drink water."]})
>>> find_copies(c, answers)[["answer_id", "docno", "identical", "near"]].to_dict("records")
[{'answer_id': 'x', 'docno': 'a', 'identical': True, 'near': True}]
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from stableval.nrp.testcollection import TestCollection

__all__ = ["copies_note", "find_copies"]


def _normal(texts: pd.Series) -> pd.Series:
    return texts.astype(str).str.lower().str.split().str.join(" ")


def find_copies(collection: TestCollection, answers: pd.DataFrame, *, threshold: float = 0.95) -> pd.DataFrame:
    """Answers identical or near-identical to a judged document of their own question.

    ``answers`` needs ``qid, answer_id, text``. Returns one row per flagged answer: ``qid, answer_id, docno``
    (the most similar document), ``similarity`` (cosine of word counts), ``identical``, ``near``.
    """
    from stableval.nrp.rankers.bm25 import _tokenize

    pool = collection.pool()
    pool = pool[pool["qid"].isin(set(answers["qid"]))].reset_index(drop=True)
    counts, _ = _tokenize([*pool["text"], *answers["text"]])
    norms = np.sqrt(np.asarray(counts.multiply(counts).sum(axis=1)).ravel())
    unit = sp.csr_matrix(sp.diags(np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)) @ counts)
    docs, texts = unit[:len(pool)], unit[len(pool):]
    doc_norm, ans_norm = _normal(pool["text"]).to_numpy(), _normal(answers["text"]).to_numpy()
    doc_rows = pool.groupby("qid").indices
    best = np.zeros(len(answers))
    best_doc = np.full(len(answers), -1)
    identical = np.zeros(len(answers), dtype=bool)
    for qid, rows in answers.groupby("qid").indices.items():  # one sparse product per question
        mine = doc_rows.get(qid)
        if mine is None:
            continue
        sims = (texts[rows] @ docs[mine].T).toarray()
        same = ans_norm[rows][:, None] == doc_norm[mine][None, :]
        sims = np.where(same, 1.0, sims)
        pick = sims.argmax(axis=1)
        best[rows] = sims[np.arange(len(rows)), pick]
        best_doc[rows] = mine[pick]
        identical[rows] = same.any(axis=1)
    flagged = identical | (best >= threshold)
    out = pd.DataFrame({"qid": answers["qid"].to_numpy()[flagged],
                        "answer_id": answers["answer_id"].to_numpy()[flagged],
                        "docno": pool["docno"].to_numpy()[best_doc[flagged]],
                        "similarity": best[flagged], "identical": identical[flagged],
                        "near": best[flagged] >= threshold})
    return out.reset_index(drop=True)


def copies_note(copies: pd.DataFrame, *, excluded: bool) -> str:
    """The warning printed for the answers :func:`find_copies` flagged: how many, one example, and what happened.

    >>> copies_note(pd.DataFrame({"answer_id": ["x"], "docno": ["a"], "identical": [True]}), excluded=True)
    'warning: 1 answer(s) identical (1) or near-identical to a judged document of their own question, e.g. x ~ a; \
left out (--exclude-copies)'
    """
    return (f"warning: {len(copies)} answer(s) identical ({int(copies['identical'].sum())}) or near-identical to a "
            f"judged document of their own question, e.g. {copies['answer_id'].iloc[0]} ~ {copies['docno'].iloc[0]}"
            + ("; left out (--exclude-copies)" if excluded else "; --exclude-copies leaves them out"))
