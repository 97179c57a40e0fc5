"""STABLEVAL on any dataset: multi-start (never worse than its starts nor than Dawid–Skene), random starts,
flat priors equal Dawid–Skene, learnt and pooled priors, the default (the pooled prior, no random starts) against
the start-selection loss of sparse raters, and the paper's reproduction settings.

Real-data assertions use the truth-inference sets, MSLR and the bundled MT-Bench votes (skipped when
../shared/data is absent); hand-worked cases check each rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from stableval import AnnotationTable, DawidSkene, Stableval, example_path, read_any
from stableval.aggregate.em import vote_counts_of_matrix
from stableval.aggregate.stableval import _distinct_rows, random_rows
from stableval.datasets import gold_accuracy, load_dataset
from stableval.simulate.simulator import SimulationConfig, simulate

from paths import shared_file
from synthetic import synthetic_frame, synthetic_table


def test_stableval_with_flat_priors_equals_dawid_skene() -> None:
    table = synthetic_table(5)
    ds = DawidSkene(tol=1e-12).fit(table)
    flat_soft = Stableval(alpha_mu=1.0, alpha_pi=1.0, init="soft", tol=1e-12).fit(table)
    np.testing.assert_allclose(flat_soft.posteriors_, ds.posteriors_, atol=1e-9)
    # Algorithm 1's own initialisation reaches the same maximum on well-identified data (EM is slow along
    # flat directions, so both run to a very tight tolerance)
    tight_ds = DawidSkene(tol=1e-14, max_iter=5000).fit(table)
    flat_alg1 = Stableval(alpha_mu=1.0, alpha_pi=1.0, tol=1e-14, max_iter=5000).fit(table)
    assert flat_alg1.log_likelihood_[-1] == pytest.approx(tight_ds.log_likelihood_[-1], abs=1e-6)
    np.testing.assert_allclose(flat_alg1.posteriors_, tight_ds.posteriors_, atol=1e-5)
    # alphas -> 1: the MAP solution tends to the ML one
    gaps = [np.abs(Stableval(alpha_mu=1 + d, alpha_pi=1 + d, init="soft", tol=1e-14, max_iter=5000)
                   .fit(table).posteriors_ - tight_ds.posteriors_).max() for d in (1e-2, 1e-3, 1e-4)]
    assert gaps[0] > 4 * gaps[1] > 16 * gaps[2] and gaps[2] < 3e-3


def test_stronger_dirichlet_prior_pulls_confusion_towards_uniform() -> None:
    table = synthetic_table(6, n_items=60)
    diag = [np.diagonal(Stableval(alpha_pi=a).fit(table).confusion_, axis1=1, axis2=2).mean()
            for a in (1.01, 3.0, 30.0)]
    assert diag[0] > diag[1] > diag[2] > 1 / 3


@pytest.mark.parametrize(("n", "high"), [(0, 3), (1, 3), (2000, 4), (3000, 40)])
def test_distinct_rows_equal_numpy_unique(n: int, high: int) -> None:
    """Issue 14: the fit's cheaper set-up at scale."""
    counts = np.random.default_rng(n).integers(0, high, (n, 3)).astype(float)
    n_patterns, inverse = _distinct_rows(counts)
    patterns, expected = np.unique(counts, axis=0, return_inverse=True)
    assert n_patterns == len(patterns)
    np.testing.assert_array_equal(inverse, expected.ravel())


def test_random_starts_equal_their_definition() -> None:
    """Issue 14: the fit's cheaper set-up at scale. The random starts, defined cell by cell. Issue 28: they were one
    Dirichlet(1) draw per distinct vote row in sorted order, so reordering the levels drew other starts; now each
    cell's Exp(1) variate is keyed by what the votes say of it — the row's counts sorted, the cell's count, its
    level's total count (in the problem) — handed out in the sorted order of the keys, and each row normalised."""
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 4, (3000, 3)).astype(float)
    groups = np.sort(rng.integers(0, 6, 3000))
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    for problem in (None, groups):
        starts = dict(Stableval(n_starts=3, seed=2).em_starts(counts, problem))
        reused: list[tuple[int, np.ndarray]] = []
        for number in (1, 2, 3):
            # the definition: one Exp(1) variate per distinct (sorted row, cell count, level total), problem by
            # problem, each row normalised
            noise = np.empty(counts.shape)
            for g in np.unique(problem) if problem is not None else [None]:
                rows = np.flatnonzero(problem == g) if g is not None else np.arange(len(counts))
                part = counts[rows].astype(np.int64)
                keys = [(*sorted(row, reverse=True), cell, total) for row in part.tolist()
                        for cell, total in zip(row, part.sum(axis=0).tolist(), strict=True)]
                distinct = sorted(set(keys))
                variates = np.random.default_rng((2, number)).exponential(size=len(distinct))
                cell = np.array([variates[distinct.index(key)] for key in keys]).reshape(len(rows), 3)
                noise[rows] = cell / cell.sum(axis=1, keepdims=True)
            np.testing.assert_allclose(starts[f"random-{number}"].distributions, 0.5 * shares + 0.5 * noise,
                                       rtol=0, atol=1e-15)
            np.testing.assert_allclose(random_rows(counts, problem, (2, number), reused), noise,  # reused rows
                                       rtol=0, atol=1e-15)
        assert len(reused) == (1 if problem is None else len(np.unique(groups)))


