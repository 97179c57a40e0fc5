"""NRP: collection readers, the NRP definition, BM25, trec_eval measures, rank agreement, CLI, real data."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.errors import InputError
from stableval.evaluate.intervals import t_interval
from stableval.nrp import (
    collection_from_frames,
    normalized_rank_position,
    rank_counts,
    read_answers,
    read_collection,
    read_webis_rank_files,
    score_answers,
    write_collection,
)
from stableval.nrp.measures import evaluate_run
from stableval.nrp.rank_agreement import (
    agreement_summary,
    agreement_table,
    average_overlap,
    kendall_tau_b,
    rbo_ext,
    spearman_rho,
)
from stableval.nrp.rankers import RANKERS, REGISTRY, make_ranker
from stableval.nrp.rankers.bm25 import BM25Ranker
from stableval.nrp.score import bootstrap_means

from conftest import shared_file

WEBIS = "webis_ecir25_ranking_generated_answers"
WORDS = np.array("flu fever cough heart pain drug dose sleep diet skin blood sugar insulin tax car tree".split())


def _random_collection(seed: int = 0, questions: int = 4, docs: int = 12) -> object:
    rng = np.random.default_rng(seed)
    q = pd.DataFrame({"qid": [f"q{i}" for i in range(questions)],
                      "query": [" ".join(rng.choice(WORDS, 2, replace=False)) for _ in range(questions)]})
    documents = pd.DataFrame({"docno": [f"d{i}" for i in range(questions * docs)],
                              "text": [" ".join(rng.choice(WORDS, rng.integers(3, 15)))
                                       for _ in range(questions * docs)]})
    judgments = pd.DataFrame({"qid": np.repeat(q["qid"], docs).to_numpy(), "docno": documents["docno"],
                              "grade": rng.integers(0, 3, questions * docs)})
    return collection_from_frames(q, documents, judgments)


# ----------------------------------------------------------------------------------- NRP definition
def test_worked_example_and_spec_formula() -> None:
    above, tied, size = rank_counts(np.array([3.0, 2, 2, 1]), np.zeros(4, int), np.array([2.0, 5.0, 0.0]),
                                    np.zeros(3, int))
    assert above.tolist() == [1, 0, 4] and tied.tolist() == [2, 0, 0] and size.tolist() == [4, 4, 4]
    # spec: 1 - r/|D_q| with r the documents above: optimistic ties
    assert normalized_rank_position(above, tied, size, n="documents", ties="optimistic").tolist() == [0.75, 1.0, 0.0]
    np.testing.assert_allclose(normalized_rank_position(above, tied, size, n="list", ties="pessimistic"), [0.4, 1, 0.2])
    with pytest.raises(InputError, match="tie policy"):
        normalized_rank_position(above, tied, size, ties="best")


def test_rank_counts_match_brute_force() -> None:
    rng = np.random.default_rng(3)
    doc_scores, doc_group = rng.integers(0, 6, 300).astype(float), rng.integers(0, 7, 300)
    ans_scores, ans_group = rng.integers(0, 6, 200).astype(float), rng.integers(0, 7, 200)
    above, tied, size = rank_counts(doc_scores, doc_group, ans_scores, ans_group)
    for i in range(200):
        mine = doc_scores[doc_group == ans_group[i]]
        assert above[i] == np.sum(mine > ans_scores[i]) and tied[i] == np.sum(mine == ans_scores[i])
        assert size[i] == len(mine)


def test_shipped_monot5_ranks_reproduced() -> None:
    directory = shared_file(WEBIS, "indexing", "results", "monoT5")
    data = read_webis_rank_files(directory)
    assert len(data) == 16_000 and data["list_length"].notna().all()
    # the authors divided by the list length including the answer: n="list" with |D_q| = length - 1
    nrp = normalized_rank_position(data["above"].to_numpy(), np.zeros(len(data)),
                                   data["list_length"].to_numpy() - 1, n="list", ties="optimistic")
    np.testing.assert_allclose(nrp, data["nrp_shipped"], atol=1e-9)
    spec = normalized_rank_position(data["above"].to_numpy(), np.zeros(len(data)),
                                    data["list_length"].to_numpy() - 1, n="documents", ties="optimistic")
    assert (spec <= nrp + 1e-12).all() and (spec < nrp).any()
    means = data[data["prompt"] == "multimedqa"].groupby("model")["nrp_shipped"].mean()
    # paper, section 4: Llama-2 7B 0.995, Falcon 7B 0.988, ChatGPT "0.998" (0.99885 here), 7B above 13B
    assert round(means["meta-llama_Llama-2-7b-chat-hf"], 3) == 0.995
    assert round(means["tiiuae_falcon-7b-instruct"], 3) == 0.988
    assert 0.998 <= means["chatgpt"] < 0.999 and means.idxmax() == "chatgpt"
    assert means["meta-llama_Llama-2-7b-chat-hf"] > means["meta-llama_Llama-2-13b-chat-hf"]


# ----------------------------------------------------------------------------------- BM25
def test_bm25_pool_scores_equal_bm25s_index() -> None:
    bm25s = pytest.importorskip("bm25s")
    rng = np.random.default_rng(1)
    docs = [" ".join(rng.choice(WORDS, rng.integers(2, 20))) for _ in range(40)]
    query = "flu fever insulin"
    ours, answers = BM25Ranker(stats="pool").score([query], [docs], [docs[:5]])
    index = bm25s.BM25(method="lucene")
    index.index(bm25s.tokenize(docs, show_progress=False, return_ids=False), show_progress=False)
    reference = index.get_scores(["flu", "fever", "insulin"])
    np.testing.assert_allclose(ours[0], reference, rtol=1e-5, atol=1e-6)
    # an answer identical to a document gets the document's score (same pool statistics)
    np.testing.assert_allclose(answers[0], ours[0][:5], rtol=1e-12)


def test_pointwise_equals_inserting_and_reranking() -> None:
    collection = _random_collection(2)
    rng = np.random.default_rng(5)
    answers = pd.DataFrame({"qid": rng.choice(collection.queries["qid"], 30), "model": rng.choice(["a", "b"], 30),
                            "text": [" ".join(rng.choice(WORDS, 6)) for _ in range(30)]})
    result = score_answers(collection, answers, BM25Ranker(stats="pool"), ties="optimistic", bootstrap=0)
    pool = collection.pool()
    for row, text in zip(result.answers.itertuples(), answers["text"], strict=True):
        docs = pool.loc[pool["qid"] == row.qid, "text"].tolist()
        query = collection.queries.set_index("qid").loc[row.qid, "query"]
        doc_scores, _ = BM25Ranker(stats="pool").score([query], [docs])
        _, (answer_score,) = BM25Ranker(stats="pool").score([query], [docs], [[text]])
        assert row.above == int(np.sum(doc_scores[0] > answer_score[0]))
        assert row.n_documents == len(docs) and row.list_length == len(docs) + 1


# ----------------------------------------------------------------------------------- measures vs ir-measures
def test_measures_match_ir_measures_with_ties() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, RR, P, nDCG

    rng = np.random.default_rng(7)
    qrels, run = [], []
    for q in range(25):
        for d in range(int(rng.integers(3, 25))):
            qrels.append((str(q), f"d{d}", int(rng.integers(0, 4))))
            run.append((str(q), f"d{d}", float(rng.integers(0, 5))))  # many ties: trec_eval's docno order
    mine = evaluate_run(pd.DataFrame(qrels, columns=["qid", "docno", "grade"]),
                        pd.DataFrame(run, columns=["qid", "docno", "score"]), min_relevant=2).set_index("qid")
    measures = {"ndcg@10": nDCG @ 10, "ndcg": nDCG, "ap": AP(rel=2), "p@10": P(rel=2) @ 10, "rr": RR(rel=2)}
    reference = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        list(measures.values()), [ir_measures.Qrel(*r) for r in qrels], [ir_measures.ScoredDoc(*r) for r in run])}
    for column, measure in measures.items():
        expected = [reference[(q, str(measure))] for q in mine.index]
        np.testing.assert_allclose(mine[column].to_numpy(), expected, atol=1e-12, err_msg=column)


# ----------------------------------------------------------------------------------- agreement
def test_rbo_and_ao_hand_worked() -> None:
    # S=[a,b], L=[b,a], p=0.5: X1=0, X2=2 -> (1-p)/p * (0 + 2/2*0.25) + (2/2)*0.25 = 0.5
    assert rbo_ext(["a", "b"], ["b", "a"], p=0.5) == pytest.approx(0.5)
    # uneven lengths, S a prefix of L: extrapolation says full agreement
    assert rbo_ext(["a"], ["a", "b"], p=0.5) == pytest.approx(1.0)
    # S=[a,b], L=[c,a,d], p=0.5, s=2, l=3: X=(0,1,1), X_s=1
    # sum X_d/d p^d = 0 + 1/2*0.25 + 1/3*0.125; tail d=3: 1*(1)/(2*3)*0.125; end: ((1-1)/3 + 1/2)*0.125
    expected = (0.125 + 0.125 / 3 + 0.125 / 6) + 0.0625
    assert rbo_ext(["a", "b"], ["c", "a", "d"], p=0.5) == pytest.approx(expected)
    assert rbo_ext(["c", "a", "d"], ["a", "b"], p=0.5) == pytest.approx(expected)  # symmetric
    assert rbo_ext(["a", "b"], ["c", "d"], p=0.9) == 0.0
    assert average_overlap(["a", "b", "c"], ["a", "c", "b"]) == pytest.approx((1 + 0.5 + 1) / 3)
    with pytest.raises(InputError, match="average overlap"):
        rbo_ext(["a"], ["a"], p=1.0)
    with pytest.raises(InputError, match="twice"):
        average_overlap(["a", "a"], ["a"])


def test_tau_b_and_spearman_match_scipy() -> None:
    from scipy.stats import kendalltau, spearmanr

    rng = np.random.default_rng(11)
    for _ in range(20):
        x, y = rng.integers(0, 4, 9), rng.integers(0, 4, 9)
        assert kendall_tau_b(x, y) == pytest.approx(kendalltau(x, y).statistic, nan_ok=True)
        assert spearman_rho(x, y) == pytest.approx(spearmanr(x, y).statistic, nan_ok=True)
    table = pd.DataFrame({"qid": ["1", "2", "3"], "items": [3, 3, 3], "tau_b": [0.2, 0.4, 0.6],
                          "spearman": [0.2, np.nan, 0.6], "ao": [0.5] * 3, "rbo": [0.5, 0.5, 0.5]})
    row = agreement_summary(table).set_index("measure").loc["Kendall tau-b"]  # the Student-t interval of the means
    mean, high, n = row["mean"], row["ci_high"], row["questions"]
    assert (mean, n) == (pytest.approx(0.4), 3) and high - mean == pytest.approx(4.302652729 * 0.2 / np.sqrt(3))
    interval = t_interval([0.2, 0.4, 0.6])
    assert (row["ci_low"], row["ci_high"]) == (interval.low, interval.high)
    assert agreement_summary(table).set_index("measure").loc["Spearman rho", "questions"] == 2  # NaN left out


def test_agreement_summary_of_a_table() -> None:
    table = agreement_table({"q1": ["a", "b", "c"], "q2": ["a", "b"]}, {"q1": {"a": 3, "b": 1, "c": 2},
                                                                       "q2": {"a": 2, "b": 1}}, p=0.8)
    summary = agreement_summary(table, p=0.8, confidence=0.9)
    assert summary["measure"].tolist() == ["Kendall tau-b", "Spearman rho", "average overlap (AO)", "RBO_ext (p=0.8)"]
    for column, row in zip(("tau_b", "spearman", "ao", "rbo"), summary.itertuples(), strict=True):
        interval = t_interval(table[column], 0.9)
        assert (row.mean, row.ci_low, row.ci_high, row.questions) == (interval.mean, interval.low, interval.high, 2)


def test_expert_agreement_reproduces_spec(tmp_path) -> None:
    export = shared_file(WEBIS, "top_k_rankings", "expert-annotations.json")
    runner = CliRunner()
    for extra in ([], [str(export.parent / "top_1_answers_with_original_ranking")]):
        result = runner.invoke(app, ["nrp", "agree", str(export), *extra, "--format", "json",
                                     "--per-question", str(tmp_path / "q.csv")])
        assert result.exit_code == 0, result.output
        rows = {r["measure"]: r for r in json.loads(result.stdout)["rows"]}
        # spec, section 4: "An average RBO of 0.84 and a Kendall's tau of 0.64" (their RBO p=1 = AO at depth 5)
        assert round(rows["Kendall tau-b"]["mean"], 2) == 0.64
        assert round(rows["average overlap (AO)"]["mean"], 2) == 0.84
        assert rows["Kendall tau-b"]["questions"] == 20
    result = runner.invoke(app, ["nrp", "agree", str(export), "--p", "1"])
    assert result.exit_code == 2 and "ao" in result.output


# ----------------------------------------------------------------------------------- readers and errors
def test_collection_round_trip_and_errors(tmp_path) -> None:
    collection = _random_collection(0)
    again = read_collection(write_collection(collection, tmp_path / "c"))
    assert again.n_questions == 4 and len(again.pool()) == len(collection.pool())
    (tmp_path / "c" / "judgments.csv").write_text("qid,docno,grade\nq0,d0,2\nq0,d1,high\n")
    with pytest.raises(InputError) as error:
        read_collection(tmp_path / "c")
    assert "row 2" in str(error.value) and "'grade'" in str(error.value) and "'high'" in str(error.value)
    (tmp_path / "c" / "judgments.csv").write_text("qid,docno,grade\nq0,d0,2\nq0,nope,1\n")
    with pytest.raises(InputError, match="no text"):
        read_collection(tmp_path / "c")
    dropped = read_collection(tmp_path / "c", missing_text="drop")
    assert any("dropped 1 judgment" in note for note in dropped.notes)
    qrels = tmp_path / "t"
    qrels.mkdir()
    (qrels / "queries.csv").write_text("qid,query\n1,flu\n")
    (qrels / "documents.csv").write_text("docno,text\na,flu fever\n")
    (qrels / "qrels.txt").write_text("1 0 a 2\n1 0 a\n")
    with pytest.raises(InputError, match=r"row 2.*4 fields"):
        read_collection(qrels)


def test_answers_errors(tmp_path) -> None:
    collection = _random_collection(0)
    path = tmp_path / "answers.csv"
    path.write_text("qid,model,prompt,answer_id,text\nq0,m,p,1,fine\nq9,m,p,2,lost\n")
    with pytest.raises(InputError) as error:
        read_answers(path, collection=collection)
    assert "row 2" in str(error.value) and "'q9'" in str(error.value)
    path.write_text("qid,model,prompt,answer_id,text\nq0,m,p,1,fine\nq0,m,p,1,again\n")
    with pytest.raises(InputError, match="duplicate answer_id"):
        read_answers(path)
    path.write_text("qid,model,text\nq0,m,\n")
    with pytest.raises(InputError, match="empty"):
        read_answers(path)


def test_bootstrap_over_questions() -> None:
    rng = np.random.default_rng(0)
    values, group, cluster = rng.random(400), rng.integers(0, 3, 400), rng.integers(0, 20, 400)
    mean, low, high = bootstrap_means(values, group, cluster, bootstrap=500, seed=1)
    expected = pd.Series(values).groupby(group).mean().to_numpy()
    np.testing.assert_allclose(mean, expected)
    assert (low < mean).all() and (mean < high).all()
    again = bootstrap_means(values, group, cluster, bootstrap=500, seed=1)
    np.testing.assert_array_equal(low, again[1])
    # one replicate by hand: cluster weights from the same generator
    weights = np.random.default_rng(1).multinomial(20, np.full(20, 1 / 20), size=1)[0]
    w = weights[cluster]
    first = [np.sum(values[group == g] * w[group == g]) / np.sum(w[group == g]) for g in range(3)]
    _, low1, _ = bootstrap_means(values, group, cluster, bootstrap=1, seed=1)
    np.testing.assert_allclose(low1, first)


# ----------------------------------------------------------------------------------- CLI
def test_cli_score_and_evaluate(tmp_path) -> None:
    collection = _random_collection(4)
    directory = write_collection(collection, tmp_path / "c")
    rng = np.random.default_rng(0)
    rows = []
    for qid, query in collection.queries.itertuples(index=False):
        for k in range(3):
            rows.append((qid, "echo", "plain", f"e{qid}{k}", query + " " + query, "1e9"))
            rows.append((qid, "noise", "plain", f"n{qid}{k}", " ".join(rng.choice(["tax", "car", "tree"], 5)), "1e6"))
    pd.DataFrame(rows, columns=["qid", "model", "prompt", "answer_id", "text", "params"]).to_csv(
        tmp_path / "a.csv", index=False)
    runner = CliRunner()
    result = runner.invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-B", "200", "--format",
                                 "csv", "--answers-out", str(tmp_path / "per.csv"), "--plot", str(tmp_path / "plots")])
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(pd.io.common.StringIO(result.stdout))
    assert summary["model"].tolist() == ["echo", "noise"]
    assert summary["mean_nrp"].iloc[0] > summary["mean_nrp"].iloc[1]
    per = pd.read_csv(tmp_path / "per.csv")
    assert {"nrp", "above", "tied", "list_length"} <= set(per.columns) and len(per) == 24
    assert (tmp_path / "plots" / "nrp_by_prompt.png").stat().st_size > 1000
    assert (tmp_path / "plots" / "nrp_vs_size_plain.png").exists()
    result = runner.invoke(app, ["nrp", "evaluate-rankers", str(directory), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"][0]["ranker"] == "bm25"
    payload = json.loads(result.stdout)
    assert payload["command"].startswith("stableval") and payload["collection"] and payload["notes"]
    result = runner.invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-B", "0", "--format",
                                 "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)  # no bootstrap: the interval bounds are null, never NaN
    assert payload["settings"]["bootstrap"] == 0 and {r["ci_low"] for r in payload["rows"]} == {None}
    result = runner.invoke(app, ["nrp", "score", str(directory), str(tmp_path / "missing.csv")])
    assert result.exit_code == 1 and "not found" in result.output
    result = runner.invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "--ties", "best"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-r", "monot5"])
    assert result.exit_code == 1 and "--model-path" in result.output


def ranker_modules() -> dict[str, list[str]]:
    """Every module of ``stableval.nrp.rankers`` → the ranker classes it defines (abstract bases left out)."""
    import importlib
    import inspect
    import pkgutil

    import stableval.nrp.rankers as package
    from stableval.nrp.rankers import Ranker

    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found[module.__name__] = [name for name, value in vars(module).items()
                                  if inspect.isclass(value) and issubclass(value, Ranker)
                                  and not inspect.isabstract(value) and value.__module__ == module.__name__]
    return {module: classes for module, classes in found.items() if classes}


def test_ranker_registry_names_builds_and_refuses() -> None:
    import importlib

    # the registry and the package agree: every ranker module is registered, every entry names a real class
    assert RANKERS == tuple(REGISTRY) and RANKERS[0] == "bm25"  # the first is the default
    registered = {spec.factory.partition(":")[0] for spec in REGISTRY.values()}
    unregistered = sorted(set(ranker_modules()) - registered)
    assert not unregistered, f"ranker modules without a RankerSpec in REGISTRY: {unregistered}"
    for name, spec in REGISTRY.items():
        module, _, cls = spec.factory.partition(":")
        assert cls in ranker_modules()[module]
        # each entry names its own class, or is a preset of one
        assert getattr(importlib.import_module(module), cls).name == name or spec.preset
        assert spec.title and spec.summary, f"{name}: a RankerSpec needs a title and a summary"
    assert make_ranker("bm25-pool").stats == "pool" and make_ranker("bm25-pool").name == "bm25-pool"
    assert make_ranker("bm25").stats == "collection"
    assert isinstance(make_ranker("bm25", k1=1.2), BM25Ranker) and make_ranker("bm25", k1=1.2).k1 == 1.2
    with pytest.raises(InputError, match="unknown ranker") as error:
        make_ranker("bm26")
    assert ", ".join(RANKERS) in str(error.value)
    from stableval.commands.common import flag_spelling

    assert str(error.value).startswith("option 'ranker'")  # the Python name; the flag on the command line:
    assert error.value.spelled(flag_spelling).startswith("option '--ranker'")


def test_ranker_options_are_declared_once() -> None:
    """A ranker's options (duoT5's k and first stage) are declared in its RankerSpec: each is a keyword of its
    class with the same default, a flag of the nrp commands, and reaches the ranker through RankerOptions."""
    import importlib
    import inspect

    from stableval.commands import nrp as command

    declared = {(spec.name, option.name) for spec in REGISTRY.values() for option in spec.options}
    assert ("duot5", "k") in declared and ("duot5", "first_stage") in declared
    for spec in REGISTRY.values():
        module, _, cls = spec.factory.partition(":")
        parameters = inspect.signature(getattr(importlib.import_module(module), cls)).parameters
        for option in spec.options:
            assert parameters[option.name].default == option.default, (spec.name, option.name)
    assert {(ranker, option.name) for ranker, option in command.RANKER_FLAGS.values()} == declared
    group = typer_command()
    params = {p.name: p for p in group.commands["score"].params}  # type: ignore[attr-defined]
    assert params["duot5_k"].opts == ["--duo-k"] and params["duot5_k"].default == 10
    assert params["duot5_first_stage"].opts == ["--duo-first-stage"]
    record = command._ranker_record({"batch_size": 8, "duot5_k": 4, "duot5_first_stage": "tfidf"})
    assert record.batch_size == 8 and record.ranker_settings == {"duot5": {"k": 4, "first_stage": "tfidf"}}
    with pytest.raises(InputError, match=r"duot5 ranker's option k: got 1; allowed: an integer ≥ 2"):
        make_ranker("duot5", k=1)
    result = CliRunner().invoke(app, ["nrp", "evaluate-rankers", "somewhere", "--duo-k", "1"])
    assert result.exit_code == 2 and "--duo-k" in result.output


def test_ranker_help_and_docs_table_come_from_the_registry() -> None:
    """The --ranker help and the docs table are written from the registry; ``STABLEVAL_UPDATE_DOCS=1`` rewrites
    the committed table (between its two markers) instead of failing."""
    import os
    import re
    from pathlib import Path

    from stableval.nrp.rankers import ranker_table

    group = typer_command()
    for name in ("evaluate-rankers", "score"):
        help_text = {p.name: p for p in group.commands[name].params}["ranker"].help  # type: ignore[attr-defined]
        for ranker, spec in REGISTRY.items():
            assert f"{ranker} ({spec.title})" in help_text
    page = Path(__file__).resolve().parents[1] / "docs" / "nrp.md"
    text = page.read_text(encoding="utf-8")
    generated = re.compile(r"(<!-- generated by stableval\.nrp\.rankers\.ranker_table\(\)[^\n]*-->\n)(.*?)"
                           r"(\n<!-- end of the generated ranker table -->)", re.DOTALL)
    found = generated.search(text)
    assert found, "docs/nrp.md lost the markers around its generated ranker table"
    if os.environ.get("STABLEVAL_UPDATE_DOCS") and found.group(2) != ranker_table():
        page.write_text(text[:found.start(2)] + ranker_table() + text[found.end(2):], encoding="utf-8")
        return
    assert found.group(2) == ranker_table(), (
        "docs/nrp.md's ranker table is not the registry's: regenerate it with STABLEVAL_UPDATE_DOCS=1 python -m "
        "pytest tests/test_nrp.py -k docs_table (or paste the output of python -c \"from stableval.nrp.rankers "
        "import ranker_table; print(ranker_table())\" between the markers under ## Rankers) and commit it")


def test_the_ranker_registry_loads_without_pandas() -> None:
    """--help builds the ranker flags from the registry: importing it must not pull in pandas."""
    import subprocess
    import sys

    code = ("import sys, stableval.nrp.rankers, stableval.nrp as nrp; assert 'pandas' not in sys.modules; "
            "assert 'score_answers' in nrp.__all__ and nrp.score_answers.__module__ == 'stableval.nrp.score'")
    subprocess.run([sys.executable, "-c", code], check=True)


def typer_command() -> Any:
    import typer

    from stableval.commands import nrp as command

    return typer.main.get_command(command.app)


def test_shared_ranker_flags_are_declared_once() -> None:
    import typer

    from stableval.commands import nrp as command

    group = typer.main.get_command(command.app)
    flags = {}
    for name in ("evaluate-rankers", "score", "validate"):
        params = {p.name: p for p in group.commands[name].params}  # type: ignore[attr-defined]
        assert set(command.SHARED_FLAGS) <= set(params)
        flags[name] = {key: (params[key].opts, params[key].default, params[key].help) for key in command.SHARED_FLAGS}
    assert flags["evaluate-rankers"] == flags["score"] == flags["validate"]
    assert flags["score"]["batch_size"] == (["--batch-size"], 32, "Texts per forward pass (neural rankers).")
    result = CliRunner().invoke(app, ["nrp", "evaluate-rankers", "somewhere", "--batch-size", "0"])
    assert result.exit_code == 2 and "--batch-size" in result.output


def test_nrp_figures_are_figures_without_pyplot_state(tmp_path) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from stableval.report.figures import nrp_by_prompt_figure, nrp_vs_size_figure, save_figure

    summary = pd.DataFrame({"model": ["a", "b", "a", "b"], "prompt": ["p1", "p1", "p2", "p2"],
                            "params": [1e9, np.nan, 1e9, np.nan], "mean_nrp": [0.9, 0.4, 0.8, 0.5],
                            "ci_low": [np.nan] * 4, "ci_high": [np.nan] * 4})
    before = plt.get_fignums()
    bars = nrp_by_prompt_figure(summary, title="demo")
    size = nrp_vs_size_figure(summary, prompt="p2")
    assert isinstance(bars, Figure) and isinstance(size, Figure) and plt.get_fignums() == before
    axes = bars.axes[0]
    assert axes.get_title() == "demo" and [t.get_text() for t in axes.get_xticklabels()] == ["p1", "p2"]
    assert [t.get_text() for t in axes.get_legend().get_texts()] == ["b", "a"]  # lowest mean first
    assert size.axes[0].get_xscale() == "log" and len(size.axes[0].texts) == 1  # model b has no size
    assert save_figure(bars, tmp_path / "bars.png").stat().st_size > 1000


# ----------------------------------------------------------------------------------- LiveQA end to end
def test_liveqa_merged_pools_and_degraded_answers() -> None:
    from stableval.nrp.liveqa import read_liveqa, read_liveqa_references

    directory = shared_file("liveqa_medical", "trec2017_liveqa").parent
    collection, references = read_liveqa(directory), read_liveqa_references(directory)
    assert collection.n_questions == 104 and len(collection.pool()) == 3731
    sizes = collection.pool().groupby("qid").size()
    assert (sizes.min(), sizes.max()) == (14, 57)
    assert not collection.documents["text"].str.contains(r"(?s)^Question:.*?\nURL:", regex=True).any()
    rng = np.random.default_rng(0)
    refs = references.drop_duplicates("qid").reset_index(drop=True)
    words = refs["text"].str.split()
    truncated = refs.assign(model="truncated", answer_id=refs["answer_id"] + "-t",
                            text=[" ".join(w[:8]) for w in words])
    off_topic = refs.assign(model="off-topic", answer_id=refs["answer_id"] + "-o",
                            text=refs["text"].to_numpy()[rng.permutation(len(refs))])
    answers = pd.concat([refs, truncated, off_topic], ignore_index=True)
    answers = answers[answers["qid"].isin(set(collection.queries["qid"]))]
    result = score_answers(collection, answers, BM25Ranker(), bootstrap=200)
    means = result.summary.set_index("model")["mean_nrp"]
    assert means["reference"] > means["truncated"] > means["off-topic"]


def test_agree_reads_a_table_by_several_raters_and_repeated_item_ids(tmp_path) -> None:
    # the portal's rank-documents export: qid, item, rank, annotator; document ids repeat across questions
    expert = pd.DataFrame({"qid": ["q1"] * 3 + ["q2"] * 3 + ["q1"] * 3,
                           "item": ["d1", "d2", "ans", "d1", "d2", "ans", "d1", "d2", "ans"],
                           "rank": [1, 2, 3, 3, 1, 2, 2, 1, 3],
                           "annotator": ["r1"] * 6 + ["r2"] * 3})
    system = pd.DataFrame({"qid": ["q1"] * 3 + ["q2"] * 3, "item": ["d1", "d2", "ans"] * 2,
                           "score": [3.0, 2.0, 1.0, 1.0, 3.0, 2.0]})
    expert.to_csv(tmp_path / "expert.csv", index=False)
    system.to_csv(tmp_path / "system.csv", index=False)
    runner = CliRunner()
    several = runner.invoke(app, ["nrp", "agree", str(tmp_path / "expert.csv"), str(tmp_path / "system.csv")])
    assert several.exit_code == 1 and "--annotator" in several.output
    result = runner.invoke(app, ["nrp", "agree", str(tmp_path / "expert.csv"), str(tmp_path / "system.csv"),
                                 "--annotator", "r1", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert any("annotator r1: 6 of 9" in note for note in payload["notes"])
    rows = {row["measure"]: row for row in payload["rows"]}
    tau = next(row for name, row in rows.items() if "tau" in name.lower())
    assert tau["questions"] == 2 and tau["mean"] == 1.0  # r1 ranks each question exactly as the system does
    unknown = runner.invoke(app, ["nrp", "agree", str(tmp_path / "expert.csv"), str(tmp_path / "system.csv"),
                                  "--annotator", "r9"])
    assert unknown.exit_code == 1 and "r1, r2" in unknown.output


def test_table_result_lives_in_output_and_is_still_importable_from_nrp() -> None:
    from stableval.commands import nrp, output

    assert nrp.TableResult is output.TableResult and nrp.size_text is output.size_text


def test_score_and_validate_share_the_nrp_and_answer_flags() -> None:
    group = typer_command()
    shared = ("n", "ties", "bootstrap", "confidence", "exclude_copies", "skip_unknown")
    flags = {}
    for name in ("score", "validate"):
        params = {p.name: p for p in group.commands[name].params}  # type: ignore[attr-defined]
        flags[name] = {key: (params[key].opts, params[key].default, params[key].help) for key in shared}
    assert flags["score"] == flags["validate"]
    assert flags["score"]["bootstrap"][:2] == (["--bootstrap", "-B"], 1000)
    assert flags["score"]["skip_unknown"][0] == ["--skip-unknown-questions"]
    for command in ("score", "validate"):
        result = CliRunner().invoke(app, ["nrp", command, "somewhere", "answers.csv", "--n", "all"])
        assert result.exit_code == 2 and "'all'; choose from documents, list" in result.output


def test_the_collection_module_still_exports_the_names_it_had() -> None:
    """Issue 25: the test collection, LiveQA and answers moved to modules of their own (no import cycle with webis);
    every name ``stableval.nrp.collection`` exported is still importable from it, the same object as at home."""
    from stableval.nrp import answers, collection, liveqa, testcollection

    before = ["ANSWER_COLUMNS", "CLEF_CREDIBILITY", "CLEF_DIMENSIONS", "LIVEQA_GRADES", "LIVEQA_POOLS",
              "LIVEQA_QUERY_FIELDS", "TestCollection", "answers_from_frame", "clef_grade_map", "collection_from_frames",
              "qrels_dimension", "read_answers", "read_answers_table", "read_collection", "read_grade_map",
              "read_liveqa", "read_liveqa_references", "read_mediqa_answers", "read_qrels", "unread_note",
              "write_collection"]
    assert set(before) <= set(collection.__all__)
    for name in before:
        home = next((module for module in (testcollection, liveqa, answers) if name in module.__all__), collection)
        assert getattr(collection, name) is getattr(home, name), name
