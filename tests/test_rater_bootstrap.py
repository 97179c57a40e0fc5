"""Generic rater bootstrap: hand-worked aggregation cases and exact expectations from enumerating the draws."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.datasets.label_sets import LabelSets, read_label_sets, read_predictions_file
from stableval.errors import InputError
from stableval.evaluate import rater_bootstrap as rb
from stableval.evaluate.rater_bootstrap import ground_truth, rater_bootstrap

runner = CliRunner()


def exact_majority_probability(counts: np.ndarray, k: int) -> np.ndarray:
    """Oracle by enumeration: P(label c is the drawn truth) for k draws with replacement, ties split equally."""
    n_items, n_levels = counts.shape
    out = np.zeros((n_items, n_levels))
    for i in range(n_items):
        p = counts[i] / counts[i].sum()
        for draw in itertools.product(range(n_levels), repeat=k):
            prob = float(np.prod([p[c] for c in draw]))
            if prob == 0:
                continue
            tally = np.bincount(draw, minlength=n_levels)
            winners = np.flatnonzero(tally == tally.max())
            out[i, winners] += prob / len(winners)
    return out


def test_ground_truth_rules_by_hand() -> None:
    labels = np.array([[0, 1, 1], [0, 1, 2], [2, 2, 2], [0, 0, 1]])
    split = ground_truth(labels, 3)
    assert split.tolist()[0] == [0, 1, 0] and np.allclose(split[1], 1 / 3)
    assert ground_truth(labels, 3, ties="lowest")[1].tolist() == [1, 0, 0]
    assert ground_truth(labels, 3, ties="exclude")[1].tolist() == [0, 0, 0]
    assert ground_truth(labels, 3, ties="exclude")[0].tolist() == [0, 1, 0]
    unanimous = ground_truth(labels, 3, rule="unanimous")
    assert unanimous.sum(axis=1).tolist() == [0, 0, 1, 0]
    # random: always one of the tied labels, each about a third of the time
    many = ground_truth(np.repeat(labels[1:2], 3000, axis=0), 3, ties="random", rng=np.random.default_rng(0))
    assert np.all(many.sum(axis=1) == 1)
    assert np.allclose(many.mean(axis=0), 1 / 3, atol=0.03)
    # masked ratings (k=None layout) do not vote
    valid = np.array([[True, True, False]])
    assert ground_truth(np.array([[0, 0, 1]]), 2, valid=valid).tolist() == [[1, 0]]


def test_accuracy_matches_exact_enumeration() -> None:
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 4, size=(40, 3))
    counts[counts.sum(axis=1) == 0, 0] = 1
    predictions = rng.integers(0, 3, size=40)
    expected = exact_majority_probability(counts, 3)[np.arange(40), predictions].mean()
    sets = LabelSets.from_counts(counts)
    result = rater_bootstrap(sets, {"m": predictions}, n_draws=4000, seed=5)
    se = result.replicates[:, 0].std() / np.sqrt(4000)
    assert abs(result.summary["accuracy"][0] - expected) < 4 * se + 1e-9
    # frozen key: majority of all ratings with split ties
    full = counts == counts.max(axis=1, keepdims=True)
    frozen = (full[np.arange(40), predictions] / full.sum(axis=1)).mean()
    assert result.summary["frozen_accuracy"][0] == pytest.approx(frozen)
    low, high = result.summary[["ci_low", "ci_high"]].iloc[0]
    assert low <= result.summary["accuracy"][0] <= high


def test_unanimous_left_out_share_is_exact() -> None:
    """P(3 draws with replacement all equal) = Σ_c p_c³, so the expected share left out is 1 − mean Σ_c p_c³."""
    counts = np.array([[2, 1], [1, 1], [3, 0], [1, 4]])
    expected_left_out = 1 - ((counts / counts.sum(1, keepdims=True)) ** 3).sum(1).mean()
    result = rater_bootstrap(LabelSets.from_counts(counts), {"m": [0, 0, 0, 1]}, rule="unanimous", n_draws=20000,
                             seed=2)
    assert result.excluded_share.mean() == pytest.approx(expected_left_out, abs=0.01)
    assert result.summary["frozen_accuracy"][0] == pytest.approx(1.0)  # only item 3 (all 0) is unanimous


def test_chunking_and_input_layout_do_not_change_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = np.array([[2, 1, 0], [0, 1, 3], [1, 1, 1]])
    lists = [["0", "0", "1"], ["1", "2", "2", "2"], ["0", "1", "2"]]
    preds = {"m": [0, 2, 1]}
    a = rater_bootstrap(LabelSets.from_counts(counts), preds, n_draws=300, seed=9)
    b = rater_bootstrap(LabelSets.from_lists(lists), preds, n_draws=300, seed=9)
    monkeypatch.setattr(rb, "_CHUNK_ELEMENTS", 20)
    c = rater_bootstrap(LabelSets.from_counts(counts), preds, n_draws=300, seed=9)
    assert np.array_equal(a.replicates, b.replicates) and np.array_equal(a.replicates, c.replicates)


def test_own_size_draws_and_table_input() -> None:
    from stableval.data.table import AnnotationTable

    frame = pd.DataFrame({"item": ["q1"] * 4 + ["q2"], "agent": "A", "rater": ["r1", "r2", "r3", "r4", "r1"],
                          "label": [1, 1, 1, 0, 0]})
    sets = LabelSets.from_table(AnnotationTable.from_frame(frame, levels=("bad", "good")))
    assert sets.items.tolist() == ["q1", "q2"] and sets.counts().tolist() == [[1, 3], [1, 0]]
    result = rater_bootstrap(sets, {"m": ["good", "bad"]}, k=None, n_draws=5000, seed=1)
    # q1: 4 draws from (3 good, 1 bad); good wins with ≥3 goods, ties (2-2) split:
    p = 0.75
    p_good = p**4 + 4 * p**3 * (1 - p) + 0.5 * 6 * p**2 * (1 - p) ** 2
    assert result.summary["accuracy"][0] == pytest.approx((p_good + 1) / 2, abs=0.01)


def test_prediction_errors_name_the_problem() -> None:
    sets = LabelSets.from_lists([["a", "b"], ["b"]], items=["x", "y"])
    with pytest.raises(InputError, match="no prediction for 1 item"):
        rater_bootstrap(sets, {"m": pd.Series({"x": "a"})})
    with pytest.raises(InputError, match=r"row 2.*got 'c'.*allowed: one of: a, b"):
        rater_bootstrap(sets, {"m": ["a", "c"]})
    result = rater_bootstrap(sets, {"m": pd.Series({"x": "a", "y": "b", "z": "a"})}, n_draws=10)
    assert "1 prediction(s) for items without ratings left out" in result.settings["notes"][0]
    with pytest.raises(InputError, match="non-negative integer"):
        LabelSets.from_counts([[1, -1]])


def test_read_label_sets_long_and_counts(tmp_path) -> None:
    long = tmp_path / "long.csv"
    long.write_text("item,label\ni1,cat\ni1,dog\ni2,dog\n")
    sets = read_label_sets(long)
    assert sets.levels == ("cat", "dog") and sets.counts().tolist() == [[1, 1], [0, 1]]
    counts = tmp_path / "counts.csv"
    counts.write_text("item,cat,dog\ni1,1,1\ni2,0,x\n")
    with pytest.raises(InputError, match=r"counts.csv, row 2, column 'dog'.*got 'x'"):
        read_label_sets(counts)
    counts.write_text("item,cat,dog\ni1,1,1\ni2,0,1\n")
    assert read_label_sets(counts).counts().tolist() == [[1, 1], [0, 1]]


def test_cli_generic(tmp_path) -> None:
    counts = tmp_path / "counts.csv"
    counts.write_text("item,no,yes\ni1,3,0\ni2,1,2\ni3,0,1\n")
    preds = tmp_path / "preds.csv"
    preds.write_text("item,prediction\ni1,yes\ni2,yes\ni3,yes\n")
    result = runner.invoke(app, ["rater-bootstrap", str(counts), "-p", f"yes={preds}", "-B", "3000",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["models"][0]["accuracy"] == pytest.approx((20 / 27 + 1) / 3, abs=0.01)
    table = runner.invoke(app, ["rater-bootstrap", str(counts), "-p", f"yes={preds}", "-B", "50"])
    assert table.exit_code == 0 and "yes" in table.stdout and "Frozen key" in table.stdout
    preds.write_text("item,prediction\ni1,maybe\ni2,yes\ni3,yes\n")
    bad = runner.invoke(app, ["rater-bootstrap", str(counts), "-p", f"yes={preds}"])
    assert bad.exit_code == 1 and "maybe" in bad.output
    usage = runner.invoke(app, ["rater-bootstrap", str(counts), "-p", "=x"])
    assert usage.exit_code == 2


def test_predictions_file_reader(tmp_path) -> None:
    path = tmp_path / "preds.csv"
    path.write_text("item,answer\ni1,yes\ni2, no \n")
    assert read_predictions_file(path).to_dict() == {"i1": "yes", "i2": "no"}
    path.write_text("item,prediction\ni1,yes\ni1,no\n")
    with pytest.raises(InputError, match=r"row 2.*item predicted twice"):
        read_predictions_file(path)
    path.write_text("item,guess\ni1,yes\n")
    with pytest.raises(InputError, match="no prediction column"):
        read_predictions_file(path)
    assert read_predictions_file(path, prediction_col="guess").to_dict() == {"i1": "yes"}


def test_intervals_are_percentiles_of_the_finite_draws_and_json_is_valid() -> None:
    sets = LabelSets.from_counts([[2, 1], [1, 1], [0, 3]])
    result = rater_bootstrap(sets, {"m": [0, 0, 1]}, rule="unanimous", n_draws=500, seed=4)
    draws = result.replicates[:, 0]
    finite = draws[np.isfinite(draws)]
    assert result.summary["ci_low"][0] == np.quantile(finite, 0.025)
    assert result.summary["ci_high"][0] == np.quantile(finite, 0.975)
    payload = result.to_dict()
    json.dumps(payload, allow_nan=False)
    assert payload["excluded_share"]["ci_high"] == np.quantile(result.excluded_share, 0.975)


def test_cli_ties_are_the_declared_tie_rules() -> None:
    """Issue 25: ``--ties`` is derived from the rater bootstrap's declaration (its choices, their words and the
    default), not written a second time in the command."""
    from stableval.aggregate.ties import TIE_RULES
    from stableval.commands.rater_bootstrap import GenericTies

    assert [str(rule) for rule in GenericTies] == list(rb.TIES)
    help_text = runner.invoke(app, ["rater-bootstrap", "--help"], env={"COLUMNS": "400"}).stdout
    for rule in rb.TIES:
        assert f"{rule} ({TIE_RULES[rule]})" in " ".join(help_text.split())
