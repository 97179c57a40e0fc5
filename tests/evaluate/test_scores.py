"""Agent scores: hand-worked credits, bootstrap against the analytic standard error, invariances, the
MV/STABLEVAL comparison, and scoring at scale (models let go, no int64 copies) with the same numbers."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings, strategies as st

from stableval import example_path
from stableval.aggregate import DawidSkene, MajorityVote, Stableval
from stableval.aggregate.registry import method_label
from stableval.data.table import AnnotationTable
from stableval.evaluate import score_agents
from stableval.evaluate.credit import item_credit
from stableval.evaluate.scores import compare_methods, comparison_pair, competition_ranks, win_probabilities

from synthetic import small_three_level_table, synthetic_frame


# ====================================================================================== MV vs STABLEVAL summary
def test_compare_methods_hand_worked() -> None:
    # MV:  A 0.50 (2), B 0.60 (1), C 0.10 (4), D 0.20 (3); SV: A 0.70 (1), B 0.60 (2), C 0.10 (4), D 0.40 (3)
    """Issue 12: exact conventions."""
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
    """Issue 12: exact conventions."""
    assert comparison_pair(["mv", "ds", "stableval"]) == ("stableval", "mv")
    assert comparison_pair(["stableval", "mv"]) == ("stableval", "mv")
    assert comparison_pair(["ds", "stableval"]) is None and comparison_pair(["mv"]) is None
    assert comparison_pair(["ds", "mv"]) == ("ds", "mv")          # no STABLEVAL: the headline is the first method


def test_analyses_accept_names_or_instances_and_record_params() -> None:
    table = small_three_level_table()
    by_instance = score_agents(table, [MajorityVote(ties="lowest"), Stableval(alpha_pi=2.0)], bootstrap=0)
    by_name = score_agents(table, ["mv", "stableval"], params={"mv": {"ties": "lowest"},
                                                                "stableval": {"alpha_pi": 2.0}}, bootstrap=0)
    pd.testing.assert_frame_equal(by_instance.scores, by_name.scores)
    assert by_name.settings["params"]["stableval"]["alpha_pi"] == 2.0
    assert by_name.settings["params"]["mv"] == {"ties": "lowest", "seed": 0}
    two = score_agents(table, [Stableval(), Stableval(alpha_pi=5.0)], bootstrap=0)
    assert two.methods == ["stableval", "stableval-2"] and method_label("stableval-2") == "STABLEVAL #2"
    assert not np.allclose(two.item_credit["stableval"], two.item_credit["stableval-2"])


def test_a_fit_at_the_cap_says_how_far_its_scores_still_move(tmp_path: Path) -> None:
    """Issue 16: the non-convergence warning says what to do on small data and how much it matters."""
    from stableval.data import read_any
    from stableval.evaluate.scores import EXTRA_ITERATIONS, score_agents

    table = read_any(example_path(), duplicates="keep")
    result = score_agents(table, ["ds"], params={"ds": {"max_iter": 3}}, bootstrap=0)
    change = result.fits["ds"]["score_change"]
    longer = score_agents(table, ["ds"], params={"ds": {"max_iter": 3 + EXTRA_ITERATIONS}}, bootstrap=0)
    moved = (longer.scores["score"] - result.scores["score"]).abs()
    assert change["max_abs_change"] == pytest.approx(moved.max(), abs=1e-12) and change["max_abs_change"] > 0
    assert change["agent"] == result.scores["agent"][moved.idxmax()]
    [warning] = result.to_dict()["warnings"]
    assert f"{EXTRA_ITERATIONS} more iterations move the scores by up to" in warning
    # the Python result names the parameters (issue 25); the command line names its flags (test above)
    assert "alpha_pi=2" in warning and "max_iter=N" in warning and "fewer levels" in warning
    assert "--" not in warning


def table() -> AnnotationTable:
    return AnnotationTable.from_frame(synthetic_frame(n_items=60, seed=3)[0], levels=("0", "1", "2"))


def test_scores_equal_models_fitted_on_their_own() -> None:
    """Issue 14: scoring holds less at scale."""
    data = table()
    result = score_agents(data, ["mv", "ds", "stableval"], bootstrap=50, seed=1)
    order = ["mv", "ds", "stableval"]  # fitted last first, reported in the order asked for
    assert result.methods == order and list(result.posteriors) == order and list(result.item_credit)[3:] == order
    assert result.scores["method"].drop_duplicates().tolist() == order and list(result.fits) == ["ds", "stableval"]
    for key, model in (("mv", MajorityVote()), ("ds", DawidSkene()), ("stableval", Stableval())):
        model.fit(data)
        assert np.array_equal(result.posteriors[key], model.posteriors_), key
        assert result.fits.get(key, {}) == model.fit_summary(), key
        credit = item_credit(model, data.credit)
        assert np.array_equal(result.item_credit[key].to_numpy(), credit), key
        by_agent = pd.Series(result.item_credit[key].to_numpy()).groupby(data.response_agent).mean().to_numpy()
        scores = result.scores[result.scores["method"] == key]["score"].to_numpy()
        assert np.allclose(scores, by_agent, rtol=0, atol=1e-12), key


def test_counts_and_matrix_match_plain_references() -> None:
    """Issue 14: scoring holds less at scale."""
    data = table()
    assert np.array_equal(data.judgments_per_response(), np.bincount(data.response, minlength=data.n_responses))
    assert data.judgments_per_response().dtype == np.int64
    dense = np.zeros((data.n_responses, data.n_raters * data.n_levels))
    for response, rater, label in zip(data.response, data.rater, data.label, strict=True):
        dense[response, rater * data.n_levels + label] += 1
    matrix = data.response_matrix()
    assert np.array_equal(matrix.toarray(), dense) and matrix.indices.dtype == np.int32
    result = score_agents(data, ["mv"], bootstrap=0)
    expected = np.bincount(data.response_agent[data.response], minlength=data.n_agents)
    assert result.scores["judgments"].tolist() == expected.tolist()
    assert result.scores["judgments"].dtype == np.int64


@pytest.mark.parametrize("seed", range(5))
def test_average_ranks_equal_scipy_rankdata(seed: int) -> None:
    """Issue 14: the score path at scale."""
    from scipy.stats import rankdata

    from stableval.evaluate.scores import average_ranks

    rng = np.random.default_rng(seed)
    for values in (rng.integers(0, 4, 12).astype(float), rng.random(10), np.zeros(3), np.array([1.0]), np.array([])):
        np.testing.assert_array_equal(average_ranks(values), rankdata(values))
    x, y = rng.integers(0, 5, 10).astype(float), rng.random(10)
    assert np.corrcoef(average_ranks(x), average_ranks(y))[0, 1] == np.corrcoef(rankdata(x), rankdata(y))[0, 1]


def hand_table() -> AnnotationTable:
    # A: q1 {good, good, bad} -> MV good; q2 {ok, ok} -> ok.      MV score (1 + 0.5) / 2 = 0.75
    # B: q1 {bad, ok} tie -> split (0 + 0.5)/2 = 0.25; q2 {bad} -> 0.  MV score 0.125
    frame = pd.DataFrame({
        "item": ["q1", "q1", "q1", "q2", "q2", "q1", "q1", "q2"],
        "agent": ["A", "A", "A", "A", "A", "B", "B", "B"],
        "rater": ["r1", "r2", "r3", "r1", "r2", "r1", "r2", "r3"],
        "label": [2, 2, 0, 1, 1, 0, 1, 0],
    })
    return AnnotationTable.from_frame(frame, levels=("bad", "ok", "good"))


def test_majority_vote_scores_worked_by_hand() -> None:
    result = score_agents(hand_table(), methods=["mv"], bootstrap=0)
    scores = result.scores.set_index("agent")["score"]
    assert scores["A"] == pytest.approx(0.75) and scores["B"] == pytest.approx(0.125)
    lowest = score_agents(hand_table(), methods=[MajorityVote(ties="lowest")], bootstrap=0)
    assert lowest.scores.set_index("agent")["score"]["B"] == pytest.approx(0.0)


def test_stableval_credit_is_posterior_expected_credit_and_ds_is_hard() -> None:
    table = hand_table()
    result = score_agents(table, bootstrap=0)
    from stableval import DawidSkene, Stableval

    posterior = Stableval().fit(table).posteriors_
    expected_pec = posterior @ table.credit
    np.testing.assert_allclose(result.item_credit["stableval"], expected_pec)
    ds_post = DawidSkene().fit(table).posteriors_
    np.testing.assert_allclose(result.item_credit["ds"], table.credit[ds_post.argmax(axis=1)])
    per_agent = result.item_credit.groupby("agent")["stableval"].mean()
    np.testing.assert_allclose(result.scores.query("method == 'stableval'").set_index("agent")["score"],
                               per_agent)


def test_custom_credit_vector_is_used() -> None:
    frame = hand_table().to_frame()
    frame["label"] = frame["label"].map({"bad": 0, "ok": 1, "good": 2})
    table = AnnotationTable.from_frame(frame, levels=("bad", "ok", "good"), credit=[0, 0, 1])
    scores = score_agents(table, methods=["mv"], bootstrap=0).scores.set_index("agent")["score"]
    assert scores["A"] == pytest.approx(0.5) and scores["B"] == pytest.approx(0.0)


def test_bootstrap_standard_error_matches_the_analytic_one() -> None:
    """Percentile bootstrap of a mean: sd of replicates ~ sd(credit) * sqrt((n-1)/n) / sqrt(n)."""
    rng = np.random.default_rng(11)
    n = 400
    labels = rng.choice(3, size=n, p=[0.3, 0.3, 0.4])
    frame = pd.DataFrame({"item": np.arange(n), "agent": "A", "rater": "r", "label": labels})
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    result = score_agents(table, methods=["mv"], bootstrap=4000, seed=1)
    credits = table.credit[labels]
    analytic = credits.std(ddof=0) / np.sqrt(n)
    assert result.replicates["mv"][:, 0].std() == pytest.approx(analytic, rel=0.06)
    row = result.scores.iloc[0]
    assert row["ci_low"] == pytest.approx(credits.mean() - 1.96 * analytic, abs=0.012)
    assert row["ci_high"] == pytest.approx(credits.mean() + 1.96 * analytic, abs=0.012)


def test_bootstrap_is_seeded() -> None:
    frame, _ = synthetic_frame(n_items=60, seed=2)
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    a = score_agents(table, bootstrap=300, seed=5).scores
    b = score_agents(table, bootstrap=300, seed=5).scores
    c = score_agents(table, bootstrap=300, seed=6).scores
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["ci_low"], c["ci_low"])


def test_ranks_intervals_and_win_probabilities() -> None:
    frame, _ = synthetic_frame(n_items=150, agents=("strong", "weak", "twin"), quality=(0.9, 0.2, 0.2), seed=4)
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    result = score_agents(table, bootstrap=500, seed=0)
    for method in result.methods:
        rows = result.scores.query("method == @method").set_index("agent")
        assert rows.loc["strong", "rank"] == 1 and rows.loc["strong", "rank_high"] == 1
        assert (rows["ci_low"] <= rows["score"]).all() and (rows["score"] <= rows["ci_high"]).all()
        assert (rows["rank_low"] <= rows["rank_high"]).all()
        assert rows.loc["strong", "rank_low"] == 1 and rows.loc["weak", "rank_low"] >= 2
        win = result.win_probability[method]
        assert win.loc["strong", "weak"] > 0.99 and win.loc["weak", "strong"] < 0.01
        assert 0.02 < win.loc["weak", "twin"] < 0.98  # two agents of equal quality: no certainty
        np.testing.assert_allclose(win.loc["weak", "twin"] + win.loc["twin", "weak"], 1.0)


def test_competition_ranks_and_win_matrix_by_hand() -> None:
    assert competition_ranks(np.array([0.5, 0.9, 0.5, np.nan])).tolist() == [2, 1, 2, 4]
    reps = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    np.testing.assert_allclose(win_probabilities(reps), [[np.nan, 0.625], [0.375, np.nan]])


def test_refit_bootstrap_runs_every_method_and_brackets_the_point() -> None:
    frame, _ = synthetic_frame(n_items=40, seed=9)
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    result = score_agents(table, bootstrap=30, seed=0, refit=True)
    assert result.settings["refit"] is True
    for method in result.methods:
        reps = result.replicates[method]
        assert reps.shape == (30, 3) and np.isfinite(reps).all()
        rows = result.scores.query("method == @method")
        assert (rows["ci_low"] < rows["ci_high"]).all()
    # refit replicates differ from the fixed-credit ones: the rater model is refitted on each draw
    fixed = score_agents(table, bootstrap=30, seed=0)
    assert not np.allclose(fixed.replicates["stableval"], result.replicates["stableval"])


def test_json_ready_dictionary() -> None:
    import json

    result = score_agents(hand_table(), bootstrap=50)
    text = json.dumps(result.to_dict())
    back = json.loads(text)
    assert back["dataset"]["judgments"] == 8 and len(back["scores"]) == 6
    assert set(back["win_probability"]) == {"mv", "ds", "stableval"}
    assert back["win_probability"]["mv"]["A"]["A"] is None


def test_leaderboard_is_sorted_by_stableval() -> None:
    board = score_agents(hand_table(), bootstrap=20).leaderboard()
    assert board["agent"].tolist() == ["A", "B"]
    assert {"mv_score", "ds_ci_low", "stableval_rank", "responses", "judgments"} <= set(board.columns)


# ------------------------------------------------------------------ invariance (hypothesis)
@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), data_seed=st.integers(0, 5))
def test_shuffling_rows_and_renaming_ids_changes_no_result(seed: int, data_seed: int) -> None:
    frame, _ = synthetic_frame(n_items=25, n_raters=8, seed=data_seed)
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    base = score_agents(table, bootstrap=100, seed=3)

    rng = np.random.default_rng(seed)
    shuffled = frame.sample(frac=1.0, random_state=int(rng.integers(1 << 31))).reset_index(drop=True)
    renamed = shuffled.copy()
    for column in ("item", "rater", "agent"):
        names = renamed[column].unique()
        new = rng.permutation([f"{column}-{n}" for n in rng.permutation(len(names))])
        renamed[column] = renamed[column].map(dict(zip(names, new, strict=True)))
    agent_map = dict(zip(shuffled["agent"], renamed["agent"], strict=False))
    other = score_agents(AnnotationTable.from_frame(renamed, levels=("0", "1", "2")), bootstrap=100, seed=3)

    left = base.scores.assign(agent=base.scores["agent"].map(agent_map)).sort_values(["method", "agent"])
    right = other.scores.sort_values(["method", "agent"])
    numeric = ["score", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "responses", "judgments"]
    np.testing.assert_allclose(left[numeric].to_numpy(float), right[numeric].to_numpy(float), atol=1e-9)


def test_the_dataset_line_counts_in_the_singular_for_one() -> None:
    """Regression (issue 16): one agent and one rater were printed as "1 agents", "1 raters"."""
    import pandas as pd
    from rich.console import Console

    from stableval.data.table import AnnotationTable
    from stableval.evaluate.scores import score_agents

    frame = pd.DataFrame({"item": ["q1", "q2"], "agent": "A", "rater": "r1", "label": [0, 1]})
    result = score_agents(AnnotationTable.from_frame(frame, levels=("no", "yes")), ["mv"], bootstrap=0)
    console = Console(record=True, width=200)
    result.render(console)
    text = console.export_text()
    assert "2 judgments of 2 responses (2 items × 1 agent) by 1 rater;" in text


def test_score_agents_refuses_a_negative_seed_before_fitting() -> None:
    """Regression (issue 16): the API took seed=-1 and failed deep inside numpy's SeedSequence."""
    import pandas as pd

    from stableval.data.table import AnnotationTable
    from stableval.evaluate.scores import score_agents

    frame = pd.DataFrame({"item": ["q1", "q2"], "agent": "A", "rater": "r1", "label": [0, 1]})
    with pytest.raises(ValueError, match="seed must be a whole number >= 0 or None, got -1"):
        score_agents(AnnotationTable.from_frame(frame, levels=("no", "yes")), ["mv"], seed=-1)


