"""crowd-kit 1.4.2's answers recorded in tests/fixtures (made by the scripts in tests/oracles), read for the parity
tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stableval.data.table import AnnotationTable

from paths import (
    FIXTURES,
)


def crowdkit_fixture(prefix: str) -> tuple[AnnotationTable, pd.DataFrame, pd.DataFrame, list[str]]:
    """The fixture's input as a table (tasks as items of one agent), and crowd-kit's posteriors and rater
    parameters aligned to the table's response and rater order."""
    data = pd.read_csv(FIXTURES / f"{prefix}_input.csv")
    levels = [str(level) for level in sorted(data["label"].unique())]
    frame = pd.DataFrame({"item": data["task"].astype(str), "agent": "A", "rater": data["worker"].astype(str),
                          "label": data["label"].astype(int)})
    table = AnnotationTable.from_frame(frame, levels=tuple(levels))
    posteriors = pd.read_csv(FIXTURES / f"{prefix}_posteriors.csv", dtype={"task": str}).set_index("task")
    raters = pd.read_csv(FIXTURES / f"{prefix}_raters.csv", dtype={"worker": str}).set_index("worker")
    return table, posteriors.loc[list(table.items)], raters.loc[list(table.raters)], levels


def load_crowdkit(model: str, data: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series | None]:
    """(input, crowd-kit's labels and probabilities by task, crowd-kit's skills by worker or None)."""
    source = FIXTURES / ("crowdkit_ds_input.csv" if data == "synthetic" else "crowdkit_dog_input.csv")
    expected = pd.read_csv(FIXTURES / f"crowdkit_{model}_{data}.csv", index_col=0)
    expected.index = expected.index.astype(str)
    path = FIXTURES / f"crowdkit_{model}_{data}_skills.csv"
    skills = None
    if path.exists():
        skills = pd.read_csv(path, index_col=0)["skill"]
        skills.index = skills.index.astype(str)
    return pd.read_csv(source), expected, skills


def compare_with_crowdkit(fitted: object, expected: pd.DataFrame) -> np.ndarray:
    """Our probabilities minus crowd-kit's, tasks and levels aligned."""
    columns = [c for c in expected.columns if c.startswith("p")]
    ours = fitted.probas_.loc[expected.index, [c[1:] for c in columns]].to_numpy()  # type: ignore[attr-defined]
    return np.asarray(ours - expected[columns].to_numpy())


def random_answers(seed: int, n_tasks: int = 60, n_workers: int = 12, labels: tuple[str, ...] = ("a", "b", "c"),
                   per_task: int = 5) -> tuple[pd.DataFrame, pd.Series]:
    """crowd-kit-style answers (``task, worker, label``) of workers of random accuracy to tasks of random truth;
    returns (answers, truth), for checking stableval.crowdkit against crowd-kit itself."""
    rng = np.random.default_rng(seed)
    truth = pd.Series(rng.choice(labels, n_tasks), index=[f"t{i}" for i in range(n_tasks)])
    accuracy = rng.uniform(0.4, 0.95, n_workers)
    rows = []
    for task, true in truth.items():
        for worker in rng.choice(n_workers, per_task, replace=False):
            label = true if rng.random() < accuracy[worker] else rng.choice(labels)
            rows.append((task, f"w{worker}", label))
    return pd.DataFrame(rows, columns=["task", "worker", "label"]), truth
