"""Issue 12, "Exact conventions": majority vote's ``first`` tie rule, accuracy against gold from what each method
reports, ``convert``'s suggested levels, the paper-style MV/STABLEVAL comparison, and ``stableval mt-bench``."""

from __future__ import annotations

import io
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import scipy.stats
from typer.testing import CliRunner

from stableval import InputOptions, load
from stableval.aggregate import DawidSkene, MajorityVote
from stableval.aggregate.responses import first_seen
from stableval.cli import app
from stableval.data.table import AnnotationTable
from stableval.datasets import load_mt_bench, load_truth_inference
from stableval.evaluate import score_agents
from stableval.evaluate.across import score_across
from stableval.evaluate.scores import compare_methods, comparison_pair
from stableval.report import build_report

from conftest import shared_file

runner = CliRunner()
MT_BENCH = ("mt_bench_human_judgments", "mt_bench_human_votes_available.jsonl")


def table_of(labels: list[list[int]], levels: tuple[str, ...] = ("0", "1", "2"), agent: str = "A") -> AnnotationTable:
    """One response per list (items q0, q1, ...), its labels in file order, one rater each."""
    frame = pd.DataFrame([{"item": f"q{i}", "agent": agent, "rater": f"r{j}", "label": label}
                          for i, row in enumerate(labels) for j, label in enumerate(row)])
    return AnnotationTable.from_frame(frame, levels=levels)


# ====================================================================================== MV ties = "first"
def test_first_tie_rule_hand_worked() -> None:
    # file order [2, 0, 0, 2]: 0 and 2 tie with two votes each; 2 was seen first → 2 (Counter.most_common's answer)
    table = table_of([[2, 0, 0, 2], [0, 2, 2, 0], [1, 1, 0], [0, 1, 2]])
    assert Counter([2, 0, 0, 2]).most_common(1)[0][0] == 2
    assert first_seen(table).tolist() == [[1, 14, 0], [4, 14, 5], [10, 8, 14], [11, 12, 13]]  # 14: never
    first = MajorityVote(ties="first").fit(table)
    assert first.labels_.tolist() == [2, 0, 1, 0] and first.tie_break_ == "first"
    np.testing.assert_array_equal(first.posteriors_, np.eye(3)[[2, 0, 1, 0]])
    assert MajorityVote(ties="lowest").fit(table).labels_.tolist() == [0, 0, 1, 0]
    assert MajorityVote(ties="highest").fit(table).labels_.tolist() == [2, 2, 1, 2]
    assert first.tied_.tolist() == [True, True, False, True]


def test_first_follows_row_order_not_rater_names() -> None:
    frame = pd.DataFrame({"item": "q", "agent": "A", "rater": ["z", "a"], "label": [1, 0]})
    levels = ("0", "1")
    assert MajorityVote(ties="first").fit(AnnotationTable.from_frame(frame, levels=levels)).labels_.tolist() == [1]
    flipped = frame.iloc[::-1].reset_index(drop=True)
    assert MajorityVote(ties="first").fit(AnnotationTable.from_frame(flipped, levels=levels)).labels_.tolist() == [0]


def test_first_without_the_file_order_breaks_ties_at_random_and_says_so() -> None:
    table = table_of([[2, 0, 0, 2], [0, 2], [1, 0], [1, 1, 2]])
    X = table.response_matrix()
    bare = MajorityVote(ties="first", seed=5).fit_matrix(X, table.n_raters, table.n_levels)
    random = MajorityVote(ties="random", seed=5).fit_matrix(X, table.n_raters, table.n_levels)
    assert bare.tie_break_ == "random"
    np.testing.assert_array_equal(bare.labels_, random.labels_)
    given = MajorityVote(ties="first").fit_matrix(X, table.n_raters, table.n_levels, first_seen=first_seen(table))
    np.testing.assert_array_equal(given.labels_, MajorityVote(ties="first").fit(table).labels_)
    with pytest.raises(ValueError, match="first_seen must have shape"):
        MajorityVote(ties="first").fit_matrix(X, table.n_raters, table.n_levels, first_seen=np.zeros((2, 3)))
    # gold clamps a response whatever the tie rule
    clamped = MajorityVote(ties="first").fit(table, gold={("q0", "A"): "0"})
    assert clamped.labels_.tolist()[0] == 0