def test_credits_print_with_one_precision_everywhere() -> None:
    """Regression (issue 16): the dataset line printed credits as 0.333333 (``:g``) while warnings used 0.333."""
    import pandas as pd
    from rich.console import Console

    from stableval.data.table import AnnotationTable
    from stableval.evaluate.scores import score_agents

    frame = pd.DataFrame({"item": ["q1", "q2", "q3"], "agent": "A", "rater": "r1", "label": [0, 1, 3]})
    result = score_agents(AnnotationTable.from_frame(frame, levels=("0", "1", "2", "3")), ["mv"], bootstrap=0)
    console = Console(record=True, width=200)
    result.render(console)
    assert "(credit 0, 0.333, 0.667, 1)" in console.export_text()


# ====================================================================================== the leaderboard's layout
def _leaderboard_at(width: int | None, methods: list[str] | None = None, bootstrap: int = 50) -> list[str]:
    """The leaderboard of the bundled example printed by a console ``width`` columns wide (``None``: into a file or
    a pipe), as lines."""
    import io

    from stableval.commands.output import make_console
    from stableval.data import InputOptions, load

    table = load(example_path("mt_bench"), InputOptions(duplicates="keep")).table
    result = score_agents(table, methods, bootstrap=bootstrap, seed=0)
    buffer = io.StringIO()
    result.render(make_console(buffer, to_file=True, width=width))
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


