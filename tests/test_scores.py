"""Agent scores: hand-worked credits, bootstrap against the analytic standard error, invariances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from stableval import AnnotationTable
from stableval.aggregate import MajorityVote
from stableval.evaluate import score_agents
from stableval.evaluate.scores import competition_ranks, win_probabilities

from synthetic import synthetic_frame


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