def test_pairwise_votes_keep_file_order_for_first(tmp_path: Path) -> None:
    # A's judgments of q1: vote 1 (A as agent_b) loses, vote 2 (A as agent_a) wins → tie of loss and win; first = loss
    path = tmp_path / "votes.csv"
    path.write_text("item,agent_a,agent_b,rater,winner\nq1,B,A,r1,a\nq1,A,C,r2,a\n")
    table = load(path).table
    assert table.to_frame()[["agent", "label"]].values.tolist() == [["B", "win"], ["A", "loss"], ["A", "win"],
                                                                    ["C", "loss"]]
    a = list(table.agents).index("A")
    labels = MajorityVote(ties="first").fit(table).labels_
    assert labels[table.response_agent == a].tolist() == [0]


def _most_common_first(groups: dict[tuple[str, str], list[str]]) -> dict[tuple[str, str], str]:
    return {key: Counter(labels).most_common(1)[0][0] for key, labels in groups.items()}


def test_first_reproduces_counter_most_common_on_truth_inference() -> None:
    """Paper-style MV (Python's Counter over each question's answers in file order) on a real set."""
    folder = shared_file("zheng2017_truth_inference", "s4_Dog_data")
    data = load_truth_inference(folder)
    answers = pd.read_csv(folder / "answer.csv", dtype=str).drop_duplicates(["question", "worker"], keep="first")
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for question, answer in zip(answers["question"], answers["answer"], strict=True):
        groups[(question, "s4_Dog_data")].append(answer)
    expected = _most_common_first(groups)
    table = data.table
    model = MajorityVote(ties="first").fit(table)
    ours = {(str(table.items[i]), str(table.agents[a])): table.levels[c]
            for i, a, c in zip(table.response_item, table.response_agent, model.labels_, strict=True)}
    assert ours == expected
    tied = sum(1 for labels in groups.values() if sorted(Counter(labels).values())[-2:].count(
        max(Counter(labels).values())) == 2)
    assert int(model.tied_.sum()) == tied == 50
    lowest = MajorityVote(ties="lowest").fit(table).labels_
    assert (lowest != model.labels_).sum() > 10   # the rule matters on this set


def test_first_reproduces_counter_most_common_on_mt_bench() -> None:
    path = shared_file(*MT_BENCH)
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    outcome = {"model_a": ("win", "loss"), "model_b": ("loss", "win")}
    for line in path.read_text(encoding="utf-8").splitlines():
        vote = json.loads(line)
        if str(vote["turn"]) != "1":
            continue
        item = f"q{vote['question_id']}-turn1"
        a, b = outcome.get(vote["winner"], ("tie", "tie"))
        groups[(item, vote["model_a"])].append(a)
        groups[(item, vote["model_b"])].append(b)
    expected = _most_common_first(groups)
    table = load_mt_bench(path)
    model = MajorityVote(ties="first").fit(table)
    ours = {(str(table.items[i]), str(table.agents[a])): table.levels[c]
            for i, a, c in zip(table.response_item, table.response_agent, model.labels_, strict=True)}
    assert ours == expected and len(ours) == 480
    # and the per-agent MV scores are the means of those labels' credit (win 1, tie 0.5, loss 0)
    credit = {"loss": 0.0, "tie": 0.5, "win": 1.0}
    scores = score_agents(table, [MajorityVote(ties="first")], bootstrap=0).scores.set_index("agent")["score"]
    by_agent: dict[str, list[float]] = defaultdict(list)
    for (_, agent), label in expected.items():
        by_agent[agent].append(credit[label])
    for agent, values in by_agent.items():
        assert scores[agent] == pytest.approx(np.mean(values), abs=1e-12)


def test_refit_bootstrap_keeps_the_first_rule() -> None:
    # agent A: every response ties 0/2 with 2 first → credit 1 each; a refit on the bare matrix would draw ties
    table = table_of([[2, 0]] * 6, levels=("0", "1", "2"))
    result = score_agents(table, [MajorityVote(ties="first")], bootstrap=20, refit=True, seed=1)
    assert result.scores["score"].tolist() == [1.0]
    np.testing.assert_array_equal(result.replicates["mv"], np.ones((20, 1)))