def truth_inference(name: str) -> tuple[AnnotationTable, dict]:
    dataset = load_dataset("truth-inference", shared_file("zheng2017_truth_inference", name))
    assert dataset.gold is not None
    return dataset.table, dict(dataset.gold)


def accuracy(table: AnnotationTable, posteriors: np.ndarray, gold: dict) -> float:
    frame = gold_accuracy(table, {"m": posteriors}, gold)
    return float(frame.loc[frame["agent"] == "(all)", "accuracy"].iloc[0])


def small_random_table(seed: int) -> AnnotationTable:
    frame, _ = synthetic_frame(n_items=25, n_raters=7, per_item=3, seed=seed)
    return AnnotationTable.from_frame(frame, levels=("0", "1", "2"))


# ---------------------------------------------------------------------------------------------- multi-start
@pytest.mark.slow
def test_s_adult_default_is_never_worse_than_its_starts_nor_than_dawid_skene() -> None:
    """Issue 12: on S_Adult Algorithm 1's start lands on a worse optimum than Dawid–Skene (log-likelihood -36,394
    against -36,272) and 0.736 accuracy against DS's 0.763. The multi-start fit (issue 12's default: flat prior,
    two random starts) keeps an objective at least every single start's; issue 28's default (the pooled prior, the
    paper and soft-vote starts) is within 0.005 of DS's accuracy too."""
    table, gold = truth_inference("s5_AdultContent")
    multi = Stableval(alpha_pi=1.0, n_starts=2).fit(table)
    singles = {init: Stableval(init=init, alpha_pi=1.0).fit(table) for init in ("paper", "soft", "ml")}
    for init, model in singles.items():
        assert multi.objective_[-1] >= model.objective_[-1] - 1e-6 * abs(model.objective_[-1]), init
    ds = DawidSkene().fit(table)
    default = Stableval().fit(table)
    for model in (multi, default):
        assert accuracy(table, model.posteriors_, gold) >= accuracy(table, ds.posteriors_, gold) - 0.005
    paper = Stableval(init="paper", alpha_pi=1.01, acceleration="none").fit(table)
    assert paper.log_likelihood_[-1] == pytest.approx(-36394.4, abs=0.5)  # the number, reproduced
    assert {record["start"] for record in multi.starts_} == {"paper", "soft", "random-1", "random-2"}
    assert {record["start"] for record in default.starts_} == {"paper", "soft"}
    for model in (multi, default):
        assert model.fit_summary()["start"] == model.start_


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_multi_start_objective_is_at_least_every_start(seed: int) -> None:
    table = small_random_table(seed % 50)
    model = Stableval(seed=seed).fit(table)
    kept = [record for record in model.starts_ if record["admissible"]]
    assert all(model.objective_[-1] >= record["objective"] - 1e-9 * abs(record["objective"]) for record in kept)
    assert np.all(np.diff(model.objective_) >= -1e-8 * np.abs(model.objective_[1:]))  # never decreases


def test_a_collapsed_random_start_is_passed_over() -> None:
    """Two raters, two items: a random start finds 'every response is the middle level' with a higher posterior
    than the anchored starts; it is not diagonally dominant, so it is not kept."""
    rows = [(item, agent, rater, label) for item in ("q0", "q1")
            for agent, rater, label in (("X", "r1", 3), ("X", "r2", 4), ("Y", "r2", 1))]
    table = AnnotationTable.from_frame(pd.DataFrame(rows, columns=["item", "agent", "rater", "label"]),
                                       levels=("1", "2", "3", "4", "5"))
    model = Stableval(alpha_pi=1.01, n_starts=2).fit(table)  # issue 28: random starts are no longer the default
    records = pd.DataFrame(model.starts_).set_index("start")
    assert not records.loc["random-1", "admissible"]
    assert records.loc["random-1", "objective"] > records.loc["paper", "objective"]
    assert model.start_ in ("paper", "soft", "ml")
    credit = model.posteriors_ @ table.credit
    assert credit[table.response_agent == 0].mean() > credit[table.response_agent == 1].mean()  # X above Y


