"""Agreement statistics against published numbers and independent oracles (krippendorff, statsmodels)."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from stableval.data import annotations_from_frame
from stableval.evaluate.agreement import (
    agreement,
    cohen_kappa,
    fleiss_kappa as our_fleiss,
    gwet_ac1,
    krippendorff_alpha,
    pairwise_agreement,
    unanimous_agreement,
)

from synthetic import synthetic_frame, varying_frame

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers × 12 units, values
# 1..5, missing values None. The same data is Gwet's (2014) Handbook example "raw 4 raters" (observer C's and
# D's single value on unit 12 differ between the two books; a single value is not pairable and only enters
# Gwet's level shares, which we take from Gwet's version).
KRIPPENDORFF_2011 = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
                     [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1],
                     [None, None, 3, None]]


def frame_from_units(units: list[list[int | None]]) -> pd.DataFrame:
    rows = [(f"u{u}", "A", f"r{r}", str(value)) for u, unit in enumerate(units) for r, value in enumerate(unit)
            if value is not None]
    return pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])


def reliability_data(frame: pd.DataFrame) -> pd.DataFrame:
    """raters × responses, NaN where missing: the input krippendorff expects (built independently of stableval)."""
    unit = frame["item"].astype(str) + "|" + frame["agent"].astype(str)
    return frame.assign(unit=unit).pivot(index="rater", columns="unit", values="label").astype(float)


# ------------------------------------------------------------------ published numbers
def test_krippendorff_2011_published_alphas() -> None:
    table = annotations_from_frame(frame_from_units(KRIPPENDORFF_2011), levels=[str(v) for v in range(1, 6)])
    result = agreement(table, bootstrap=0)
    # Krippendorff (2011): nominal .743, ordinal .815, interval .849
    assert result.value("krippendorff_alpha_nominal") == pytest.approx(0.743, abs=5e-4)
    assert result.value("krippendorff_alpha_ordinal") == pytest.approx(0.815, abs=5e-4)
    assert result.value("krippendorff_alpha_interval") == pytest.approx(0.849, abs=5e-4)


def test_gwet_handbook_ac1_and_generalised_fleiss() -> None:
    # Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., the 4-rater/12-unit/5-category example with
    # missing ratings: AC1 = 0.77544 (p_a = 0.81818, p_e = 0.19032), Fleiss' kappa (generalised) = 0.76117
    # (the numbers irrCAC reproduces in its documentation).
    gwet = [row[:] for row in KRIPPENDORFF_2011]
    gwet[11] = [None, None, 3, None]
    counts = np.array([[sum(v == level for v in unit) for level in range(1, 6)] for unit in gwet])
    assert gwet_ac1(counts) == pytest.approx(0.77544, abs=5e-6)
    assert our_fleiss(counts) == pytest.approx(0.76117, abs=5e-6)


def test_ac1_hand_worked_two_raters() -> None:
    # Two raters, 10 items, 2 levels: both 0 on 6, both 1 on 2, (0, 1) on 1, (1, 0) on 1.
    # p_a = 8/10 = 0.8; pi_0 = mean of n_0/2 = (6·1 + 2·0 + 2·0.5)/10 = 0.7, pi_1 = 0.3;
    # p_e = (0.7·0.3 + 0.3·0.7)/(2−1) = 0.42; AC1 = (0.8 − 0.42)/(1 − 0.42) = 0.38/0.58.
    counts = np.array([[2, 0]] * 6 + [[0, 2]] * 2 + [[1, 1]] * 2)
    assert gwet_ac1(counts) == pytest.approx(0.38 / 0.58, abs=1e-12)
    # Fleiss: p_e = 0.7² + 0.3² = 0.58 -> (0.8 − 0.58)/(0.42)
    assert our_fleiss(counts) == pytest.approx(0.22 / 0.42, abs=1e-12)


def test_raw_agreement_hand_worked() -> None:
    counts = np.array([[3, 0, 0], [2, 1, 0], [1, 1, 1], [1, 0, 0]])
    # unit 4 has one value: left out; unanimous 1 of 3; pairwise (6/6 + 2/6 + 0/6)/3
    assert unanimous_agreement(counts) == pytest.approx(1 / 3)
    assert pairwise_agreement(counts) == pytest.approx((1 + 1 / 3 + 0) / 3)


# ------------------------------------------------------------------ independent oracles
@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval"])
def test_alpha_matches_krippendorff_package_with_missing_values(metric: str) -> None:
    frame = varying_frame()
    table = annotations_from_frame(frame)
    expected = krippendorff.alpha(reliability_data=reliability_data(frame).to_numpy(),
                                  level_of_measurement=metric, value_domain=[0, 1, 2])
    assert agreement(table, bootstrap=0).value(f"krippendorff_alpha_{metric}") == pytest.approx(expected, abs=1e-10)
    assert krippendorff_alpha(table.vote_counts(), metric) == pytest.approx(expected, abs=1e-10)


def test_fleiss_matches_statsmodels_with_constant_raters() -> None:
    frame, _ = synthetic_frame(n_items=50, n_raters=10, per_item=5, seed=5)
    table = annotations_from_frame(frame)
    unit = frame["item"] + "|" + frame["agent"]
    counts = pd.crosstab(unit, frame["label"]).to_numpy()       # independent of stableval's coding
    result = agreement(table, bootstrap=0)
    assert result.value("fleiss_kappa") == pytest.approx(fleiss_kappa(counts, method="fleiss"), abs=1e-12)
    assert not any("vary" in note for note in result.notes)
    assert result.statistics.set_index("statistic").loc["fleiss_kappa", "note"] == "Fleiss (1971)"


def test_varying_raters_are_reported() -> None:
    result = agreement(annotations_from_frame(varying_frame()), bootstrap=0)
    assert any("judgments per response vary" in note for note in result.notes)
    assert "Gwet" in result.statistics.set_index("statistic").loc["fleiss_kappa", "note"]


@pytest.mark.parametrize(("weights", "wt"), [("none", None), ("linear", "linear"), ("quadratic", "quadratic")])
def test_cohen_kappa_per_pair_matches_statsmodels(weights: str, wt: str | None) -> None:
    frame = varying_frame()
    wide = reliability_data(frame)
    result = agreement(annotations_from_frame(frame), bootstrap=0, min_shared=5, cohen_weights=weights)
    column = {"none": "kappa", "linear": "kappa_linear", "quadratic": "kappa_quadratic"}[weights]
    assert len(result.pairs) == 28
    for row in result.pairs.itertuples(index=False):
        both = wide.loc[[row.rater_a, row.rater_b]].T.dropna()
        assert len(both) == row.shared
        crossed = pd.crosstab(both.iloc[:, 0], both.iloc[:, 1]).reindex(index=[0, 1, 2], columns=[0, 1, 2],
                                                                         fill_value=0)
        expected = cohens_kappa(crossed.to_numpy(), wt=wt).kappa
        assert getattr(row, column) == pytest.approx(expected, abs=1e-10)
    mean = result.pairs[column].mean()
    assert result.value("cohen_kappa_mean") == pytest.approx(mean)


def test_min_shared_filters_pairs() -> None:
    table = annotations_from_frame(varying_frame())
    everything = agreement(table, bootstrap=0, min_shared=1)
    strict = agreement(table, bootstrap=0, min_shared=30)
    assert (strict.pairs["shared"] >= 30).all()
    assert len(strict.pairs) == int((everything.pairs["shared"] >= 30).sum()) < len(everything.pairs)


def test_cohen_kappa_degenerate_table_is_nan() -> None:
    assert np.isnan(cohen_kappa(np.array([[5, 0], [0, 0]])))


# ------------------------------------------------------------------ bootstrap
def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    table = annotations_from_frame(varying_frame())
    first = agreement(table, bootstrap=300, seed=11, min_shared=10)
    again = agreement(table, bootstrap=300, seed=11, min_shared=10)
    other = agreement(table, bootstrap=300, seed=12, min_shared=10)
    pd.testing.assert_frame_equal(first.statistics, again.statistics)
    assert not first.statistics["ci_low"].equals(other.statistics["ci_low"])
    stats = first.statistics
    assert (stats["ci_low"] <= stats["value"] + 1e-12).all() and (stats["value"] <= stats["ci_high"] + 1e-12).all()
    pairs = first.pairs.dropna(subset=["ci_low"])
    assert len(pairs) and (pairs["ci_low"] <= pairs["ci_high"]).all()


def test_bootstrap_standard_error_of_pairwise_agreement_matches_analytic() -> None:
    # pairwise agreement is a mean of per-response shares over responses with >= 2 judgments; with every
    # response pairable its bootstrap SE is the SE of a mean, sd/sqrt(n).
    frame, _ = synthetic_frame(n_items=300, n_raters=10, per_item=4, seed=2)
    table = annotations_from_frame(frame)
    counts = table.vote_counts()
    shares = (counts * (counts - 1)).sum(axis=1) / (4 * 3)
    analytic = shares.std(ddof=0) / np.sqrt(shares.size)
    result = agreement(table, bootstrap=2000, seed=0, confidence=0.6827)
    row = result.statistics.set_index("statistic").loc["pairwise_agreement"]
    assert (row["ci_high"] - row["ci_low"]) / 2 == pytest.approx(analytic, rel=0.1)


def test_no_bootstrap_gives_no_intervals_and_to_dict_is_json() -> None:
    result = agreement(annotations_from_frame(varying_frame()), bootstrap=0, min_shared=5)
    assert result.statistics["ci_low"].isna().all()
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["statistics"][0]["ci_low"] is None
    assert payload["dataset"]["judgments"] == len(varying_frame())


def test_row_order_and_names_do_not_change_point_estimates() -> None:
    frame = varying_frame()
    shuffled = frame.sample(frac=1.0, random_state=4).assign(rater=lambda f: "x" + f["rater"])
    a = agreement(annotations_from_frame(frame), bootstrap=0, min_shared=5).statistics
    b = agreement(annotations_from_frame(shuffled), bootstrap=0, min_shared=5).statistics
    np.testing.assert_allclose(a["value"], b["value"], atol=1e-12)


def test_bad_arguments_raise() -> None:
    table = annotations_from_frame(varying_frame())
    with pytest.raises(ValueError, match="cohen_weights"):
        agreement(table, cohen_weights="cubic")
    with pytest.raises(ValueError, match="metric"):
        krippendorff_alpha(table.vote_counts(), "ratio")


def _pair_intervals(frame: pd.DataFrame, back: dict[str, str] | None = None) -> dict[tuple[str, ...], tuple]:
    """Each rater pair's kappa and its bootstrap interval, the raters' names mapped back by ``back``."""
    result = agreement(annotations_from_frame(frame, levels=("bad", "good")), bootstrap=60, seed=1, min_shared=2)
    out: dict[tuple[str, ...], tuple] = {}
    for row in result.pairs.itertuples():
        names = tuple(sorted((back or {}).get(name, name) for name in (row.rater_a, row.rater_b)))
        out[names] = tuple(str(round(float(x), 9)) for x in (row.kappa_quadratic, row.ci_low, row.ci_high))
    stats = result.statistics
    out[("statistics",)] = tuple(str(round(float(x), 9)) for x in (*stats["ci_low"], *stats["ci_high"]))
    return out


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), rename_items=st.booleans())
def test_renamed_raters_give_the_identical_pair_intervals(seed: int, rename_items: bool) -> None:
    """Issue 26 (E12): a response's place in the bootstrap's draw order was broken, among responses with the same
    level counts (exact ties, common with two levels), by which rater pairs saw them: by the raters' codes, i.e. the
    sorted order of their names. Renaming the raters consistently (and the items) moved each pair's kappa interval.
    The order is now by a name-free fingerprint of who rated what, so the intervals are identical."""
    rng = np.random.default_rng(seed)
    n_raters = int(rng.integers(3, 6))
    rows = [(f"i{item}", "A", f"r{rater}", ("bad", "good")[int(rng.integers(0, 2))])
            for item in range(int(rng.integers(6, 14)))
            for rater in rng.choice(n_raters, size=int(rng.integers(2, n_raters + 1)), replace=False)]
    frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    permutation = rng.permutation(n_raters)
    mapping = {f"r{i}": f"r{permutation[i]}" for i in range(n_raters)}
    renamed = frame.assign(rater=frame["rater"].map(mapping))
    if rename_items:  # reverse the items' sort order too
        renamed = renamed.assign(item=renamed["item"].map(lambda name: f"j{99 - int(name[1:])}"))
    back = {new: old for old, new in mapping.items()}
    assert _pair_intervals(renamed, back) == _pair_intervals(frame)