# ====================================================================================== --ties in every command
def ties_file(folder: Path) -> Path:
    """Two agents; each response ties 0/1 (raters r1, r2), A with 1 first, B with 0 first; plus one clear vote."""
    rows = []
    for i in range(6):
        rows += [(f"q{i}", "A", "r1", 1), (f"q{i}", "A", "r2", 0), (f"q{i}", "A", "r3", 1 if i < 3 else 0),
                 (f"q{i}", "A", "r4", 0 if i < 3 else 1)]
        rows += [(f"q{i}", "B", "r1", 0), (f"q{i}", "B", "r2", 1)]
    path = folder / "ties.csv"
    pd.DataFrame(rows, columns=["item", "agent", "rater", "label"]).to_csv(path, index=False)
    return path


def _mv_scores(output: str) -> dict[str, float]:
    return {row["agent"]: row["score"] for row in json.loads(output)["scores"] if row["method"] == "mv"}


def test_the_tie_rules_are_one_vocabulary() -> None:
    """Issue 25: majority vote's ``ties`` and the rater bootstrap's ``ties`` are subsets of one declaration
    (``stableval.aggregate.ties``), and a rule both take breaks the same tie the same way."""
    from stableval.aggregate.majority_vote import TIE_POLICIES
    from stableval.aggregate.ties import TIE_RULES
    from stableval.evaluate.rater_bootstrap import TIES, ground_truth

    assert set(TIE_POLICIES) | set(TIES) == set(TIE_RULES)
    assert MajorityVote.PARAMETERS[0].choices == TIE_POLICIES
    labels = np.array([[0, 2, 1, 2, 0], [1, 1, 2, 2, 1], [2, 0, 2, 0, 1]])  # two ties, one clear majority
    X = np.zeros((3, 5 * 3))
    for item, row in enumerate(labels):
        for rater, level in enumerate(row):
            X[item, rater * 3 + level] += 1
    for rule in sorted(set(TIE_POLICIES) & set(TIES) - {"random"}):
        votes = MajorityVote(ties=rule).fit_matrix(sp.csr_matrix(X), 5, 3).posteriors_
        np.testing.assert_array_equal(votes, ground_truth(labels, 3, ties=rule), err_msg=rule)
    with pytest.raises(ValueError, match="ties='exclude': allowed one of split, lowest, highest, random, first"):
        MajorityVote(ties="exclude")
    with pytest.raises(ValueError, match="ties must be one of split, random, lowest, exclude; got 'first'"):
        ground_truth(labels, 3, ties="first")


def test_score_honours_every_tie_rule(tmp_path: Path) -> None:
    path = ties_file(tmp_path)
    got = {}
    for rule in ("split", "first", "lowest", "highest"):
        result = runner.invoke(app, ["score", str(path), "-m", "mv", "--ties", rule, "-B", "0", "-f", "json"])
        assert result.exit_code == 0, result.output
        got[rule] = _mv_scores(result.stdout)
    assert got["split"] == {"A": 0.5, "B": 0.5}
    assert got["first"] == {"A": 1.0, "B": 0.0} and got["lowest"] == {"A": 0.0, "B": 0.0}
    assert got["highest"] == {"A": 1.0, "B": 1.0}


def test_stability_honours_the_tie_rule(tmp_path: Path) -> None:
    path = ties_file(tmp_path)
    full = {}
    for rule in ("first", "lowest"):
        result = runner.invoke(app, ["stability", str(path), "-m", "mv", "--ties", rule, "--sizes", "2",
                                     "--repetitions", "3", "-f", "json"])
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        full[rule] = {row["agent"]: row["score"] for row in payload["full_scores"]}
    assert full["first"] == {"A": 1.0, "B": 0.0} and full["lowest"] == {"A": 0.0, "B": 0.0}


