"""What every aggregator shares (``aggregate/_base.py``): parameters read off ``__init__``, ``clone`` and
``set_params``, results before ``fit``, posteriors that are distributions, the one ``fit_matrix`` path and the hard
distribution of vote counts."""

from __future__ import annotations

import re
from typing import Self

import numpy as np
import pytest
import scipy.sparse as sp

import stableval.aggregate._base as base
from stableval import DawidSkene, MajorityVote, Stableval
from stableval.aggregate import clone, get_method, method_names
from stableval.aggregate._base import hard_distribution
from stableval.aggregate.em import vote_counts_of_matrix
from stableval.errors import NotFittedError

from synthetic import small_three_level_table, synthetic_table


@pytest.mark.parametrize("model", [DawidSkene(), Stableval(), Stableval(alpha_pi=3.0), MajorityVote()])
def test_posteriors_are_distributions(model: DawidSkene) -> None:
    posteriors = model.fit_predict_proba(synthetic_table(4)).to_numpy()
    assert posteriors.min() >= 0
    np.testing.assert_allclose(posteriors.sum(axis=1), 1.0, atol=1e-12)
    if hasattr(model, "confusion_"):
        np.testing.assert_allclose(model.confusion_.sum(axis=2), 1.0, atol=1e-12)
        assert model.priors_.sum() == pytest.approx(1.0)


def test_results_before_fit_raise_a_clear_error() -> None:
    with pytest.raises(NotFittedError, match=r"call fit\(table\) first"):
        _ = DawidSkene().posteriors_
    with pytest.raises(AttributeError):
        _ = DawidSkene().no_such_thing


def test_bad_hyper_parameters_are_rejected() -> None:
    with pytest.raises(ValueError, match="alpha"):
        Stableval(alpha_pi=0.5)
    with pytest.raises(ValueError, match="epsilon"):
        Stableval(epsilon=0)
    with pytest.raises(ValueError, match="ties='coin': allowed one of split"):
        MajorityVote(ties="coin")


def test_split_majority_vote_is_the_hard_distribution_of_the_counts() -> None:
    """Issue 14: the fit's cheaper set-up at scale."""
    rng = np.random.default_rng(0)
    X = sp.random(500, 12, density=0.3, format="csr", random_state=1)
    X.data = rng.integers(1, 3, X.nnz).astype(float)
    model = MajorityVote().fit_matrix(X, n_raters=4, n_levels=3)
    counts = vote_counts_of_matrix(X, 3)
    np.testing.assert_array_equal(model.posteriors_, hard_distribution(counts, atol=0.0))
    assert model.tied_.any() and (counts.sum(axis=1) == 0).any()  # ties and empty rows were exercised


# ---------------------------------------------------------------------------------------------- estimators
@pytest.mark.parametrize("name", method_names())
def test_params_are_read_off_init_and_clone_round_trips(name: str) -> None:
    method = get_method(name)
    estimator = method.build()
    params = estimator.get_params()
    assert list(params) == list(method.estimator.parameter_names())
    copy = clone(estimator)
    assert copy is not estimator and copy.get_params() == params
    fitted = clone(estimator).fit(small_three_level_table())
    assert fitted.posteriors_.shape == (small_three_level_table().n_responses, 3)
    with pytest.raises(Exception, match="call fit"):
        _ = clone(estimator).posteriors_


def test_set_params_validates_like_init_and_names_what_exists() -> None:
    model = Stableval().set_params(alpha_pi=3.0)
    assert model.alpha_pi == 3.0 and repr(model) == "Stableval(alpha_pi=3.0)"
    listed = r"no parameter 'alpha'; its parameters: alpha_mu, alpha_pi, epsilon, init, n_starts, seed"
    with pytest.raises(ValueError, match=listed):
        model.set_params(alpha=2)
    with pytest.raises(ValueError, match=re.escape("alpha_pi=0.5: allowed a number ≥ 1, or one of auto, pooled")):
        model.set_params(alpha_pi=0.5)
    assert model.alpha_pi == 3.0  # a refused change leaves the estimator as it was


