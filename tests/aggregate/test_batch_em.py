"""Many small problems fitted at once (``aggregate/batch_em.py``): the batched EM kernel equals the single-table
estimators, bit for bit alone or in any batch."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.aggregate import DawidSkene, MajorityVote, Stableval
from stableval.aggregate.batch_em import ProblemBatch, batch_em, batch_fit
from stableval.aggregate.registry import get_method
from stableval.data.table import AnnotationTable
from stableval.simulate import SimulationConfig, simulate


# ---------------------------------------------------------------------- batched EM
def _problems(seed: int) -> tuple[list, list]:
    config = SimulationConfig(items=40, raters=12, labels_per_response=4, adversarial=0.2, hard=0.1)
    sims = [simulate(config, seed=seed + i) for i in range(3)]
    problems = [(s.response, s.rater, s.label, s.n_responses) for s in sims]
    # a rater subset, re-coded as in the grid (responses without judgments dropped)
    s = sims[0]
    keep = np.isin(s.rater, np.arange(0, 12, 2))
    used, code = np.unique(s.response[keep], return_inverse=True)
    problems.append((code, s.rater[keep], s.label[keep], used.size))
    return problems, sims


@pytest.mark.parametrize("max_iter", [500, 7])  # 7: most problems stop at max_iter, unconverged
@pytest.mark.parametrize("method", ["ds", "stableval"])
def test_batched_em_matches_the_single_table_estimators(method: str, max_iter: int) -> None:
    problems, _ = _problems(10)
    batch = ProblemBatch.from_problems(problems, n_raters=12, n_levels=3)
    plain = {"max_iter": max_iter, "acceleration": "none"}  # the batch runs plain EM steps
    fit = batch_em(batch, DawidSkene(**plain) if method == "ds" else Stableval(**plain))
    for p, (response, rater, label, _n) in enumerate(problems):
        # zero-padded item names keep the table's (sorted) response order equal to the batch's
        frame = pd.DataFrame({"item": [f"{i:05d}" for i in response], "agent": "A", "rater": rater,
                              "label": label})
        table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
        model = (DawidSkene(**plain) if method == "ds" else Stableval(**plain)).fit(table)
        rows = slice(batch.starts[p], batch.starts[p + 1])
        np.testing.assert_allclose(fit.posteriors[rows], model.posteriors_, atol=1e-6)
        assert fit.n_iter[p] == model.n_iter_
        assert fit.converged[p] == model.converged_
        assert fit.objective[p] == pytest.approx(model.objective_[-1], rel=1e-9)
        np.testing.assert_array_equal(batch_fit(batch, MajorityVote()).distribution[rows],
                                      MajorityVote().fit(table).posteriors_)


def test_a_problem_gives_the_same_bits_alone_or_in_any_batch() -> None:
    problems, _ = _problems(20)
    together = batch_em(ProblemBatch.from_problems(problems, 12, 3), Stableval())
    alone = batch_em(ProblemBatch.from_problems(problems[2:3], 12, 3), Stableval())
    shuffled = batch_em(ProblemBatch.from_problems([problems[3], problems[2]], 12, 3), Stableval())
    batch = ProblemBatch.from_problems(problems, 12, 3)
    rows = slice(batch.starts[2], batch.starts[3])
    np.testing.assert_array_equal(together.posteriors[rows], alone.posteriors)
    np.testing.assert_array_equal(shuffled.posteriors[problems[3][3]:], alone.posteriors)


@pytest.mark.parametrize("name", ["onecoin", "wawa", "zbs"])
def test_batch_fit_equals_one_fit_per_problem(name: str) -> None:
    rng = np.random.default_rng(5)
    problems = []
    for _ in range(3):
        n = 12
        response = np.repeat(np.arange(n), 3)
        truth = rng.integers(0, 3, n)
        label = np.where(rng.random(3 * n) < 0.7, truth[response], rng.integers(0, 3, 3 * n))
        problems.append((response, np.tile([0, 1, 2], n) + rng.integers(0, 2, 3 * n) * 3, label, n))
    batch = ProblemBatch.from_problems(problems, n_raters=6, n_levels=3)
    method = get_method(name)
    fitted = batch_fit(batch, method.build(), method).distribution
    alone = np.concatenate([method.credit_distribution(method.build().fit_matrix(batch.problem_matrix(p), 6, 3)
                                                       .posteriors_) for p in range(3)])
    np.testing.assert_allclose(fitted, alone, atol=1e-12)