def test_report_honours_the_tie_rule(tmp_path: Path) -> None:
    path = ties_file(tmp_path)
    pages = {}
    for rule in ("first", "lowest"):
        out = tmp_path / f"{rule}.html"
        result = runner.invoke(app, ["report", str(path), "-m", "mv", "--ties", rule, "-B", "0", "--quick",
                                     "-o", str(out), "-j", "1"])
        assert result.exit_code == 0, result.output
        pages[rule] = out.read_text(encoding="utf-8")
    leaderboard = {rule: page.split('<section id="leaderboard">')[1].split("</section>")[0]
                   for rule, page in pages.items()}
    assert "<td>1.000</td>" in leaderboard["first"] and "<td>1.000</td>" not in leaderboard["lowest"]


def test_diagnose_has_no_majority_vote_so_no_ties_flag(tmp_path: Path) -> None:
    result = runner.invoke(app, ["diagnose", str(ties_file(tmp_path)), "--ties", "first"])
    assert result.exit_code == 2 and "--ties" in result.output


def test_ablate_honours_the_tie_rule(tmp_path: Path) -> None:
    """The simulator has no file order, so ``first`` breaks ties as ``random`` does with the same seed — and
    differs from ``split``."""
    runs = {}
    for rule in ("first", "random", "split"):
        config = tmp_path / f"{rule}.toml"
        config.write_text(
            f"trials = 4\nseed = 3\nsubsamples = 2\nmethods = ['mv']\n[params.mv]\nties = '{rule}'\n"
            "[base]\nqualities = [0.8, 0.5, 0.3]\nitems = 15\nraters = 6\nlabels_per_response = 2\nlevels = 2\n"
            "[[sweep]]\nname = 'hard'\nvalues = [0.0]\n")
        out = tmp_path / rule
        result = runner.invoke(app, ["ablate", "--config", str(config), "-o", str(out), "-j", "1", "--no-plots"])
        assert result.exit_code == 0, result.output
        runs[rule] = pd.read_csv(out / "trials.csv")
    np.testing.assert_allclose(runs["first"]["mse"], runs["random"]["mse"])
    assert not np.allclose(runs["first"]["mse"], runs["split"]["mse"])


# ====================================================================================== accuracy against gold
def gold_case(folder: Path) -> tuple[Path, Path]:
    """q0 1,1 (gold 1); q1 0,1 tie (gold 1); q2 0,0 (gold 0); q3 1,0 tie (gold 1)."""
    ratings = folder / "answers.csv"
    ratings.write_text("item,rater,label\nq0,a,1\nq0,b,1\nq1,a,0\nq1,b,1\nq2,a,0\nq2,b,0\nq3,a,1\nq3,b,0\n")
    gold = folder / "truth.csv"
    gold.write_text("question,truth\nq0,1\nq1,1\nq2,0\nq3,1\n")
    return ratings, gold


def test_score_gold_accuracy_uses_the_tie_rule(tmp_path: Path) -> None:
    """Regression: ``score --gold`` scored majority vote by its vote shares, so ``--ties`` changed nothing."""
    ratings, gold = gold_case(tmp_path)
    expected = {"split": 0.75, "lowest": 0.5, "highest": 1.0, "first": 0.75}
    for rule, accuracy in expected.items():
        result = runner.invoke(app, ["score", str(ratings), "--default-agent", "bot", "--gold", str(gold), "-B", "0",
                                     "-m", "mv", "--ties", rule, "-f", "json"])
        assert result.exit_code == 0, result.output
        row = next(r for r in json.loads(result.stdout)["gold_accuracy"] if r["agent"] == "(all)")
        assert row["accuracy"] == pytest.approx(accuracy), rule
        assert row["expected_accuracy"] == pytest.approx(accuracy), rule   # hard labels: the same number


def test_expected_accuracy_is_the_probability_of_the_gold_level_for_every_method() -> None:
    folder = shared_file("zheng2017_truth_inference", "d_Duck_Identification")
    data = load_truth_inference(folder)
    assert data.gold is not None
    result = score_agents(data.table, ["mv", "ds"], params={"mv": {"ties": "lowest"}}, bootstrap=0)
    np.testing.assert_array_equal(result.posteriors["mv"], MajorityVote(ties="lowest").fit(data.table).posteriors_)
    np.testing.assert_allclose(result.posteriors["ds"], DawidSkene().fit(data.table).posteriors_)
    from stableval.datasets import gold_accuracy

    frame = gold_accuracy(data.table, result.posteriors, data.gold).set_index(["method", "agent"])
    codes = {key: data.table.levels.index(value) for key, value in data.gold.items()}
    index = {(str(data.table.items[i]), str(data.table.agents[a])): n
             for n, (i, a) in enumerate(zip(data.table.response_item, data.table.response_agent, strict=True))}
    rows = np.array([index[key] for key in codes])
    levels = np.array(list(codes.values()))
    for method in ("mv", "ds"):
        mass = result.posteriors[method][rows, levels]
        assert frame.loc[(method, "(all)"), "expected_accuracy"] == pytest.approx(mass.mean(), abs=1e-12)
    # majority vote with a tie rule gives hard labels: its accuracy and expected accuracy agree
    assert frame.loc[("mv", "(all)"), "accuracy"] == frame.loc[("mv", "(all)"), "expected_accuracy"]