def test_random_starts_do_not_depend_on_names_or_row_order() -> None:
    frame, _ = synthetic_frame(n_items=30, n_raters=6, per_item=3, seed=3)
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    renamed = frame.assign(item="x" + frame["item"].astype(str)).sample(frac=1.0, random_state=1)
    other = AnnotationTable.from_frame(renamed, levels=("0", "1", "2"))
    a, b = Stableval().fit(table), Stableval().fit(other)
    assert [r["objective"] for r in a.starts_] == pytest.approx([r["objective"] for r in b.starts_], rel=1e-12)


def test_mslr_converges_under_the_default_cap() -> None:
    """Issue 12: on MSLR (2 raters, 39 responses) plain EM stopped at 500 iterations unconverged."""
    table = load_dataset("mslr", shared_file("mslr")).table
    # the reported problem (the flat prior of that time; issue 28's pooled prior converges here even so)
    assert not Stableval(init="paper", alpha_pi=1.0, acceleration="none").fit(table).converged_
    for model in (Stableval(), DawidSkene()):
        fitted = model.fit(table)
        assert fitted.converged_ and fitted.n_iter_ < 500, type(model).__name__


def test_the_paper_reproduction_settings_give_the_previous_numbers() -> None:
    """init="paper", alpha_pi 1.01, plain EM: Algorithm 1 as before (docs/scoring.md's α = 1.01 column)."""
    table = read_any(example_path(), duplicates="keep")
    model = Stableval(init="paper", alpha_pi=1.01, acceleration="none").fit(table)
    credit = model.posteriors_ @ table.credit
    scores = pd.Series(credit).groupby(table.response_agent).mean()
    gpt4 = list(table.agents).index("gpt-4")
    assert scores[gpt4] == pytest.approx(0.804, abs=5e-4) and model.n_iter_ == 118


def test_auto_alpha_pi_is_learnt_and_recorded() -> None:
    table, _ = truth_inference("s4_Dog_data")
    model = Stableval(alpha_pi="auto").fit(table)
    assert model.alpha_pi_ == 1.0  # sharp confusion rows: the evidence asks for no smoothing
    assert model.fit_summary()["alpha_pi"] == 1.0
    noisy = AnnotationTable.from_frame(pd.DataFrame({
        "item": np.repeat(np.arange(60), 5), "agent": "A", "rater": np.tile(np.arange(5), 60),
        "label": np.random.default_rng(2).integers(0, 3, 300)}), levels=("0", "1", "2"))
    learnt = Stableval(alpha_pi="auto").fit(noisy)
    assert learnt.alpha_pi_ > 1.0  # labels independent of anything: the evidence smooths
    assert learnt.get_params()["alpha_pi"] == "auto"
    with pytest.raises(ValueError, match="alpha_pi='large': allowed a number ≥ 1, or one of auto, pooled"):
        Stableval(alpha_pi="large")


def _with_newcomer() -> tuple[AnnotationTable, int]:
    """Eight prolific raters of very different accuracy (0.95 down to 0.35; errors spread evenly) on 400 items of
    three levels, four raters per item, plus a newcomer who judged three items of true level 0, all rightly."""
    rng = np.random.default_rng(3)
    accuracy = np.array([0.95, 0.9, 0.85, 0.75, 0.65, 0.55, 0.45, 0.35])
    truth = rng.integers(0, 3, 400)
    item = np.repeat(np.arange(400), 4)
    rater = np.concatenate([rng.choice(8, 4, replace=False) for _ in range(400)])
    right = rng.random(item.size) < accuracy[rater]
    label = np.where(right, truth[item], (truth[item] + rng.integers(1, 3, item.size)) % 3)
    zero = np.flatnonzero(truth == 0)[:3]
    frame = pd.DataFrame({"item": np.concatenate([item, zero]), "agent": "A",
                          "rater": np.concatenate([rater.astype(str), ["new"] * 3]),
                          "label": np.concatenate([label, np.zeros(3, dtype=int)])})
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    return table, list(table.raters).index("new")


