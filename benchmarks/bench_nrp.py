"""Time NRP scoring: 16,000 answers (50 questions x 320) against ~200 judged documents per question.

Prints the BM25 wall time of "score documents once, each answer alone" (goal: < 30 s on 2 cores), the time of
re-ranking the whole list per answer (bm25s index of documents + answer, measured on a sample and extrapolated),
their ratio, and the bi-encoder's documents/s on CPU (and on a GPU when one is there). Synthetic texts: words
drawn from a Zipf-like vocabulary, answers ~250 words, documents ~400 words. ``--loo``: the exact leave-one-out of
TF-IDF and DPH (every judged document held out of the statistics, vectorised) against recomputing the statistics
from scratch without each document (timed on a sample, extrapolated).

    python benchmarks/bench_nrp.py [--questions 50] [--answers 320] [--docs 200] [--biencoder] [--loo]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from stableval.nrp import collection_from_frames, score_answers
from stableval.nrp.rankers.bm25 import BM25Ranker


def synthetic(questions: int, answers: int, docs: int, seed: int = 0) -> tuple[object, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(20_000)])
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()

    def text(n: int) -> str:
        return " ".join(vocab[rng.choice(len(vocab), n, p=p)])

    q = pd.DataFrame({"qid": [f"q{i}" for i in range(questions)], "query": [text(6) for _ in range(questions)]})
    d = pd.DataFrame({"docno": [f"d{i}" for i in range(questions * docs)],
                      "text": [text(int(rng.integers(100, 700))) for _ in range(questions * docs)]})
    j = pd.DataFrame({"qid": np.repeat(q["qid"].to_numpy(), docs), "docno": d["docno"],
                      "grade": rng.integers(0, 3, questions * docs)})
    a = pd.DataFrame({"qid": np.repeat(q["qid"].to_numpy(), answers), "model": "m",
                      "text": [text(int(rng.integers(150, 350))) for _ in range(questions * answers)]})
    return collection_from_frames(q, d, j), a


def rerank_whole_list(collection: object, answers: pd.DataFrame, sample: int) -> float:
    """Seconds per answer when every answer is inserted into its list and the list is re-indexed and ranked."""
    import bm25s  # type: ignore[import-untyped]

    pool = collection.pool()  # type: ignore[attr-defined]
    queries = collection.queries.set_index("qid")["query"]  # type: ignore[attr-defined]
    chosen = answers.sample(sample, random_state=0)
    start = time.perf_counter()
    for row in chosen.itertuples(index=False):
        texts = [*pool.loc[pool["qid"] == row.qid, "text"], row.text]
        index = bm25s.BM25(method="lucene")
        index.index(bm25s.tokenize(texts, show_progress=False, return_ids=False), show_progress=False)
        scores = index.get_scores(bm25s.tokenize(queries[row.qid], show_progress=False, return_ids=False)[0])
        int(np.sum(scores[:-1] > scores[-1]))
    return (time.perf_counter() - start) / sample


def time_leave_one_out(collection: object, sample: int) -> None:
    """Exact leave-one-out of tfidf and dph: the vectorised matrices vs statistics recomputed per held-out document."""
    from stableval.nrp.rankers.dph import DPHRanker
    from stableval.nrp.rankers.tfidf import TfidfRanker

    pool = collection.pool()  # type: ignore[attr-defined]
    qids = list(dict.fromkeys(pool["qid"]))
    queries = collection.queries.set_index("qid").loc[qids, "query"].tolist()  # type: ignore[attr-defined]
    lists = [pool.loc[pool["qid"] == q, "text"].tolist() for q in qids]
    corpus = collection.documents["text"].tolist()  # type: ignore[attr-defined]
    for ranker_class in (TfidfRanker, DPHRanker):
        ranker = ranker_class()
        ranker.prepare(corpus)
        t0 = time.perf_counter()
        ranker.leave_one_out(queries, lists)
        exact = time.perf_counter() - t0
        t0 = time.perf_counter()
        for k in range(sample):  # one held-out document of question k % questions, statistics from scratch
            i = k % len(lists)
            rest = corpus.copy()
            rest.remove(lists[i][0])
            fresh = ranker_class()
            fresh.prepare(rest)
            fresh.score([queries[i]], [lists[i][1:]], [[lists[i][0]]])
        per = (time.perf_counter() - t0) / sample
        print(f"{ranker.name} exact leave-one-out of {len(pool):,} documents: {exact:.1f} s; recomputing the "
              f"statistics per held-out document: {per:.2f} s each -> {per * len(pool):.0f} s extrapolated "
              f"({per * len(pool) / exact:.0f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--answers", type=int, default=320)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--sample", type=int, default=100, help="answers timed for the re-rank baseline")
    parser.add_argument("--biencoder", action="store_true", help="also time the bi-encoder (needs 'neural')")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--loo", action="store_true", help="only time the exact leave-one-out of tfidf and dph")
    args = parser.parse_args()
    t0 = time.perf_counter()
    collection, answers = synthetic(args.questions, args.answers, args.docs)
    print(f"synthetic data: {len(answers):,} answers, {collection.n_documents:,} documents "  # type: ignore[attr-defined]
          f"({time.perf_counter() - t0:.1f} s to generate)")
    if args.loo:
        time_leave_one_out(collection, sample=5)
        return
    t0 = time.perf_counter()
    result = score_answers(collection, answers, BM25Ranker(), bootstrap=1000)  # type: ignore[arg-type]
    once = time.perf_counter() - t0
    print(f"BM25, documents scored once + each answer alone: {once:.1f} s for {len(answers):,} answers "
          f"(goal < 30 s); mean NRP {result.answers['nrp'].mean():.3f}")
    per = rerank_whole_list(collection, answers, args.sample)
    print(f"BM25, re-index and re-rank the whole list per answer: {per * 1000:.1f} ms/answer -> "
          f"{per * len(answers):.0f} s extrapolated; speed-up of scoring documents once: "
          f"{per * len(answers) / once:.0f}x")
    if args.biencoder:
        from stableval.nrp.rankers import make_ranker

        ranker = make_ranker("biencoder", device=args.device, batch_size=64, max_length=256)
        texts = collection.documents["text"].head(512).tolist()  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        ranker.embed(texts)  # type: ignore[attr-defined]
        rate = len(texts) / (time.perf_counter() - t0)
        total = collection.n_documents + len(answers)  # type: ignore[attr-defined]
        print(f"bi-encoder on {args.device}: {rate:.0f} texts/s (max_length 256) -> about {total / rate:.0f} s to "
              f"embed all {total:,} documents and answers once; re-ranking per answer would embed "
              f"{args.docs + 1} texts per answer: {(args.docs + 1) * len(answers) / rate:.0f} s "
              f"({(args.docs + 1) * len(answers) / total:.0f}x more)")


if __name__ == "__main__":
    main()
