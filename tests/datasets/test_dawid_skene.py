"""Dawid & Skene (1979): counts and the reference fit, and an unknown layout refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stableval.aggregate import DawidSkene
from stableval.datasets import load_dawid_skene
from stableval.errors import InputError

from paths import shared_file


# ====================================================================================== Dawid & Skene
def test_dawid_skene_counts_and_reference_fit() -> None:
    folder = shared_file("dawid_skene_1979")
    table = load_dawid_skene(folder)
    assert (table.n_judgments, table.n_responses, table.n_raters, table.n_agents) == (315, 45, 5, 1)
    assert np.bincount(table.rater).tolist() == [135, 45, 45, 45, 45]
    model = DawidSkene(tol=1e-10).fit(table)
    # reference_em_output_dallascard_impl.txt: log-likelihood -192.890882 at convergence, marginals .4 .42 .11 .07
    assert model.log_likelihood_[-1] == pytest.approx(-192.890882, abs=1e-4)
    assert model.priors_.round(2).tolist() == [0.4, 0.42, 0.11, 0.07]
    published_map = [1, 4, 2, 2, 2, 2, 1, 3, 2, 2, 4, 3, 1, 2, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 2, 1, 1, 1, 1, 3,
                     1, 2, 2, 4, 2, 3, 3, 1, 1, 1, 2, 1, 2]
    order = np.argsort(table.items.astype(int).to_numpy()[table.response_item])
    assert (model.posteriors_.argmax(axis=1)[order] + 1).tolist() == published_map
    rater = load_dawid_skene(folder, data="anesthesia-rater")
    assert DawidSkene(tol=1e-10).fit(rater).log_likelihood_[-1] == pytest.approx(-190.7310, abs=1e-3)
    caries = load_dawid_skene(folder / "caries_grouped_rater.csv")
    assert (caries.n_judgments, caries.n_responses, caries.n_raters) == (19295, 3859, 5)


def test_dawid_skene_rejects_unknown_layout(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(InputError, match="unknown Dawid-Skene file layout") as caught:
        load_dawid_skene(path)
    assert caught.value.file == str(path)
    path.write_text("patient;observer;response\n1;1;5\n")
    with pytest.raises(InputError, match="rating is not 1-4") as caught:
        load_dawid_skene(path)
    assert caught.value.row == 1 and caught.value.value == "5"
