"""Issue 31: ``--ranker best`` chooses by the right evidence: with graded answers, the candidate whose NRP agrees
best with their grades (``nrp validate``'s AUC); without, the highest nDCG@10 averaged over every quality
dimension (not the first dimension only); every installed ranker (DPH included) is a candidate and the evidence is
printed."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from stableval.cli import app
from stableval.nrp import collection_from_frames, write_collection
from stableval.nrp.choose import choose_ranker
from stableval.nrp.measures import evaluate_rankers, select_ranker
from stableval.nrp.rankers import Ranker

from nrp_data import graded_collection as _collection, raw_graded_answers as _graded


class Lookup(Ranker):
    """Scores each text by a fixed table (text -> score): a ranker whose quality is set by the test."""

    def __init__(self, table: dict[str, float], name: str) -> None:
        self.table, self.name = table, name

    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        answers = answers if answers is not None else [[] for _ in queries]
        return ([np.array([self.table[t] for t in docs], dtype=float) for docs in documents],
                [np.array([self.table[t] for t in ans], dtype=float) for ans in answers])


def _two_dimensions():
    """Relevance and readability judged on 3 questions x 8 documents, independent of each other."""
    rng = np.random.default_rng(0)
    docs = [f"doc {i}" for i in range(24)]
    relevance, readability = rng.integers(0, 3, 24), rng.integers(0, 3, 24)
    judgments = pd.DataFrame({"qid": np.repeat(["1", "2", "3"], 8).tolist() * 2, "docno": docs * 2,
                              "dimension": ["relevance"] * 24 + ["readability"] * 24,
                              "grade": [*relevance, *readability]})
    collection = collection_from_frames(pd.DataFrame({"qid": ["1", "2", "3"], "query": ["a", "b", "c"]}),
                                        pd.DataFrame({"docno": docs, "text": docs}), judgments)
    noise = rng.normal(0, 0.01, 24)
    rankers = {"topical": Lookup(dict(zip(docs, relevance + noise, strict=True)), "topical"),
               "balanced": Lookup(dict(zip(docs, relevance + readability + noise, strict=True)), "balanced")}
    return collection, rankers


def test_without_graded_answers_ndcg_is_averaged_over_every_dimension() -> None:
    """Before: only the first dimension (relevance) counted, so the topical ranker won though it orders
    readability no better than chance."""
    collection, rankers = _two_dimensions()
    summary, _ = evaluate_rankers(collection, rankers)
    table = summary.pivot(index="ranker", columns="dimension", values="ndcg@10")
    assert table.loc["topical", "relevance"] > table.loc["balanced", "relevance"]  # the first dimension's winner
    assert table.mean(axis=1).idxmax() == "balanced"
    choice = choose_ranker(collection, rankers)
    assert (choice.name, choice.measure) == ("balanced", "ndcg@10")
    evidence = choice.evidence.set_index("ranker")
    assert evidence.loc["balanced", "mean"] == table.loc["balanced"].mean()
    assert evidence.loc["topical", "ndcg@10 readability"] == table.loc["topical", "readability"]
    assert evidence["chosen"].tolist() == [False, True]
    assert choice.note().startswith("--ranker best: balanced (nDCG@10 averaged over relevance, readability: "
                                    "topical ")
    assert select_ranker(collection, rankers, dimension="relevance")[0] == "topical"  # one dimension, on request


def test_with_graded_answers_the_agreement_with_their_grades_decides() -> None:
    """A ranker that ranks the documents perfectly but the answers against their grades loses to one that ranks
    the answers by their grades, once graded answers are given."""
    collection = _collection(3)
    graded = _graded(collection)
    pool = collection.pool().merge(collection.qrels("relevance"), on=["qid", "docno"])
    documents = dict(zip(pool["text"], pool["grade"], strict=True))
    answers = dict(zip(graded["text"], graded["grade"], strict=True))
    rankers = {"documents": Lookup({**documents, **{t: -g for t, g in answers.items()}}, "documents"),
               "answers": Lookup({**{t: 0.0 for t in documents}, **answers}, "answers")}
    assert choose_ranker(collection, rankers).name == "documents"
    choice = choose_ranker(collection, rankers, graded=graded, correct=2)
    assert (choice.name, choice.measure) == ("answers", "auc")
    evidence = choice.evidence.set_index("ranker")
    assert evidence.loc["answers", "auc"] > 0.75 > 0.25 > evidence.loc["documents", "auc"]
    assert choice.note() == (f"--ranker best: answers (AUC of its NRP against the graded answers: documents "
                             f"{evidence.loc['documents', 'auc']:.3f}, answers {evidence.loc['answers', 'auc']:.3f})")


def test_cli_prints_the_evidence_and_uses_validates_measure(tmp_path, monkeypatch) -> None:
    from stableval.commands import nrp as command

    assert "dph" in command.best_candidates() and "bm25-pool" in command.best_candidates()
    monkeypatch.setattr(command, "best_candidates", lambda: ["bm25", "tfidf", "dph"])
    collection = _collection(5)
    directory = write_collection(collection, tmp_path / "c")
    _graded(collection).to_csv(tmp_path / "graded.csv", index=False)
    collection.pool()[["qid", "text"]].head(6).assign(text=lambda f: f["text"] + " extra").to_csv(
        tmp_path / "a.csv", index=False)
    runner = CliRunner()
    base = ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-r", "best", "-B", "0"]
    text = runner.invoke(app, [*base, "--graded", str(tmp_path / "graded.csv")], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert "--ranker best: the candidates by auc, chose" in text.output and "chosen" in text.output
    payload = json.loads(runner.invoke(app, [*base, "--graded", str(tmp_path / "graded.csv"), "--format",
                                             "json"]).stdout)
    choice = payload["ranker_choice"]
    validated = json.loads(runner.invoke(app, ["nrp", "validate", str(directory), str(tmp_path / "graded.csv"),
                                               "-r", "bm25,tfidf,dph", "-B", "0", "--format", "json"]).stdout)
    auc = {row["signal"]: row["value"] for row in validated["rows"] if row["measure"] == "auc"}
    assert {c["ranker"]: c["auc"] for c in choice["candidates"]} == {r: auc[f"nrp:{r}"] for r in ("bm25", "tfidf",
                                                                                                    "dph")}
    assert choice["chosen"] == max(("bm25", "tfidf", "dph"), key=lambda r: auc[f"nrp:{r}"])
    assert payload["settings"]["ranker"].startswith(choice["chosen"])
    plain = json.loads(runner.invoke(app, [*base, "--format", "json"]).stdout)["ranker_choice"]
    assert plain["measure"] == "ndcg@10" and [c["ranker"] for c in plain["candidates"]] == ["bm25", "tfidf", "dph"]
    wrong = runner.invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "--graded",
                                str(tmp_path / "graded.csv")])
    assert wrong.exit_code == 2 and "only with --ranker best" in wrong.output