# ====================================================================================== convert's --levels
def toy_truth(folder: Path, answers: list[tuple[str, str, int]], truth: list[tuple[str, int]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "answer.csv").write_text("question,worker,answer\n" + "".join(f"{q},{w},{a}\n" for q, w, a in answers))
    (folder / "truth.csv").write_text("question,truth\n" + "".join(f"{q},{t}\n" for q, t in truth))
    return folder


def test_convert_suggests_the_levels_present_for_one_based_labels(tmp_path: Path) -> None:
    """Regression: 1..4 labels were suggested as --levels 0,1,2,3,4 (a phantom level 0 that shifts the credit)."""
    folder = toy_truth(tmp_path / "likert", [("q1", "w1", 1), ("q1", "w2", 2), ("q2", "w1", 4), ("q2", "w2", 3),
                                             ("q3", "w1", 4), ("q3", "w2", 4)], [("q1", 1), ("q2", 4)])
    out = tmp_path / "likert.csv"
    result = runner.invoke(app, ["convert", "truth-inference", str(folder), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"score it: stableval score {out} --levels 1,2,3,4\n" in result.output
    assert "--levels 0," not in result.output and "level 0 occurs in no judgment or gold label" in result.output
    scored = runner.invoke(app, ["score", str(out), "--levels", "1,2,3,4", "-m", "mv", "-B", "0", "-f", "json"])
    payload = json.loads(scored.stdout)
    assert payload["dataset"]["credit"] == pytest.approx([0, 1 / 3, 2 / 3, 1])
    # q1 1/2 tie → mean credit 1/6; q2 4/3 tie → 5/6; q3 4 → 1
    assert payload["scores"][0]["score"] == pytest.approx((1 / 6 + 5 / 6 + 1) / 3)


def test_convert_names_skipped_integer_labels(tmp_path: Path) -> None:
    folder = toy_truth(tmp_path / "gap", [("q1", "w1", 1), ("q1", "w2", 2), ("q2", "w1", 4)], [("q1", 1)])
    result = runner.invoke(app, ["convert", "truth-inference", str(folder), "-o", str(tmp_path / "gap.csv")])
    assert result.exit_code == 0, result.output
    assert "--levels 1,2,4\n" in result.output
    assert "integer labels skip 3" in result.output and "score with --levels 1,2,3,4" in result.output
    # a gold level that no answer has is kept (score --gold would otherwise reject it)
    folder = toy_truth(tmp_path / "gold", [("q1", "w1", 1), ("q1", "w2", 2)], [("q1", 3)])
    result = runner.invoke(app, ["convert", "truth-inference", str(folder), "-o", str(tmp_path / "g.csv")])
    assert "--levels 1,2,3\n" in result.output


def test_convert_levels_on_real_data(tmp_path: Path) -> None:
    """A real 0-based set keeps 0..3; the same answers shifted to 1..4 get 1..4 and score identically."""
    source = shared_file("zheng2017_truth_inference", "s4_Face_Sentiment_Identification")
    out = tmp_path / "face.csv"
    result = runner.invoke(app, ["convert", "truth-inference", str(source), "-o", str(out)])
    assert result.exit_code == 0 and "--levels 0,1,2,3\n" in result.output
    shifted = tmp_path / "shifted"
    shifted.mkdir()
    answers = pd.read_csv(source / "answer.csv", dtype=str)
    answers[answers.columns[2]] = (answers[answers.columns[2]].astype(int) + 1).astype(str)
    answers.to_csv(shifted / "answer.csv", index=False)
    truth = pd.read_csv(source / "truth.csv", dtype=str)
    truth[truth.columns[1]] = (truth[truth.columns[1]].astype(int) + 1).astype(str)
    truth.to_csv(shifted / "truth.csv", index=False)
    out_shifted = tmp_path / "shifted.csv"
    result = runner.invoke(app, ["convert", "truth-inference", str(shifted), "-o", str(out_shifted)])
    assert result.exit_code == 0 and f"score it: stableval score {out_shifted} --levels 1,2,3,4\n" in result.output
    scores = [json.loads(runner.invoke(app, ["score", str(path), "--levels", levels, "-m", "mv", "-B", "0",
                                             "-f", "json"]).stdout)["scores"][0]["score"]
              for path, levels in ((out, "0,1,2,3"), (out_shifted, "1,2,3,4"))]
    assert scores[0] == pytest.approx(scores[1], abs=1e-12)


# ====================================================================================== MV vs STABLEVAL summary
def test_compare_methods_hand_worked() -> None:
    # MV:  A 0.50 (2), B 0.60 (1), C 0.10 (4), D 0.20 (3); SV: A 0.70 (1), B 0.60 (2), C 0.10 (4), D 0.40 (3)
    frame = pd.DataFrame({"method": ["mv"] * 4 + ["sv"] * 4, "agent": list("ABCD") * 2,
                          "score": [0.5, 0.6, 0.1, 0.2, 0.7, 0.6, 0.1, 0.4], "rank": [2, 1, 4, 3, 1, 2, 4, 3]})
    c = compare_methods(frame, "sv", "mv")
    assert c.agents["agent"].tolist() == ["A", "B", "D", "C"]                        # the method's best first
    np.testing.assert_allclose(c.agents["change"], [0.2, 0.0, 0.2, 0.0], atol=1e-12)
    assert c.agents["rank_change"].tolist() == [1, -1, 0, 0]
    assert (c.largest_agent, round(c.largest_change, 12)) == ("A", 0.2)              # first of the two +0.2
    assert c.rank_changes == 2 and c.swapped_pairs == 1                               # A and B swap
    x, y = np.array([0.5, 0.6, 0.2, 0.1]), np.array([0.7, 0.6, 0.4, 0.1])
    # Pearson by hand: deviations (0.15, 0.25, -0.15, -0.25) and (0.25, 0.15, -0.05, -0.35)
    assert c.pearson == pytest.approx((0.0375 + 0.0375 + 0.0075 + 0.0875) / np.sqrt(0.17 * 0.21), abs=1e-12)
    assert c.spearman == pytest.approx(0.8)                                           # 1 - 6·2 / (4·15)
    assert c.pearson == pytest.approx(scipy.stats.pearsonr(x, y)[0])
    assert c.spearman == pytest.approx(scipy.stats.spearmanr(x, y)[0])
    unscored = pd.concat([frame, pd.DataFrame({"method": ["mv", "sv"], "agent": "E", "score": [0.3, np.nan],
                                               "rank": [3, 5]})], ignore_index=True)
    assert compare_methods(unscored, "sv", "mv").agents["agent"].tolist() == ["A", "B", "D", "C"]  # E left out
    flat = compare_methods(frame.assign(score=0.5), "sv", "mv")
    assert np.isnan(flat.pearson) and np.isnan(flat.spearman) and flat.swapped_pairs == 0


def test_comparison_pair_reads_the_registry() -> None:
    assert comparison_pair(["mv", "ds", "stableval"]) == ("stableval", "mv")
    assert comparison_pair(["stableval", "mv"]) == ("stableval", "mv")
    assert comparison_pair(["ds", "stableval"]) is None and comparison_pair(["mv"]) is None
    assert comparison_pair(["ds", "mv"]) == ("ds", "mv")          # no STABLEVAL: the headline is the first method


def test_score_json_csv_and_table_carry_the_comparison(tmp_path: Path) -> None:
    path = shared_file(*MT_BENCH)
    table = load_mt_bench(path)
    result = score_agents(table, ["mv", "stableval"], bootstrap=0)
    comparison = result.comparison()
    assert comparison is not None
    wide = result.leaderboard().set_index("agent")
    np.testing.assert_allclose(comparison.agents.set_index("agent")["change"],
                               (wide["stableval_score"] - wide["mv_score"]).loc[comparison.agents["agent"]])
    assert comparison.pearson == pytest.approx(scipy.stats.pearsonr(wide["mv_score"], wide["stableval_score"])[0])
    assert comparison.spearman == pytest.approx(
        scipy.stats.spearmanr(wide["mv_score"], wide["stableval_score"])[0])
    change = (wide["stableval_score"] - wide["mv_score"])
    assert comparison.largest_agent == change.abs().idxmax()
    assert comparison.rank_changes == int((wide["stableval_rank"] != wide["mv_rank"]).sum())
    # MV's baseline scores on MT-Bench turn 1 (ties split): gpt-4 0.775, llama-13b 0.091 (README)
    assert wide.loc["gpt-4", "mv_score"] == pytest.approx(0.775, abs=5e-4)
    # the command line: JSON, CSV and the table
    out = tmp_path / "mt.csv"
    assert runner.invoke(app, ["convert", "mt-bench", str(path), "-o", str(out)]).exit_code == 0
    args = ["score", str(out), "--levels", "loss,tie,win", "--duplicates", "keep", "-m", "mv,stableval", "-B", "0"]
    payload = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    assert payload["comparison"]["method"] == "stableval" and payload["comparison"]["baseline"] == "mv"
    assert payload["comparison"]["largest_change"]["agent"] == comparison.largest_agent
    csv = pd.read_csv(io.StringIO(runner.invoke(app, [*args, "-f", "csv"]).stdout))
    rows = csv[csv["method"] == "stableval"].set_index("agent")
    np.testing.assert_allclose(rows["score_minus_mv"], change.loc[rows.index], atol=1e-12)
    assert (csv.loc[csv["method"] == "mv", "score_minus_mv"] == 0).all()
    text = runner.invoke(app, args).stdout
    assert "STABLEVAL − MV per agent: " in text and "Pearson r = " in text and "ranked differently" in text
    no_pair = json.loads(runner.invoke(app, [*args[:-4], "-m", "ds,stableval", "-B", "0", "-f", "json"]).stdout)
    assert "comparison" not in no_pair


def test_report_leaderboard_shows_the_comparison() -> None:
    import stableval

    html = build_report(stableval.example_path(), inputs=InputOptions(duplicates="keep"), quick=True, bootstrap=20,
                        sections=("leaderboard",))
    assert "STABLEVAL against MV" in html and "STABLEVAL − MV" in html and "Pearson r" in html
    html = build_report(stableval.example_path(), inputs=InputOptions(duplicates="keep"), quick=True, bootstrap=20,
                        sections=("leaderboard",), methods=["ds", "stableval"])
    assert "against MV" not in html


# ====================================================================================== stableval mt-bench
def _independent_mv(path: Path, mapping: dict[str, tuple[str, float]]) -> dict[str, float]:
    """Per-agent MV (ties split) from the raw JSONL in plain Python; ``mapping``: outcome → (level, credit)."""
    levels: dict[tuple[str, str], list[str]] = defaultdict(list)
    credit: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        vote = json.loads(line)
        if str(vote["turn"]) != "1":
            continue
        item = f"q{vote['question_id']}-turn1"
        outcome_a = {"model_a": "win", "model_b": "loss"}.get(vote["winner"], "tie")
        outcome_b = {"win": "loss", "loss": "win", "tie": "tie"}[outcome_a]
        for model, outcome in ((vote["model_a"], outcome_a), (vote["model_b"], outcome_b)):
            level, value = mapping[outcome]
            credit[level] = value
            levels[(item, model)].append(level)
    per_agent: dict[str, list[float]] = defaultdict(list)
    for (_, agent), labels in levels.items():
        counts = Counter(labels)
        top = max(counts.values())
        tied = [level for level, n in counts.items() if n == top]
        per_agent[agent].append(float(np.mean([credit[level] for level in tied])))
    return {agent: float(np.mean(values)) for agent, values in per_agent.items()}


def test_mt_bench_command_across_the_six_mappings(tmp_path: Path) -> None:
    path = shared_file(*MT_BENCH)
    result = runner.invoke(app, ["mt-bench", str(path), "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["conversions"] == ["baseline", "drop-ties", "tie-as-win", "tie-as-loss", "tie-0.25", "tie-0.75"]
    assert payload["methods"] == ["mv", "stableval"]
    table = pd.DataFrame(payload["table"]).set_index("agent")
    assert len(table) == 6 and len(table.columns) == 12
    # an independent MV for two mappings, from the raw votes
    baseline = _independent_mv(path, {"win": ("win", 1.0), "tie": ("tie", 0.5), "loss": ("loss", 0.0)})
    tie_as_win = _independent_mv(path, {"win": ("win", 1.0), "tie": ("win", 1.0), "loss": ("loss", 0.0)})
    for agent in table.index:
        assert table.loc[agent, "baseline_mv"] == pytest.approx(baseline[agent], abs=1e-12)
        assert table.loc[agent, "tie-as-win_mv"] == pytest.approx(tie_as_win[agent], abs=1e-12)
    assert table.loc["gpt-4", "baseline_mv"] == pytest.approx(0.775, abs=5e-4)
    summary = pd.DataFrame(payload["summary"]).set_index("conversion")
    decided = 1689 - 405   # turn-1 votes without a tie (405 ties, test_datasets)
    assert summary.loc["drop-ties", "judgments"] == 2 * decided
    assert set(summary["method"]) == {"stableval"} and set(summary["baseline"]) == {"mv"}
    # baseline agrees with `stableval score` on the converted file: the same scores, the same order
    out = tmp_path / "mt.csv"
    assert runner.invoke(app, ["convert", "mt-bench", str(path), "-o", str(out)]).exit_code == 0
    scored = json.loads(runner.invoke(app, ["score", str(out), "--levels", "loss,tie,win", "--duplicates", "keep",
                                            "-m", "mv,stableval", "-B", "0", "-f", "json"]).stdout)
    direct = pd.DataFrame(scored["scores"]).pivot(index="agent", columns="method", values="score")
    for method in ("mv", "stableval"):
        np.testing.assert_allclose(table[f"baseline_{method}"], direct.loc[table.index, method], atol=1e-9)
    assert list(table.index) == direct["stableval"].sort_values(ascending=False, kind="stable").index.tolist()
    assert summary.loc["baseline", "rank_changes"] == scored["comparison"]["rank_changes"]


def test_mt_bench_command_table_csv_options_and_errors(tmp_path: Path) -> None:
    path = shared_file(*MT_BENCH)
    text = runner.invoke(app, ["mt-bench", str(path), "--mapping", "baseline,tie-as-loss", "--ties", "first"])
    assert text.exit_code == 0, text.output
    assert "tie-as-loss" in text.stdout and "drop-ties" not in text.stdout and "Pearson r" in text.stdout
    csv = runner.invoke(app, ["mt-bench", str(path), "--mapping", "baseline", "-m", "mv,ds,stableval", "-f", "csv"])
    frame = pd.read_csv(io.StringIO(csv.stdout))
    assert list(frame.columns) == ["agent", "baseline_mv", "baseline_ds", "baseline_stableval",
                                   "baseline_stableval_minus_mv"]
    np.testing.assert_allclose(frame["baseline_stableval_minus_mv"], frame["baseline_stableval"] - frame["baseline_mv"])
    assert runner.invoke(app, ["mt-bench", str(path), "--mapping", "tie-0.5"]).exit_code == 2
    assert runner.invoke(app, ["mt-bench", str(path), "--turns", "3"]).exit_code == 2
    missing = runner.invoke(app, ["mt-bench", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 1 and "not found" in missing.output


def test_score_across_api_matches_score_agents() -> None:
    path = shared_file(*MT_BENCH)
    tables = {name: load_mt_bench(path, mapping=name) for name in ("baseline", "tie-as-loss")}
    across = score_across(tables, ["mv", "stableval"])
    for name, table in tables.items():
        alone = score_agents(table, ["mv", "stableval"], bootstrap=0).scores
        pd.testing.assert_frame_equal(across.results[name].scores, alone)
    assert across.to_frame().columns.tolist()[-1] == "tie-as-loss_stableval_minus_mv"