AGENTS = ("gpt-4", "gpt-3.5-turbo", "claude-v1", "vicuna-13b-v1.2", "alpaca-13b", "llama-13b")


def test_the_leaderboard_is_compact_on_an_80_column_terminal() -> None:
    """Issue 27: at 80 columns the leaderboard's headers broke mid-word (``Respons/es``, ``STABLEVA/L [95%``) and
    names and intervals wrapped. Narrow: one line per agent with each method's score and rank, the interval under
    it; nothing wider than the terminal, no header, name or interval broken."""
    lines = _leaderboard_at(80)
    assert max(len(line) for line in lines) <= 80
    header = next(line for line in lines if line.lstrip().startswith("Agent"))
    assert header.split() == ["Agent", "MV", "DS", "STABLEVAL"]
    assert not any("Respons" in line and "Responses" not in line for line in lines)
    for agent in AGENTS:
        row = next(k for k, line in enumerate(lines) if line.startswith(f" {agent} "))
        assert re.fullmatch(r" \S+ +(0\.\d{3}  \d( \(\d–\d\))? *){3}", lines[row] + " "), lines[row]
        assert re.fullmatch(r" 80 responses +(\[0\.\d{3}, 0\.\d{3}\] *){3}", lines[row + 1] + " "), lines[row + 1]
    assert "Leaderboard (best first; 95% CI under each score)" in lines


