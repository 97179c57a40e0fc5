"""Make tests/fixtures/crowdkit_glad_*.csv and tests/fixtures/crowdkit_mace_*.csv: crowd-kit 1.4.2's GLAD and MACE at
their default settings (and MACE's ``method="em"``) on a synthetic set and on Zheng et al. (2017)'s
d_Duck_Identification.

crowd-kit is a test-only oracle (it pulls in transformers, so it is not a dev dependency). Re-create with:

    python -m venv /tmp/ck && /tmp/ck/bin/pip install crowd-kit==1.4.2 && /tmp/ck/bin/python \
        tests/oracles/make_crowdkit_glad_mace.py

Per set and model it writes ``<prefix>_input.csv`` (task, worker, label), ``<prefix>_posteriors.csv`` (task,
p<level>..., and GLAD's ``log_beta`` per task) and ``<prefix>_raters.csv`` (worker and GLAD's ``alpha`` or MACE's
``spamming``, ``knowing`` and ``theta<level>`` weights), so the tests need neither crowd-kit nor this script.

The rows are sorted by worker, then label, so that the order in which workers and labels first appear is their
sorted order: crowd-kit's MACE indexes its spamming distributions by first appearance but fills them from a
``groupby`` (sorted order), which only agree then; stableval numbers raters in sorted order, so restart 0 of its
MACE then starts where crowd-kit starts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from crowdkit.aggregation import GLAD, MACE  # noqa: E402

from synthetic import synthetic_frame  # noqa: E402

DATA = HERE.parent / "fixtures"
DUCK = HERE.parents[2] / "shared" / "data" / "zheng2017_truth_inference" / "d_Duck_Identification" / "answer.csv"


def sorted_input(data: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by worker then label; checks that first appearance is sorted order for both."""
    data = data.sort_values(["worker", "label"], kind="stable").reset_index(drop=True)
    for column in ("worker", "label"):
        seen = list(pd.unique(data[column]))
        assert seen == sorted(seen), f"{column}: first appearance {seen[:5]} is not sorted"
    return data


def synthetic() -> pd.DataFrame:
    frame, _ = synthetic_frame(n_items=150, n_raters=12, per_item=4, agents=("A", "B"), seed=11)
    frame["task"] = frame["item"] + "|" + frame["agent"]
    return sorted_input(frame.rename(columns={"rater": "worker"})[["task", "worker", "label"]])


def duck() -> pd.DataFrame:
    answers = pd.read_csv(DUCK)
    data = pd.DataFrame({"task": "q" + answers["question"].astype(str), "worker": "w" + answers["worker"].astype(str),
                         "label": answers["answer"].astype(int)})
    return sorted_input(data)


def write(prefix: str, data: pd.DataFrame, probas: pd.DataFrame, raters: pd.DataFrame,
          per_task: pd.Series | None = None) -> None:
    data.to_csv(DATA / f"{prefix}_input.csv", index=False)
    probas = probas.sort_index()
    probas.columns = [f"p{c}" for c in probas.columns]
    probas = probas[sorted(probas.columns)]
    if per_task is not None:
        probas["log_beta"] = per_task.reindex(probas.index)
    probas.index.name = "task"
    probas.to_csv(DATA / f"{prefix}_posteriors.csv", float_format="%.12g")
    raters.to_csv(DATA / f"{prefix}_raters.csv", index=False, float_format="%.12g")
    print(f"{prefix}: {len(data)} judgments, {len(probas)} tasks, {len(raters)} workers")


def main() -> None:
    for name, data in (("synthetic", synthetic()), ("duck", duck())):
        glad = GLAD().fit(data)
        alphas = glad.alphas_.rename("alpha").rename_axis("worker").reset_index()
        write(f"crowdkit_glad_{name}", data, glad.probas_, alphas, glad.betas_)
        print(f"  GLAD: {len(glad.loss_history_)} iterations")
        settings = (("", {}), ("_em", {"method": "em"})) if name == "synthetic" else (("", {}),)
        for suffix, params in settings:
            mace = MACE(**params).fit(data)
            workers = sorted(pd.unique(data["worker"]))
            labels = sorted(pd.unique(data["label"]))
            raters = pd.DataFrame({"worker": workers, "spamming": mace.spamming_[:, 0],
                                   "knowing": mace.spamming_[:, 1]})
            for j, label in enumerate(labels):
                raters[f"theta{label}"] = mace.thetas_[:, j]
            write(f"crowdkit_mace{suffix}_{name}", data, mace.probas_, raters)


if __name__ == "__main__":
    main()
