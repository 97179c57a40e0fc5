"""The crowd-kit-compatible API: every aggregator fits on frames and pyarrow tables, answers with labelled pandas
results, and ``stableval.crowdkit`` runs crowd-kit-style scripts, checked against crowd-kit 1.4.2's own answers
(tests/oracles/make_crowdkit_fixture.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import stableval
from stableval.aggregate import DawidSkene, MajorityVote, OneCoinDawidSkene, Stableval
from stableval.data.annotations import annotations_from_frame
from stableval.data.frames import SINGLE_AGENT, as_table
from stableval.errors import InputError, NotFittedError

from paths import FIXTURES
from synthetic import synthetic_frame

CROWD = pd.DataFrame({"task": ["t1", "t1", "t1", "t2", "t2", "t2", "t3", "t3", "t3"],
                      "worker": list("abcabcabc"), "label": ["yes", "yes", "no", "no", "no", "no", "yes", "yes", "no"]})


def fixture(model: str, data: str) -> pd.DataFrame:
    """crowd-kit 1.4.2's labels and probabilities for one model and input (index: task as text)."""
    expected = pd.read_csv(FIXTURES / f"crowdkit_{model}_{data}.csv", index_col=0)
    expected.index = expected.index.astype(str)
    return expected


def fixture_input(data: str) -> pd.DataFrame:
    return pd.read_csv(FIXTURES / ("crowdkit_ds_input.csv" if data == "synthetic" else "crowdkit_dog_input.csv"))


# ------------------------------------------------------------------ fit takes frames
def test_dawid_skene_fits_a_crowdkit_frame() -> None:
    """Regression: DawidSkene().fit(df) on crowd-kit's columns raised AttributeError ('DataFrame' object has no
    attribute 'response_matrix')."""
    model = stableval.DawidSkene().fit(CROWD)
    assert model.labels_.to_dict() == {"t1": "yes", "t2": "no", "t3": "yes"}
    assert model.labels_.index.name == "item"


@pytest.mark.parametrize("make", [
    lambda f: f,                                                                     # crowd-kit columns
    lambda f: f.rename(columns={"task": "item", "worker": "rater"}).assign(agent=SINGLE_AGENT),  # ours
    lambda f: f.rename(columns={"task": "question_id", "worker": "annotator", "label": "rating"}),  # aliases
    lambda f: pa.Table.from_pandas(f),                                              # pyarrow
])
def test_every_input_shape_gives_the_same_fit(make: object) -> None:
    frame, _ = synthetic_frame(n_items=40, agents=("A",), seed=2)
    crowd = frame.rename(columns={"item": "task", "rater": "worker"}).drop(columns="agent")
    reference = DawidSkene().fit(as_table(crowd)).posteriors_
    fitted = DawidSkene().fit(make(crowd))  # type: ignore[operator]
    np.testing.assert_allclose(fitted.posteriors_, reference, atol=1e-12)


def test_majority_vote_with_its_own_fit_also_takes_frames() -> None:
    model = MajorityVote(ties="first").fit(CROWD)
    assert model.labels_.tolist() == [1, 0, 1]  # MajorityVote keeps its own labels_: the level codes
    assert model.fit_predict(CROWD).tolist() == ["yes", "no", "yes"]


def test_fit_predict_is_labelled_by_response() -> None:
    frame, _ = synthetic_frame(n_items=30, agents=("A", "B"), seed=4)
    model = Stableval()
    labels = model.fit_predict(frame)
    probas = model.fit_predict_proba(frame)
    assert labels.index.names == ["item", "agent"] and len(labels) == 60
    assert list(probas.columns) == ["0", "1", "2"] and probas.index.equals(labels.index)
    np.testing.assert_allclose(probas.to_numpy(), model.posteriors_)
    assert (labels == probas.idxmax(axis=1)).all()
    table = as_table(frame)
    assert labels.loc[(table.items[0], "B")] == table.levels[int(model.posteriors_[1].argmax())]


