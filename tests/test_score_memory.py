"""Scoring holds less at scale (issue 14) and gives the same numbers: each fitted model is let go once its credits,
posteriors and summary are kept; counts and the response matrix are built without (judgments,) int64 copies."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stableval.aggregate import DawidSkene, MajorityVote, Stableval
from stableval.data.table import AnnotationTable
from stableval.evaluate.credit import item_credit
from stableval.evaluate.scores import score_agents

from synthetic import synthetic_frame


def table() -> AnnotationTable:
    return AnnotationTable.from_frame(synthetic_frame(n_items=60, seed=3)[0], levels=("0", "1", "2"))


def test_scores_equal_models_fitted_on_their_own() -> None:
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