def test_pooled_prior_pulls_sparse_raters_to_the_crowd_and_leaves_prolific_ones() -> None:
    """The pooled prior against the flat one (``alpha_pi=1``; issue 28 made pooled the default). Issue 28 also
    learns it twice (the second time from the fit with the first prior): the strengths are 10.4, 13.4 and 11.5
    pseudo-judgments here (6.2, 8.0 and 9.7 learnt once), so the crowd's weight in a row of 50 or more judgments
    is at most 0.200 (below 0.15 when learnt once)."""
    table, new = _with_newcomer()
    flat = Stableval(alpha_pi=1.0).fit(table)
    pooled = Stableval(alpha_pi="pooled").fit(table)
    alpha = np.asarray(pooled.fit_summary()["alpha_pi"])
    crowd = (alpha - 1) / (alpha - 1).sum(axis=1, keepdims=True)  # m_c, the crowd's rows
    # without a prior the newcomer's row for level 0 is his three judgments: (1, 0, 0); unseen levels uniform
    np.testing.assert_allclose(flat.confusion_[new, 0], [1, 0, 0], atol=1e-3)
    assert np.abs(pooled.confusion_[new, 0] - crowd[0]).sum() < 0.5 * np.abs(flat.confusion_[new, 0] - crowd[0]).sum()
    # every row is the hand formula (n + s m) / (N + s) at the fit's own expected counts n
    counts = np.zeros((table.n_raters, 3, 3))  # [rater, true, given]
    np.add.at(counts, (table.rater, slice(None), table.label), pooled.posteriors_[table.response])
    strength = (alpha - 1).sum(axis=1)  # s_c
    np.testing.assert_allclose(pooled.confusion_, (counts + alpha - 1) / (counts.sum(axis=2, keepdims=True)
                                                                          + strength[:, None]), atol=1e-4)
    # so the crowd's weight s / (N + s) is large for the newcomer's row and small for rows of many judgments
    weight = strength[None, :] / (counts.sum(axis=2) + strength[None, :])
    busy = counts.sum(axis=2) >= 50
    assert busy.sum() == 24 and weight[busy].max() < 0.21 and weight[new, 0] > 0.6
    # and the prolific raters keep their order (mean of the diagonal), the newcomer no longer looks perfect
    diagonal = [np.diagonal(fit.confusion_[:new], axis1=1, axis2=2).mean(axis=1) for fit in (flat, pooled)]
    assert list(np.argsort(diagonal[0])) == list(np.argsort(diagonal[1]))
    assert flat.confusion_[new, 0, 0] > 0.99 > 0.9 > pooled.confusion_[new, 0, 0]
    assert pooled.get_params()["alpha_pi"] == "pooled"


def test_pooled_prior_in_the_simulator_equals_the_single_table_fit() -> None:
    from stableval.aggregate.batch_em import ProblemBatch, batch_em

    tables = [_with_newcomer()[0]]
    frame, _ = synthetic_frame(n_items=60, n_raters=11, per_item=3, agents=("A",), seed=8)
    tables.append(AnnotationTable.from_frame(frame.astype({"rater": str}), levels=("0", "1", "2")))
    problems = [(t.response, t.rater, t.label, t.n_responses) for t in tables]
    batch = ProblemBatch.from_problems(problems, n_raters=11, n_levels=3)
    fit = batch_em(batch, Stableval(alpha_pi="pooled", acceleration="none"))
    for p in range(len(tables)):
        X = batch.problem_matrix(p)
        alone = Stableval(alpha_pi="pooled", acceleration="none").fit_matrix(X, 11, 3)
        np.testing.assert_allclose(fit.posteriors[batch.starts[p]:batch.starts[p + 1]], alone.posteriors_,
                                   atol=1e-9)


K = 3


def test_random_rows_on_rows_equal_the_whole_draw_cut_to_them(X: sp.csr_matrix) -> None:
    """Issue 14: the score path at scale."""
    counts = vote_counts_of_matrix(X, K)
    rows = np.array([5, 17, 17, 2999, 0])
    assert np.array_equal(random_rows(counts, None, (0, 2), rows=rows), random_rows(counts, None, (0, 2))[rows])
    with pytest.raises(ValueError, match="rows= is for one problem"):
        random_rows(counts, np.zeros(len(counts), dtype=np.int64), (0, 1), rows=rows)