def test_errors_are_the_confusion_matrices_labelled_as_crowdkit_does() -> None:
    model = DawidSkene().fit(CROWD)
    errors = model.errors_
    assert errors.index.names == ["rater", "label"] and list(errors.columns) == ["no", "yes"]
    # row (rater, given), column true: P(given | true) = confusion_[rater, true, given]
    assert errors.loc[("c", "no"), "yes"] == pytest.approx(model.confusion_[2, 1, 0])
    np.testing.assert_allclose(errors.groupby(level="rater").sum().to_numpy(), 1.0)
    with pytest.raises(AttributeError, match="no per-rater skill"):
        _ = model.skills_
    assert not hasattr(MajorityVote().fit(CROWD), "errors_")


def test_skills_by_rater_name() -> None:
    skills = OneCoinDawidSkene().fit(CROWD).skills_
    assert skills.index.name == "rater" and list(skills.index) == ["a", "b", "c"]
    assert skills["c"] < skills["a"]


def test_labelled_views_need_a_table() -> None:
    table = as_table(CROWD)
    model = DawidSkene().fit_matrix(table.response_matrix(), table.n_raters, table.n_levels)
    with pytest.raises(NotFittedError, match="fit_matrix"):
        _ = model.labels_
    with pytest.raises(NotFittedError, match="call fit"):
        _ = DawidSkene().probas_


def test_frames_get_the_readers_messages() -> None:
    bad = CROWD.assign(task=["t1", "", "t1", "t2", "t2", "t2", "t3", "t3", "t3"])
    with pytest.raises(InputError) as ours:
        DawidSkene().fit(bad)
    with pytest.raises(InputError) as reader:
        annotations_from_frame(bad, levels=["no", "yes"], default_agent=SINGLE_AGENT)
    assert str(ours.value) == str(reader.value)
    assert "row 2" in str(ours.value) and "column 'task'" in str(ours.value)
    with pytest.raises(InputError, match="label"):
        DawidSkene().fit(CROWD.drop(columns="label"))
    with pytest.raises(TypeError, match="cannot read judgments from a dict; allowed"):
        DawidSkene().fit(CROWD.to_dict())


def test_text_labels_become_sorted_levels_and_integers_stay_codes() -> None:
    assert as_table(CROWD).levels == ("no", "yes")
    assert as_table(CROWD.assign(label=[2, 0, 0, 1, 1, 1, 2, 2, 2])).levels == ("0", "1", "2")
    assert as_table(CROWD, levels="yes,no").levels == ("yes", "no")


# ------------------------------------------------------------------ stableval.crowdkit
def test_crowdkit_readme_examples_run_after_swapping_the_import() -> None:
    """crowd-kit's README quick start, re-typed, on the dog data (Zhou et al. 2012). At crowd-kit's default
    ``tol=1e-5`` both stop early (stableval after 11 EM steps), so 1 task in 807 differs from crowd-kit run to
    convergence; at ``tol=1e-8`` none does (next test)."""
    from stableval.crowdkit import DawidSkene, MajorityVote, Wawa

    df = fixture_input("dog")  # columns: task, worker, label
    agg_ds = DawidSkene(n_iter=100).fit_predict(df)
    agg_mv = MajorityVote().fit_predict(df)
    agg_wawa = Wawa().fit_predict(df)
    assert agg_ds.index.name == "task" and agg_ds.index.dtype == np.int64 and agg_ds.dtype == np.int64
    expected = fixture("ds", "dog")
    assert (agg_ds.sort_index().to_numpy() != expected["label"].to_numpy()).sum() <= 1
    assert len(agg_mv) == len(agg_wawa) == 807