def test_fit_matrix_is_the_one_fit_path() -> None:
    table = small_three_level_table()
    X: sp.csr_matrix = table.response_matrix()
    for name in method_names():
        estimator = get_method(name).build()
        direct = clone(estimator).fit_matrix(X, table.n_raters, table.n_levels).posteriors_
        np.testing.assert_array_equal(direct, clone(estimator).fit(table).posteriors_)


def test_a_subclass_must_list_its_hyper_parameters() -> None:
    class Bad(MajorityVote):
        def __init__(self, **kwargs: object) -> None:
            super().__init__()

        def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                       gold: np.ndarray | None = None) -> Self:
            return self

    with pytest.raises(TypeError, match="must list its hyper-parameters explicitly"):
        Bad().get_params()


def test_hard_distribution_equals_the_one_hot_divided_by_its_row_sums() -> None:
    """Issue 14: the score path at scale."""
    rng = np.random.default_rng(3)
    probabilities = rng.random((2000, 4))
    probabilities[::3] = [0.4, 0.4, 0.2, 0.0]
    probabilities[1::7] = 0.25
    probabilities[2::11] = [0.3, 0.3 + 1e-13, 0.2, 0.2 - 1e-13]  # equal within atol
    probabilities[5] = np.nan
    counts = rng.integers(0, 3, (500, 3)).astype(float)  # vote counts: exact ties, all-zero rows
    for values, atol in ((probabilities, 1e-12), (probabilities, 0.0), (counts, 0.0), (counts[:0], 0.0)):
        top = values.max(axis=1, keepdims=True) if len(values) else np.zeros((0, 1))
        winners = (values >= top - atol).astype(float)
        with np.errstate(invalid="ignore"):
            simple = winners / winners.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            fast = base.hard_distribution(values, atol=atol)
        np.testing.assert_array_equal(fast, simple)
    with np.errstate(invalid="ignore"):
        assert np.isnan(base.hard_distribution(probabilities)[5]).all()  # a NaN row stays NaN, as 0 / 0 gave


def test_crowdkit_parameter_names_say_which_to_use() -> None:
    """Issue 32: DawidSkene(n_iter=100) (crowd-kit's name) named neither stableval's name nor the compatible class."""
    from stableval.aggregate import MACE, DawidSkene

    with pytest.raises(TypeError, match=r"unexpected parameter 'n_iter'; stableval's name is max_iter \(or use "
                                        r"stableval.crowdkit.DawidSkene.*allowed: max_iter, tol, acceleration"):
        DawidSkene(n_iter=100)
    with pytest.raises(TypeError, match="'random_state'; stableval's name is seed"):
        MACE(random_state=1)
    with pytest.raises(TypeError, match=r"unexpected parameter 'nope'; allowed: max_iter"):
        DawidSkene(nope=1)


def test_an_init_default_other_than_the_declared_one_is_refused() -> None:
    """Issue 27: a registered estimator reads its hyper-parameters from its declaration
    (:mod:`stableval.aggregate.methods`), defaults included, which the command line's help shows without importing
    it; ``__init__`` repeating another default would make that help wrong, so building it fails, naming both."""
    from stableval.aggregate.parameters import em_settings

    class Drifted(DawidSkene):
        PARAMETERS = (*em_settings(max_iter=500), get_method("ds").param("acceleration"))

        def __init__(self, max_iter: int = 100, tol: float = 1e-8, acceleration: str = "auto") -> None:
            self._set_checked(max_iter=max_iter, tol=tol, acceleration=acceleration)

    with pytest.raises(TypeError, match=r"Drifted.__init__'s defaults must be the declared ones: max_iter=500 "
                                        r"declared, 100 in __init__"):
        Drifted()
    for name in method_names():  # every registered estimator repeats its declared defaults
        estimator = get_method(name).build()
        assert estimator.default_params() == {o.name: o.default for o in get_method(name).params}
