"""The ablation grid end to end: trial metrics against an independent computation, identical results on every
executor, resumable runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from stableval.evaluate.credit import credits_by_method, fit_methods
from stableval.evaluate.scores import agent_means
from stableval.parallel import DaskExecutor, ProcessExecutor, SerialExecutor
from stableval.simulate import SimulationConfig, Sweep, TrialTask, run_grid, run_trials
from stableval.simulate.grid import GridConfig, subsample_size
from stableval.simulate.simulator import simulate

TINY_BASE = SimulationConfig(qualities=(0.8, 0.6, 0.4), items=20, raters=8, labels_per_response=3)


FAST = {"ds": {"max_iter": 60}, "stableval": {"max_iter": 60}}


def tiny_grid(trials: int = 3) -> GridConfig:
    return GridConfig(
        base=TINY_BASE,
        sweeps=(Sweep("adversarial", "adversarial", (0.0, 0.25), ("0", "0.25")),
                Sweep("labels", "labels_per_response", (3, 5), ("3", "5"))),
        trials=trials, seed=7, subsamples=2, params=FAST,
    )


def test_trial_metrics_match_an_independent_computation() -> None:
    """One trial recomputed with the library estimators, table.subset and scipy's Kendall tau."""
    task = TrialTask(TINY_BASE, trials=(4,), seed=11, subsamples=3, subsample_fraction=0.5)
    ours = run_trials(task).set_index("method")
    sim_seed, subset_seed = np.random.SeedSequence([11, 4]).spawn(2)
    sim = simulate(TINY_BASE, np.random.default_rng(sim_seed))
    table = sim.table()

    def scores(t):  # agent means of each method's item credit
        plain = {"acceleration": "none"}  # the simulator's batch runs plain EM steps
        return agent_means(credits_by_method(fit_methods(t, ["mv", "ds", "stableval"], {"ds": plain,
                                                                                        "stableval": plain}),
                                             t.credit), t.response_agent, t.n_agents)

    full = scores(table)
    rng = np.random.default_rng(subset_seed)
    taus = []
    for _ in range(3):
        drawn = rng.choice(8, subsample_size(8, 0.5), replace=False)
        subset = table.subset(np.isin(table.rater, drawn))  # simulation rater r is table rater r (sorted names)
        part = scores(subset)
        taus.append([scipy.stats.kendalltau(full[:, j], part[:, j]).statistic for j in range(3)])
    truth = sim.true_scores
    for j, method in enumerate(["mv", "ds", "stableval"]):
        row = ours.loc[method]
        assert row["mse"] == pytest.approx(np.mean((full[:, j] - truth) ** 2), abs=1e-9)
        assert row["kendall_tau"] == pytest.approx(scipy.stats.kendalltau(full[:, j], truth).statistic, abs=1e-9)
        assert row["stability"] == pytest.approx(np.nanmean(np.array(taus)[:, j]), abs=1e-9)


@pytest.mark.slow
def test_grid_identical_on_every_executor_and_resumable(tmp_path) -> None:
    grid = tiny_grid()
    serial = run_grid(grid, tmp_path / "serial", executor=SerialExecutor())
    # the base setting (adversarial 0.1, 3 labels) is shared by... neither value list here, so 4 distinct settings
    assert serial.computed == 4 and serial.skipped == 0
    assert len(serial.trials) == 4 * 3 * 3
    with ProcessExecutor(2) as pool:
        processes = run_grid(grid, tmp_path / "processes", executor=pool)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
                                  ) as cluster, distributed.Client(cluster) as client:
        dask = run_grid(grid, tmp_path / "dask", executor=DaskExecutor(client))
    pd.testing.assert_frame_equal(serial.trials, processes.trials)
    pd.testing.assert_frame_equal(serial.trials, dask.trials)
    assert (tmp_path / "serial" / "trials.csv").read_bytes() == (tmp_path / "dask" / "trials.csv").read_bytes()

    # resumable: a rerun skips everything; a removed setting is recomputed alone, to the same numbers
    again = run_grid(grid, tmp_path / "serial")
    assert (again.computed, again.skipped) == (0, 4)
    victim = sorted((tmp_path / "serial" / "settings").glob("*.csv"))[0]
    victim.unlink()
    resumed = run_grid(grid, tmp_path / "serial")
    assert (resumed.computed, resumed.skipped) == (1, 3)
    pd.testing.assert_frame_equal(resumed.trials, serial.trials)
    # more trials is a different setting: recomputed, and the first trials are unchanged (seeded per trial)
    more = run_grid(tiny_grid(trials=4), tmp_path / "serial")
    assert more.computed == 4
    first = more.trials[more.trials["trial"] < 3].drop(columns="setting").reset_index(drop=True)
    pd.testing.assert_frame_equal(first, serial.trials.drop(columns="setting").reset_index(drop=True))