@pytest.mark.parametrize("data", ["synthetic", "dog"])
def test_crowdkit_majority_vote_matches(data: str) -> None:
    """The vote shares equal crowd-kit's probas_; labels equal wherever the vote is not tied (crowd-kit breaks ties
    by pandas' column order, which follows label frequency: not a rule worth copying)."""
    from stableval.crowdkit import MajorityVote

    expected = fixture("mv", data)
    model = MajorityVote().fit(fixture_input(data))
    probas = model.probas_
    probas.index = probas.index.astype(str)
    columns = [c for c in expected.columns if c.startswith("p")]
    ours = probas.loc[expected.index, [type(probas.columns[0])(c[1:]) for c in columns]].to_numpy()
    np.testing.assert_allclose(ours, expected[columns].to_numpy(), atol=1e-12)
    top = expected[columns].to_numpy()
    untied = (top == top.max(axis=1, keepdims=True)).sum(axis=1) == 1
    labels = model.labels_
    labels.index = labels.index.astype(str)
    assert untied.mean() > 0.8  # most tasks are not tied (88% synthetic, 96% dog)
    assert (labels.loc[expected.index].astype(str).to_numpy()[untied]
            == expected["label"].astype(str).to_numpy()[untied]).all()


@pytest.mark.parametrize("data", ["synthetic", "dog"])
def test_crowdkit_dawid_skene_labels_match(data: str) -> None:
    from stableval.crowdkit import DawidSkene

    expected = fixture("ds", data)
    labels = DawidSkene(100, tol=1e-8).fit_predict(fixture_input(data))
    labels.index = labels.index.astype(str)
    assert (labels.loc[expected.index].astype(str).to_numpy() == expected["label"].astype(str).to_numpy()).all()


def test_crowdkit_classes_answer_in_crowdkit_shapes() -> None:
    from stableval import crowdkit

    df = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": [7, 8, 9, 7, 8, 9], "label": [1, 1, 0, 0, 0, 1]})
    model = crowdkit.OneCoinDawidSkene(n_iter=50, tol=1e-6).fit(df)
    assert model.model_.max_iter == 50 and model.n_iter == 50
    assert model.errors_.index.names == ["worker", "label"] and model.errors_.index[0] == (7, 0)
    assert model.skills_.index.name == "worker" and model.skills_.index.dtype == np.int64
    assert list(model.probas_.columns) == [0, 1]
    assert crowdkit.ZeroBasedSkill(lr_init=0.5).fit(df).lr_init == 0.5  # fitted by stableval.crowdkit itself
    with pytest.raises(NotFittedError, match="call fit"):
        _ = crowdkit.Wawa().labels_
    with pytest.raises(AttributeError):
        _ = crowdkit.DawidSkene().fit(df).skills_


@pytest.mark.parametrize("name", ["GLAD", "MACE"])
def test_optional_models_are_picked_up_when_stableval_has_them(name: str) -> None:
    from stableval import crowdkit

    if not hasattr(stableval.aggregate, name):
        with pytest.raises(AttributeError):
            getattr(crowdkit, name)
        return
    model = getattr(crowdkit, name)(n_iter=30).fit(CROWD)
    assert model.model_.max_iter == 30
    assert model.labels_.to_dict() == {"t1": "yes", "t2": "no", "t3": "yes"}
    with pytest.raises(TypeError, match=r"unexpected parameter 'n_iters'; allowed: .*n_iter"):
        getattr(crowdkit, name)(n_iters=3)


def test_integer_frame_columns_give_the_same_table_as_their_text() -> None:
    from stableval.data.frames import as_table

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"task": rng.integers(-5, 400, 3000), "worker": rng.integers(0, 40, 3000),
                          "label": rng.integers(0, 3, 3000)}).drop_duplicates(["task", "worker"])
    frame["task"] = frame["task"].astype(np.int16)
    fast, text = as_table(frame), as_table(frame.astype(str))
    assert list(fast.items) == list(text.items) and list(fast.raters) == list(text.raters)
    assert fast.levels == text.levels == ("0", "1", "2")
    for name in ("response", "rater", "label"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(text, name))