def test_distinct_rows_equal_numpy_unique_on_wide_and_negative_counts() -> None:
    """Issue 14: the score path at scale."""
    from stableval.aggregate.stableval import _distinct_rows

    rng = np.random.default_rng(5)
    cases = [rng.integers(0, 4, (3000, 3)).astype(float), rng.integers(0, 50, (400, 5)).astype(float),
             np.zeros((0, 3)), np.array([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0]]),
             rng.integers(0, 2**20, (100, 4)).astype(float),  # keys too large for 62 bits: np.unique
             np.array([[-1.0, 2.0], [3.0, 0.0]])]  # negative counts: np.unique
    for counts in cases:
        patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
        n, codes = _distinct_rows(counts)
        assert n == len(patterns) and np.array_equal(codes, inverse.ravel())


# ---------------------------------------------------------------------------------------------- the default (issue 28)
def sparse_study(levels: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """A small simulated study with sparse raters (50 items × 6 agents, 3 judgments per response from a pool of
    300–400 raters: 2–3 judgments per rater) and its true levels, one per row of the table."""
    raters = 300 if levels == 3 else 400
    study = simulate(SimulationConfig(items=50, raters=raters, labels_per_response=3, levels=levels), seed=seed)
    table = study.table()
    truth = study.response_truth().set_index(["item", "agent"])["level"]
    keys = list(zip(table.items[table.response_item], table.agents[table.response_agent], strict=True))
    return study.frame(), truth.loc[keys].to_numpy()


def tie_split_accuracy(posteriors: np.ndarray, truth: np.ndarray) -> float:
    """Accuracy of the most probable level, a tie of t levels counting 1/t."""
    top = posteriors == posteriors.max(axis=1, keepdims=True)
    return float((top[np.arange(len(truth)), truth] / top.sum(axis=1)).mean())


@pytest.mark.parametrize(("levels", "seed"), [(3, 1), (4, 0), (5, 0)])
def test_the_start_with_the_best_objective_is_not_the_most_accurate_with_sparse_raters(levels: int,
                                                                                      seed: int) -> None:
    """Issue 28, the start-selection loss. With 2–3 judgments per rater no rater's confusion matrix is identified:
    each can absorb any labelling, so the flat-prior fits with the highest objective move away from the consensus.
    The default before issue 28 (flat prior, two random starts, the highest log posterior kept) picked a random
    start whose objective beat the soft-vote (Dawid–Skene) start by 14–34 nats and lost 0.18–0.31 accuracy to
    majority vote here (K=3 seed 1: 0.597 against 0.774; K=4 seed 0: 0.417 against 0.722; K=5 seed 0: 0.525
    against 0.767). The default now learns a pooled prior — from the vote shares, since the median rater gave no
    more judgments than there are levels — and is within 0.005 of the better of majority vote and Dawid–Skene."""
    from stableval import MajorityVote

    frame, truth = sparse_study(levels, seed)
    old = Stableval(alpha_pi=1.0, n_starts=2).fit(frame)
    soft = next(record for record in old.starts_ if record["start"] == "soft")
    assert old.start_.startswith("random") and old.objective_[-1] > soft["objective"] + 10
    best = max(tie_split_accuracy(np.asarray(MajorityVote().fit(frame).posteriors_), truth),
               tie_split_accuracy(np.asarray(DawidSkene().fit(frame).posteriors_), truth))
    assert tie_split_accuracy(np.asarray(old.posteriors_), truth) < best - 0.15  # the loss
    default = Stableval().fit(frame)
    assert default.prior_from_ == "votes" and default.fit_summary()["prior_from"] == "votes"
    assert tie_split_accuracy(np.asarray(default.posteriors_), truth) >= best - 0.005


def test_prolific_raters_learn_the_prior_from_the_flat_fit() -> None:
    """With many judgments per rater (MT-Bench: median 44 per rater, K=3) the prior comes from the flat fit, and
    the fit summary says which start won and how strong the learnt prior is, per true level (issue 28)."""
    model = Stableval().fit(read_any(example_path(), duplicates="keep"))
    summary = model.fit_summary()
    assert model.prior_from_ == "flat fit" and summary["prior_from"] == "flat fit"
    assert summary["start"] in ("paper", "soft") and {s["start"] for s in summary["starts"]} == {"paper", "soft"}
    assert len(summary["prior_strength"]) == 3 and min(summary["prior_strength"]) > 0
    assert np.asarray(summary["alpha_pi"]).shape == (3, 3)
