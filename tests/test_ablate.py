"""The ablation grid end to end: identical results on every executor, resumable runs, configs, the CLI."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from typer.testing import CliRunner

from stableval.cli import app
from stableval.errors import InputError
from stableval.evaluate.credit import credits_by_method, fit_methods
from stableval.evaluate.scores import agent_means
from stableval.parallel import DaskExecutor, ProcessExecutor, SerialExecutor
from stableval.simulate import SimulationConfig, Sweep, TrialTask, default_grid, load_grid, run_grid, run_trials
from stableval.simulate.grid import GridConfig, subsample_size, summarise
from stableval.simulate.simulator import simulate

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "ablation"
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


def test_shared_settings_are_computed_once() -> None:
    grid = default_grid()
    ids = [grid.setting_id(config) for _, _, config in grid.settings()]
    assert len(ids) == 26 and len(set(ids)) == 21  # the base configuration sits in 6 sweeps


def test_summary_marks_the_best_method() -> None:
    rows = []
    for method, offset in (("mv", 0.3), ("ds", 0.1), ("stableval", 0.1)):
        for trial in range(4):
            rows.append({"sweep": "s", "parameter": "hard", "value": "0", "index": 0, "method": method,
                         "trial": trial, "mse": offset + 0.01 * trial, "rank_accuracy": 1 - offset,
                         "kendall_tau": 1 - offset, "stability": offset})
    summary = summarise(pd.DataFrame(rows)).set_index(["metric", "method"])
    assert summary.loc[("mse", "mv"), "mean"] == pytest.approx(0.315)
    assert list(summary.xs("mse")["best"]) == [False, True, True]  # ds and stableval tie for the lowest MSE
    assert list(summary.xs("stability")["best"]) == [True, False, False]
    low, high = scipy.stats.t.interval(0.95, 3, loc=0.315, scale=scipy.stats.sem([0.30, 0.31, 0.32, 0.33]))
    assert (summary.loc[("mse", "mv"), "ci_low"], summary.loc[("mse", "mv"), "ci_high"]) == pytest.approx(
        (low, high))


def test_example_configs_load() -> None:
    default = load_grid(EXAMPLES / "default.toml")
    builtin = default_grid()
    assert [default.setting_id(c) for _, _, c in default.settings()] == [
        builtin.setting_id(c) for _, _, c in builtin.settings()]
    budget = load_grid(EXAMPLES / "budget.toml")
    assert budget.base.adversarial_mode == "random" and [s.name for s in budget.sweeps] == ["labels", "items"]
    assert load_grid(EXAMPLES / "quick.toml").trials == 4


@pytest.mark.parametrize(("text", "message"), [
    ("trails = 3\n", "column 'trails': unknown key in top level"),
    ("[base]\nraters = 4\nlabels_per_response = 6\n", "column 'base.labels_per_response'.*got 6"),
    ("[[sweep]]\nname = 'adversarial'\nvalues = [0.0, 1.5]\n", r"sweep #1 \(adversarial\).*got 1.5"),
    ("[[sweep]]\nname = 'speed'\nvalues = [1]\n", "unknown parameter.*got 'speed'"),
    ("trials = 1\n", "column 'trials'.*allowed: an integer >= 2"),
    ("methods = ['mv', 'best']\n", "unknown method 'best'"),
    ("trials = \n", "not valid TOML"),
])
def test_bad_configs_are_rejected_with_the_file_and_key(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as error:
        load_grid(path)
    assert str(path) in str(error.value)


def test_ablate_command_end_to_end(tmp_path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(
        "trials = 3\nseed = 2\nsubsamples = 2\n[options]\nmax_iter = 60\n"
        "[base]\nqualities = [0.8, 0.5, 0.3]\nitems = 15\nraters = 6\nlabels_per_response = 3\n"
        "[[sweep]]\nname = 'hard'\nvalues = [0.0, 0.2]\n"
        "[[sweep]]\nname = 'gap'\nparameter = 'qualities'\nvalues = [[0.8, 0.5, 0.3], [0.6, 0.55, 0.5]]\n"
        "labels = ['wide', 'narrow']\n")
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(app, ["ablate", "--config", str(config), "-o", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert "## Sweep `gap`" in result.output and "computed 4 settings" in result.output
    for name in ("trials.csv", "summary.csv", "summary.md", "hard.csv", "hard.md", "hard.png", "gap.png"):
        assert (out / name).stat().st_size > 0, name
    trials = pd.read_csv(out / "trials.csv")
    assert set(trials["value"]) == {"0", "0.2", "wide", "narrow"} and len(trials) == 4 * 3 * 3
    summary = pd.read_csv(out / "gap.csv")
    assert set(summary["metric"]) == {"mse", "rank_accuracy", "kendall_tau", "stability"}
    assert summary.groupby(["index", "metric"])["best"].any().all()
    rerun = runner.invoke(app, ["ablate", "--config", str(config), "-o", str(out), "-j", "1", "--sweep", "gap",
                                "--no-plots"])
    assert rerun.exit_code == 0 and "computed 0 settings, skipped 2" in rerun.output


def test_ablate_command_errors(tmp_path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["ablate", "--config", str(tmp_path / "none.toml"), "-o", str(tmp_path / "o")])
    assert missing.exit_code == 1 and "config file not found" in missing.output
    sweep = runner.invoke(app, ["ablate", "-o", str(tmp_path / "o"), "--sweep", "nope", "-j", "1"])
    assert sweep.exit_code == 1 and "no such sweep" in sweep.output
    usage = runner.invoke(app, ["ablate", "-o", str(tmp_path / "o"), "--trials", "1"])
    assert usage.exit_code == 2


def test_grid_select_and_replace() -> None:
    grid = default_grid()
    assert [s.name for s in grid.select(["gap", "hard"]).sweeps] == ["gap", "hard"]
    changed = dataclasses.replace(grid, seed=3)
    config = grid.base
    assert changed.setting_id(config) != grid.setting_id(config)