def test_the_leaderboard_splits_its_methods_when_even_compact_is_too_wide() -> None:
    """Issue 27: six methods do not fit 80 columns side by side even compact: a few methods per table, each with
    the agents' names."""
    lines = _leaderboard_at(80, ["mv", "ds", "stableval", "glad", "mace", "wawa"], bootstrap=0)
    assert max(len(line) for line in lines) <= 80
    headers = [line.split() for line in lines if line.lstrip().startswith("Agent")]
    assert len(headers) >= 2 and [name for header in headers for name in header[1:]] == [
        "MV", "DS", "STABLEVAL", "GLAD", "MACE", "Wawa"]
    assert any(line.startswith("Leaderboard (best first; part 2 of ") for line in lines)


def test_the_leaderboard_is_full_when_wide() -> None:
    """Issue 27: at 200 columns (and in a file or a pipe) every column side by side, one line per agent."""
    lines = _leaderboard_at(200)
    header = next(line for line in lines if line.lstrip().startswith("Agent"))
    assert header.split() == ["Agent", "Responses", "MV", "[95%", "CI]", "rank", "DS", "[95%", "CI]", "rank",
                              "STABLEVAL", "[95%", "CI]", "rank"]
    for agent in AGENTS:
        row = next(line for line in lines if line.startswith(f" {agent} "))
        assert re.fullmatch(r" \S+ +80( +0\.\d{3} \[0\.\d{3}, 0\.\d{3}\] +\d( \(\d–\d\))?){3}", row), row
    table = lines[lines.index(header) - 1:lines.index(header) + 8]
    piped = _leaderboard_at(None)
    assert piped[piped.index(header) - 1:piped.index(header) + 8] == table  # into a pipe: the same full table
