"""Synthetic rating studies and the ablation grid (stress tests of the aggregation methods).

>>> from stableval.simulate import SimulationConfig, simulate
>>> simulate(SimulationConfig(items=10, raters=6, labels_per_response=3), seed=0).n_judgments
180
"""

from stableval.simulate.grid import (
    GridConfig,
    GridResult,
    Sweep,
    TrialTask,
    default_grid,
    load_grid,
    run_grid,
    run_trials,
    summarise,
)
from stableval.simulate.judges import JudgeConfig, JudgedStudy, simulate_judged
from stableval.simulate.metrics import kendall_tau_b, mean_subset_tau, rank_accuracy
from stableval.simulate.raters import RATER_TYPES
from stableval.simulate.simulator import (
    NARROW_GAP,
    WIDE_GAP,
    Simulation,
    SimulationConfig,
    level_distribution,
    simulate,
    true_scores,
)

__all__ = [
    "NARROW_GAP",
    "RATER_TYPES",
    "WIDE_GAP",
    "GridConfig",
    "GridResult",
    "JudgeConfig",
    "JudgedStudy",
    "Simulation",
    "SimulationConfig",
    "Sweep",
    "TrialTask",
    "default_grid",
    "kendall_tau_b",
    "level_distribution",
    "load_grid",
    "mean_subset_tau",
    "rank_accuracy",
    "run_grid",
    "run_trials",
    "simulate",
    "simulate_judged",
    "summarise",
    "true_scores",
]
