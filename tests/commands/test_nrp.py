"""``stableval nrp``: score, evaluate-rankers, validate, agree, generate and study on the command line, their shared
flags, copies and unknown questions, and figures."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from stableval.cli import app
from stableval.errors import InputError
from stableval.nrp import collection_from_frames, read_answers, score_answers, write_collection
from stableval.nrp.rankers import REGISTRY, make_ranker
from stableval.nrp.rankers.bm25 import BM25Ranker
from stableval.nrp.validate import answer_signals

from command_line import clean_failure, nrp_group
from nrp_data import (
    QUERIES,
    graded_answers,
    graded_collection,
    random_collection,
    small_collection,
    tiny_score_files,
    with_intruders,
)
from paths import WEBIS, shared_file


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


# ----------------------------------------------------------------------------------- CLI
@pytest.mark.slow
def test_cli_score_and_evaluate(tmp_path) -> None:
    collection = random_collection(4)
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
    group = nrp_group()
    params = {p.name: p for p in group.commands["score"].params}  # type: ignore[attr-defined]
    assert params["duot5_k"].opts == ["--duo-k"] and params["duot5_k"].default == 10
    assert params["duot5_first_stage"].opts == ["--duo-first-stage"]
    record = command._ranker_record({"batch_size": 8, "duot5_k": 4, "duot5_first_stage": "tfidf"})
    assert record.batch_size == 8 and record.ranker_settings == {"duot5": {"k": 4, "first_stage": "tfidf"}}
    with pytest.raises(InputError, match=r"duot5 ranker's option k: got 1; allowed: an integer ≥ 2"):
        make_ranker("duot5", k=1)
    result = CliRunner().invoke(app, ["nrp", "evaluate-rankers", "somewhere", "--duo-k", "1"])
    assert result.exit_code == 2 and "--duo-k" in result.output


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


def test_score_and_validate_share_the_nrp_and_answer_flags() -> None:
    group = nrp_group()
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


@pytest.mark.slow
def test_duot5_on_the_command_line(duot5_dir: Path, tmp_path: Path) -> None:
    collection = tmp_path / "c"
    collection.mkdir()
    pd.DataFrame({"qid": ["1"], "query": ["flu fever"]}).to_csv(collection / "queries.csv", index=False)
    pd.DataFrame({"docno": list("abcd"), "text": ["flu fever", "tax car", "cough flu", "heart"]}
                 ).to_csv(collection / "documents.csv", index=False)
    pd.DataFrame({"qid": ["1"] * 4, "docno": list("abcd"), "grade": [2, 0, 1, 0]}
                 ).to_csv(collection / "judgments.csv", index=False)
    result = CliRunner().invoke(app, ["nrp", "evaluate-rankers", str(collection), "-r", "bm25,duot5", "--model-path",
                                      str(duot5_dir), "--duo-k", "3", "--duo-first-stage", "tfidf", "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert "duot5" in result.output
    missing = CliRunner().invoke(app, ["nrp", "evaluate-rankers", str(collection), "-r", "duot5"])
    assert missing.exit_code == 1 and "--model-path DIR" in missing.output


def test_plot_flags(tmp_path: Path) -> None:
    runner = CliRunner()
    export = tmp_path / "export.json"
    tasks = []
    for topic in range(3):
        items = [{"id": f"a{topic}", "score": 0.9, "model": "chatgpt", "kind": "answer"},
                 {"id": f"b{topic}", "score": 0.5, "model": "gpt2", "kind": "answer"},
                 {"id": f"d{topic}", "score": 0.7, "model": "", "kind": "document"}]
        tasks.append({"id": topic, "data": {"query": "q", "items": items}, "annotations": [
            {"completed_by": 1, "result": [{"type": "ranker", "value": {"ranker": {
                "rank": [f"d{topic}", f"a{topic}", f"b{topic}"]}}}]}]})
    export.write_text(json.dumps(tasks))
    result = runner.invoke(app, ["nrp", "agree", str(export), "--plot", str(tmp_path / "f" / "flow.svg")])
    assert result.exit_code == 0, result.output
    svg = (tmp_path / "f" / "flow.svg").read_text()
    assert "chatgpt (3)" in svg and "document (3)" in svg and "gpt2 (3)" in svg
    bad = runner.invoke(app, ["nrp", "agree", str(export), "--plot", str(tmp_path / "flow.txt")])
    assert bad.exit_code == 2 and "--plot" in bad.output and ".png" in bad.output


def test_score_plot_writes_the_points_figure(tmp_path: Path) -> None:
    collection, answers = tiny_score_files(tmp_path)
    result = CliRunner().invoke(app, ["nrp", "score", str(collection), str(answers), "-B", "0",
                                      "--plot", str(tmp_path / "plots")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "plots" / "nrp_points_by_prompt.png").stat().st_size > 1000
    assert (tmp_path / "plots" / "nrp_by_prompt.png").exists()


def test_score_refuses_unwritable_output_paths_before_scoring(tmp_path: Path) -> None:
    """Issue 26 (E3, E4): ``--plot`` onto a file and an over-long ``--answers-out`` are usage errors naming the
    option, not FileExistsError/OSError after the scoring."""
    collection, answers = tiny_score_files(tmp_path)
    plots = tmp_path / "plots"
    plots.write_text("")
    for flag, target, says in (("--plot", plots, "is a file, not a folder"),
                               ("--answers-out", tmp_path / ("x" * 300 + ".csv"), "at most 255")):
        output = clean_failure(CliRunner().invoke(app, ["nrp", "score", str(collection), str(answers), "-B", "0",
                                                        flag, str(target)]), 2)
        assert flag in output and says in output


@pytest.mark.slow
def test_generate_then_score_on_the_command_line(tiny_gpt2: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    queries = tmp_path / "queries.csv"
    QUERIES.to_csv(queries, index=False)
    collection = tmp_path / "c"
    collection.mkdir()
    pd.DataFrame({"qid": ["q1", "q2"], "query": QUERIES["question"]}).to_csv(collection / "queries.csv",
                                                                              index=False)
    pd.DataFrame({"docno": ["d1", "d2", "d3"], "text": ["diabetes can be managed", "flu is a virus", "tax"]}
                 ).to_csv(collection / "documents.csv", index=False)
    pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d3", "d2"], "grade": [2, 0, 1]}
                 ).to_csv(collection / "judgments.csv", index=False)
    out = tmp_path / "answers.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["nrp", "generate", str(queries), "-o", str(out), "--model", str(tiny_gpt2),
                                 "--template", "none,long-qa", "-n", "2", "--max-new-tokens", "5", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "8 answers by gpt2" in result.output
    answers = read_answers(out)
    assert len(answers) == 8 and set(answers["prompt"]) == {"none", "long-qa"}
    scored = runner.invoke(app, ["nrp", "score", str(collection), str(out), "-B", "0", "--format", "csv"])
    assert scored.exit_code == 0, scored.output
    assert "long-qa" in scored.output and "none" in scored.output
    bad = runner.invoke(app, ["nrp", "generate", str(queries), "-o", str(out), "--model", str(tiny_gpt2),
                              "--template", "cot"])
    assert bad.exit_code == 2 and "--template" in bad.output


def test_study_on_the_command_line(study_data, tmp_path: Path) -> None:
    collection, answers = study_data
    directory = write_collection(collection, tmp_path / "c")
    answers.to_csv(tmp_path / "answers.csv", index=False)
    runner = CliRunner()
    result = runner.invoke(app, ["nrp", "study", str(directory), str(tmp_path / "answers.csv"), "--topics", "5",
                                 "--models", "chatgpt,gpt2", "--portal", str(tmp_path / "p.jsonl"), "--label-studio",
                                 str(tmp_path / "ls.json"), "--rankings-out", str(tmp_path / "r.csv"), "--format",
                                 "csv"])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "p.jsonl").read_text().splitlines()) == 5
    assert len(json.loads((tmp_path / "ls.json").read_text())) == 5
    rankings = pd.read_csv(tmp_path / "r.csv", dtype={"qid": str})
    assert list(rankings.columns) == ["qid", "item", "score", "rank", "source"] and len(rankings) == 15
    assert set(rankings["source"]) == {"chatgpt", "gpt2", "document"}
    # the portal's export for this task (qid, item, rank; 1 = best): an expert who reverses the ranker
    expert = rankings.assign(rank=rankings.groupby("qid")["rank"].rank(ascending=False, method="first").astype(int),
                             rater="e1", position_shown=1)
    expert[["qid", "item", "rank", "rater", "position_shown"]].to_csv(tmp_path / "expert.csv", index=False)
    agree = runner.invoke(app, ["nrp", "agree", str(tmp_path / "expert.csv"), str(tmp_path / "r.csv"), "-f", "csv"])
    assert agree.exit_code == 0, agree.output
    measures = pd.read_csv(io.StringIO(agree.output)).set_index("measure")["mean"]
    assert measures["Kendall tau-b"] == pytest.approx(-1.0) and measures["Spearman rho"] == pytest.approx(-1.0)
    too_many = runner.invoke(app, ["nrp", "study", str(directory), str(tmp_path / "answers.csv"), "--topics", "40"])
    assert too_many.exit_code == 1 and "only 29 topic(s) have answers of every model" in too_many.output
    unknown = runner.invoke(app, ["nrp", "study", str(directory), str(tmp_path / "answers.csv"), "--models", "gpt5"])
    assert unknown.exit_code == 1 and "gpt5" in unknown.output and "chatgpt" in unknown.output


def test_cli_score_counts_and_excludes_copies_skips_unknown_questions(tmp_path) -> None:
    collection = small_collection(1)
    directory = write_collection(collection, tmp_path / "c")
    pool = collection.pool()
    rows = pd.DataFrame({"qid": [pool["qid"].iloc[0], pool["qid"].iloc[0], pool["qid"].iloc[7], "nowhere"],
                         "text": [pool["text"].iloc[0], "flu fever tea", "heart pain rest", "flu"]})
    rows.to_csv(tmp_path / "a.csv", index=False)  # no model column: one system
    runner = CliRunner()
    result = runner.invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-B", "0"])
    assert result.exit_code == 1 and "nowhere" in result.output and "--skip-unknown-questions" in result.output
    base = ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-B", "0", "--skip-unknown-questions",
            "--format", "json"]
    payload = json.loads(runner.invoke(app, base).stdout)
    assert payload["copies"] == 1 and payload["rows"][0]["model"] == "-" and payload["rows"][0]["answers"] == 3
    notes = " ".join(payload["notes"])
    assert "skipped 1 answer(s) to 1 question(s)" in notes and "1 answer(s) identical (1)" in notes
    payload = json.loads(runner.invoke(app, [*base, "--exclude-copies"]).stdout)
    assert payload["rows"][0]["answers"] == 2 and "left out (--exclude-copies)" in " ".join(payload["notes"])


def test_evaluate_rankers_run_out(tmp_path) -> None:
    collection = small_collection(2)
    directory = write_collection(collection, tmp_path / "c")
    result = CliRunner().invoke(app, ["nrp", "evaluate-rankers", str(directory), "-r", "bm25,tfidf", "--run-out",
                                      str(tmp_path / "run.csv"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    run = pd.read_csv(tmp_path / "run.csv", dtype={"qid": str, "docno": str})
    assert list(run.columns) == ["ranker", "qid", "docno", "score", "rank"]
    assert len(run) == 2 * len(collection.pool())
    for _, group in run.groupby(["ranker", "qid"]):
        assert sorted(group["rank"]) == list(range(1, len(group) + 1))
        assert group.loc[group["rank"] == 1, "score"].iloc[0] == group["score"].max()


def test_ranker_best_picks_the_highest_ndcg_and_says_so(tmp_path, monkeypatch) -> None:
    from stableval.commands import nrp as command
    from stableval.nrp.measures import evaluate_rankers, select_ranker
    from stableval.nrp.rankers import make_ranker

    collection = small_collection(5, questions=4)
    directory = write_collection(collection, tmp_path / "c")
    candidates = {"bm25-pool": make_ranker("bm25-pool"), "tfidf": make_ranker("tfidf")}
    summary, _ = evaluate_rankers(collection, candidates)
    expected = summary["ranker"].iloc[int(summary["ndcg@10"].to_numpy().argmax())]
    assert select_ranker(collection, candidates)[0] == expected
    # issue 31: every installed ranker is a candidate now, bm25-pool and DPH included (was bm25, tfidf, biencoder)
    assert command.best_candidates()[:4] == ["bm25", "bm25-pool", "tfidf", "dph"]
    monkeypatch.setattr(command, "best_candidates", lambda: ["bm25-pool", "tfidf"])
    pool = collection.pool()
    pool[["qid", "text"]].head(5).to_csv(tmp_path / "a.csv", index=False)
    result = CliRunner().invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-r", "best", "-B",
                                      "0", "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert f"--ranker best: {expected} (nDCG@10" in " ".join(payload["notes"])
    assert payload["settings"]["ranker"].startswith(expected.split("-")[0])


def test_grade_map_with_unjudged_values_in_ndcg_and_nrp(tmp_path) -> None:
    from stableval.nrp.measures import evaluate_run

    queries = pd.DataFrame({"qid": ["1"], "query": ["flu fever"]})
    documents = pd.DataFrame({"docno": list("abc"), "text": ["flu fever", "flu", "tax"]})
    judgments = pd.DataFrame({"qid": ["1"] * 5, "docno": ["a", "b", "c", "a", "c"],
                              "dimension": ["relevance"] * 3 + ["credibility"] * 2, "grade": [2, 1, 0, 3, 1]})
    directory = tmp_path / "c"
    write_collection(collection_from_frames(queries, documents, judgments), directory)
    (directory / "grade-map.csv").write_text("dimension,grade,gain\ncredibility,0,0\ncredibility,1,1\n"
                                             "credibility,2,2\ncredibility,3,unjudged\n")
    from stableval.nrp import read_collection

    mapped = read_collection(directory)
    plain = collection_from_frames(queries, documents, judgments)
    # credibility 3 = "unable to judge": that judgment is gone, relevance is untouched, D_q keeps a, b, c
    assert mapped.qrels("relevance")["grade"].tolist() == [2.0, 1.0, 0.0]
    assert mapped.qrels("credibility")[["docno", "grade"]].values.tolist() == [["c", 1.0]]
    assert len(mapped.pool()) == 3 and "1 judgment(s) with a grade mapped to 'unjudged'" in " ".join(mapped.notes)
    # nDCG: ranking c first is ideal once a's 3 is not a gain; without the map a's 3 counts as the top gain
    run = pd.DataFrame({"qid": ["1"] * 3, "docno": ["c", "b", "a"], "score": [3.0, 2.0, 1.0]})
    assert evaluate_run(mapped.qrels("credibility"), run)["ndcg"].iloc[0] == pytest.approx(1.0)
    assert evaluate_run(plain.qrels("credibility"), run)["ndcg"].iloc[0] < 0.8
    # NRP among credible documents (grade >= 1): only c is left to rank against
    answer = pd.DataFrame({"qid": ["1"], "model": ["m"], "text": ["fever"]})
    result = score_answers(mapped, answer, make_ranker("bm25"), bootstrap=0, relevant=1, dimension="credibility")
    assert result.answers["n_relevant"].iloc[0] == 1
    (directory / "grade-map.csv").write_text("dimension,grade,gain\nrelevance,0,0\nrelevance,1,1\n")
    with pytest.raises(InputError, match=r"grade not in the grade map.*got '2.0'; allowed: 0, 1"):
        read_collection(directory)
    result = CliRunner().invoke(app, ["nrp", "evaluate-rankers", str(directory), "--grade-map",
                                      str(tmp_path / "missing.csv")])
    assert result.exit_code == 1 and "missing.csv" in result.output


def test_score_with_several_rankers_is_a_usage_error(tmp_path) -> None:
    """``nrp score -r bm25,tfidf`` ended in an unhandled ValueError ("too many values to unpack"); like ``study`` it
    now says that it scores with one ranker (exit 2)."""
    directory = write_collection(small_collection(5, questions=4), tmp_path / "c")
    small_collection(5, questions=4).pool()[["qid", "text"]].head(5).to_csv(tmp_path / "a.csv", index=False)
    result = CliRunner().invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-r", "bm25,tfidf",
                                      "-B", "0"])
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())  # the error panel, unwrapped
    assert result.exit_code == 2 and "scores with one ranker" in text and "--ranker" in text
    assert not isinstance(result.exception, ValueError)


def test_answer_signals_and_cli(tmp_path) -> None:
    collection = graded_collection(3)
    directory = write_collection(collection, tmp_path / "c")
    pool = collection.pool().merge(collection.qrels("relevance"), on=["qid", "docno"])
    answers = pool.assign(model="m", answer_id=pool["docno"])[["qid", "model", "answer_id", "text", "grade"]]
    answers.to_csv(tmp_path / "graded.csv", index=False)
    frame = answer_signals(collection, answers, {"bm25": BM25Ranker()}, relevant=2)
    assert {"nrp:bm25", "score:bm25", "nrp-rel:bm25", "combo:bm25", "length", "grade"} <= set(frame.columns)
    # combined: the answer's percentile among every judged document's score against its own question
    docs, _ = BM25Ranker().score(collection.queries["query"].tolist(),
                                 [pool.loc[pool["qid"] == q, "text"].tolist() for q in collection.queries["qid"]])
    reference = np.concatenate(docs)
    share = np.array([stats.percentileofscore(reference, v, kind="mean") / 100 for v in frame["score:bm25"]])
    np.testing.assert_allclose(frame["combo:bm25"], (frame["nrp:bm25"] + share) / 2)
    runner = CliRunner()
    result = runner.invoke(app, ["nrp", "validate", str(directory), str(tmp_path / "graded.csv"), "-r", "bm25",
                                 "-B", "50", "--format", "json", "--signals-out", str(tmp_path / "s.csv")])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    signals = {r["signal"] for r in payload["rows"]}
    assert signals == {"nrp:bm25", "score:bm25", "nrp-rel:bm25", "combo:bm25", "length"}
    auc = {r["signal"]: r["value"] for r in payload["rows"] if r["measure"] == "auc"}
    assert auc["score:bm25"] > 0.6  # the synthetic grades follow the query words
    assert len(pd.read_csv(tmp_path / "s.csv")) == len(answers)
    result = runner.invoke(app, ["nrp", "validate", str(directory), "-r", "bm25,bm25-pool", "-B", "50",
                                 "--format", "csv"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(pd.io.common.StringIO(result.stdout))
    assert set(table["signal"]) >= {"nrp:bm25", "nrp:bm25-pool", "combo:bm25", "length"} and len(table) == 9 * 5
    result = runner.invoke(app, ["nrp", "validate", str(directory), str(tmp_path / "graded.csv"),
                                 "--grade-column", "stars"])
    assert result.exit_code == 1 and "stars" in result.output
    result = runner.invoke(app, ["nrp", "validate", str(directory), "--ties", "best"])
    assert result.exit_code == 2


def test_score_reports_the_absolute_companions(tmp_path) -> None:
    collection = graded_collection(4, questions=3)
    directory = write_collection(collection, tmp_path / "c")
    pool = collection.pool()
    answers = pool.assign(model=np.where(np.arange(len(pool)) % 2, "odd", "even"))[["qid", "model", "text"]]
    answers.to_csv(tmp_path / "a.csv", index=False)
    result = CliRunner().invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "--relevant", "2",
                                      "-B", "0", "--format", "csv", "--answers-out", str(tmp_path / "per.csv")])
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(pd.io.common.StringIO(result.stdout)).set_index("model")
    per = pd.read_csv(tmp_path / "per.csv")
    for model in ("odd", "even"):
        rows = per[per["model"] == model]
        assert summary.loc[model, "mean_nrp_relevant"] == pytest.approx(rows["nrp_relevant"].mean())
        assert summary.loc[model, "mean_score"] == pytest.approx(rows["score"].mean())
    assert (per["n_relevant"] < per["n_documents"]).any() and (per["nrp_relevant"] >= 0).all()


def test_cli_flags_equal_removing_the_rows_by_hand(tmp_path) -> None:
    collection = graded_collection(5)
    directory = write_collection(collection, tmp_path / "c")
    clean = graded_answers(collection)
    clean.to_csv(tmp_path / "clean.csv", index=False)
    with_intruders(collection, clean).to_csv(tmp_path / "mixed.csv", index=False)
    runner = CliRunner()
    base = ["nrp", "validate", str(directory), "-r", "bm25,tfidf", "-B", "40", "--format", "json"]
    flags = ["--exclude-copies", "--skip-unknown-questions"]
    mixed = runner.invoke(app, [*base[:3], str(tmp_path / "mixed.csv"), *base[3:], *flags,
                                "--signals-out", str(tmp_path / "mixed-signals.csv")])
    assert mixed.exit_code == 0, mixed.output
    by_hand = runner.invoke(app, [*base[:3], str(tmp_path / "clean.csv"), *base[3:],
                                  "--signals-out", str(tmp_path / "clean-signals.csv")])
    assert by_hand.exit_code == 0, by_hand.output
    got, want = json.loads(mixed.stdout), json.loads(by_hand.stdout)
    assert got["rows"] == want["rows"]  # every measure, per question and pooled, with the same intervals
    assert {r["measure"] for r in got["rows"]} >= {"spearman_q", "tau_b_q"}
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "mixed-signals.csv"),
                                  pd.read_csv(tmp_path / "clean-signals.csv"))
    assert "skipped 2 answer(s) to 1 question(s)" in " ".join(got["notes"])
    assert any(n.startswith("warning: 3 answer(s)") and "left out" in n for n in got["notes"])
    # without the flags: the unknown question is an input error (exit 1); the copies are only counted
    refused = runner.invoke(app, [*base[:3], str(tmp_path / "mixed.csv"), *base[3:]])
    assert refused.exit_code == 1 and "--skip-unknown-questions" in refused.output
    kept = runner.invoke(app, [*base[:3], str(tmp_path / "mixed.csv"), *base[3:], "--skip-unknown-questions"])
    assert kept.exit_code == 0 and "--exclude-copies leaves them out" in kept.stdout
    assert json.loads(kept.stdout)["rows"] != want["rows"]
    # the flags mean nothing in leave-one-out: a usage error
    assert runner.invoke(app, [*base, "--exclude-copies"]).exit_code == 2


def test_agree_aggregates_several_experts_with_a_ranking_method(tmp_path) -> None:
    """Issue 29: rankings by several experts are combined per question by a registered ranking method (every one
    runs); two experts who agree with the system and one who swaps its last two still give tau 1 (the majority
    order)."""
    from stableval.aggregate.rankings import ranking_method_names

    rows = []
    for qid in ("q1", "q2", "q3"):
        for annotator, order in (("r1", ["d1", "d2", "d3"]), ("r2", ["d1", "d2", "d3"]), ("r3", ["d1", "d3", "d2"])):
            rows += [{"qid": qid, "item": item, "rank": rank, "annotator": annotator}
                     for rank, item in enumerate(order, start=1)]
    pd.DataFrame(rows).to_csv(tmp_path / "expert.csv", index=False)
    pd.DataFrame({"qid": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 3, "item": ["d1", "d2", "d3"] * 3,
                  "score": [3.0, 2.0, 1.0] * 3}).to_csv(tmp_path / "system.csv", index=False)
    runner = CliRunner()
    for method in ranking_method_names():
        result = runner.invoke(app, ["nrp", "agree", str(tmp_path / "expert.csv"), str(tmp_path / "system.csv"),
                                     "--aggregate", method, "-f", "json"])
        assert result.exit_code == 0, (method, result.output)
        payload = json.loads(result.stdout)
        tau = next(row for row in payload["rows"] if "tau" in row["measure"].lower())
        assert tau["mean"] == 1.0 and tau["questions"] == 3, method
        assert any("aggregated per question" in note for note in payload["notes"])
        assert all(row["ci_high"] is None or row["ci_high"] <= 1 for row in payload["rows"])


def test_agree_passes_ranking_params_to_the_aggregating_method(tmp_path: Path) -> None:
    """Issue 29: ``nrp agree --aggregate M --ranking-param M.NAME=V`` fits M with that value (the API's
    ``aggregate_expert_rankings(frame, M, params)``); without --aggregate the flag is refused."""
    from stableval.commands.nrp import aggregate_expert_rankings

    rows = [{"task": "q1", "query": "q", "item": item, "rank": rank, "annotator": annotator, "score": 1.0}
            for annotator, order in (("r1", ["d1", "d2"]), ("r2", ["d2", "d1"]), ("r3", ["d1", "d2"]))
            for rank, item in enumerate(order, start=1)]
    frame = pd.DataFrame(rows)
    out, note = aggregate_expert_rankings(frame, "pl", {"pl": {"prior_shape": 3.0}})
    assert list(out["item"]) == ["d1", "d2"] and note.endswith("by PL")
    with pytest.raises(ValueError, match="prior_shape"):  # the value reaches the method's own checks
        aggregate_expert_rankings(frame, "pl", {"pl": {"prior_shape": 0.5}})
    pd.DataFrame(rows).rename(columns={"task": "qid"}).to_csv(tmp_path / "expert.csv", index=False)
    pd.DataFrame({"qid": ["q1", "q1"], "item": ["d1", "d2"], "score": [2.0, 1.0]}).to_csv(tmp_path / "system.csv",
                                                                                          index=False)
    runner = CliRunner()
    ok = runner.invoke(app, ["nrp", "agree", str(tmp_path / "expert.csv"), str(tmp_path / "system.csv"),
                             "--aggregate", "pl", "--ranking-param", "pl.prior_shape=3", "-f", "json"])
    assert ok.exit_code == 0, ok.output
    for flags, says in ((["--ranking-param", "pl.prior_shape=3"], "give --aggregate METHOD too"),
                        (["--aggregate", "irn", "--ranking-param", "pl.prior_shape=3"], "not among the chosen")):
        output = clean_failure(runner.invoke(app, ["nrp", "agree", str(tmp_path / "expert.csv"),
                                                   str(tmp_path / "system.csv"), *flags]), 2)
        assert "--ranking-param" in output and says in " ".join(output.split())


@pytest.mark.parametrize(("flags", "says"), [
    (["--relevant", "nan"], "finite grade"), (["--sizes", "m1=7B,m1=8B"], "more than once"),
    (["--sizes", "m1=-5B"], "finite number > 0"), (["--sizes", "m1=nanB"], "finite number > 0")])
def test_score_refuses_a_nan_grade_and_contradictory_or_impossible_sizes(tmp_path: Path, flags: list[str],
                                                                         says: str) -> None:
    """Issue 26 (E10, E11): usage errors naming the option, not a meaningless column or a silently dropped size."""
    collection, answers = tiny_score_files(tmp_path)
    output = clean_failure(CliRunner().invoke(app, ["nrp", "score", str(collection), str(answers), "-B", "0",
                                                    *flags]), 2)
    assert flags[0] in output and says in output
