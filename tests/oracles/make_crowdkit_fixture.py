"""Make tests/fixtures/crowdkit_*.csv: crowd-kit 1.4.2's answers on fixed inputs, for the parity tests.

* ``crowdkit_ds_{input,posteriors}.csv``: DawidSkene run to convergence on synthetic data
  (tests/aggregate/test_dawid_skene.py).
* ``crowdkit_{model}_{data}.csv`` for model in mv, ds, onecoin, wawa, zbs and data in ``synthetic`` (the same input
  as the DS fixture) and ``dog`` (zheng2017_truth_inference/s4_Dog_data, Zhou et al. 2012: 807 dog images,
  4 breeds, 8,070 judgments; copied to ``crowdkit_dog_input.csv``): one row per task with crowd-kit's label and
  its probabilities ``p<level>``; ``crowdkit_{model}_{data}_skills.csv`` where the model has ``skills_``.

crowd-kit is a test-only oracle (it pulls in transformers, so it is not a dev dependency). Re-create with:

    python -m venv /tmp/ck && /tmp/ck/bin/pip install crowd-kit==1.4.2 && /tmp/ck/bin/python \
        tests/oracles/make_crowdkit_fixture.py [path/to/zheng2017_truth_inference]

The inputs are written too, so the tests need neither crowd-kit nor this script nor the shared data.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import crowdkit.aggregation.classification.wawa as ck_wawa  # noqa: E402
import crowdkit.aggregation.classification.zero_based_skill as ck_zbs  # noqa: E402
from crowdkit.aggregation import DawidSkene, MajorityVote, OneCoinDawidSkene, Wawa, ZeroBasedSkill  # noqa: E402

from synthetic import synthetic_frame  # noqa: E402

DATA = HERE.parent / "fixtures"


def _check_is_fitted(model: object, attributes: str) -> None:
    """crowd-kit 1.4.2's Wawa/ZeroBasedSkill call scikit-learn's ``check_is_fitted``, which newer scikit-learn
    refuses on classes without ``__sklearn_tags__``; the check it stands for, kept without scikit-learn."""
    if getattr(model, attributes, None) is None:
        raise AttributeError(f"{type(model).__name__} is not fitted: no {attributes}")


ck_wawa.check_is_fitted = ck_zbs.check_is_fitted = _check_is_fitted
ZHENG = HERE.parents[2] / "shared" / "data" / "zheng2017_truth_inference"

#: fixture name → a crowd-kit model run to convergence (EM models with a tight tolerance)
MODELS = {
    "mv": lambda: MajorityVote(),
    "ds": lambda: DawidSkene(n_iter=10_000, tol=1e-13),
    "onecoin": lambda: OneCoinDawidSkene(n_iter=10_000, tol=1e-13),
    "wawa": lambda: Wawa(),
    "zbs": lambda: ZeroBasedSkill(),
}


def synthetic_input() -> pd.DataFrame:
    frame, _ = synthetic_frame(n_items=150, n_raters=12, per_item=4, agents=("A", "B"), seed=7)
    frame["task"] = frame["item"] + "|" + frame["agent"]
    return frame.rename(columns={"rater": "worker"})[["task", "worker", "label"]]


def dog_input(root: Path) -> pd.DataFrame:
    answers = pd.read_csv(root / "s4_Dog_data" / "answer.csv")
    return answers.rename(columns={"question": "task", "answer": "label"})[["task", "worker", "label"]]


def write_ds_fixture(data: pd.DataFrame) -> None:
    data.to_csv(DATA / "crowdkit_ds_input.csv", index=False)
    model = DawidSkene(n_iter=10_000, tol=1e-13).fit(data)
    probas = model.probas_.sort_index()
    probas.columns = [f"p{c}" for c in probas.columns]
    probas.to_csv(DATA / "crowdkit_ds_posteriors.csv", float_format="%.12g")
    print(f"ds: {len(model.loss_history_)} iterations; wrote {len(probas)} posteriors")


def write_model_fixtures(name: str, data: pd.DataFrame) -> None:
    for key, build in MODELS.items():
        model = build()
        labels = model.fit_predict(data)
        probas = model.probas_.reindex(labels.index)
        out = pd.DataFrame({"label": labels}).join(probas.add_prefix("p"))
        out.index.name = "task"
        out.sort_index().to_csv(DATA / f"crowdkit_{key}_{name}.csv", float_format="%.12g")
        if getattr(model, "skills_", None) is not None:
            skills = model.skills_.sort_index().rename("skill")
            skills.index.name = "worker"
            skills.to_csv(DATA / f"crowdkit_{key}_{name}_skills.csv", float_format="%.12g")
        history = getattr(model, "loss_history_", None)
        print(f"{key} on {name}: {len(labels)} tasks" + (f", {len(history)} iterations" if history else ""))


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ZHENG
    synthetic = synthetic_input()
    write_ds_fixture(synthetic)
    write_model_fixtures("synthetic", synthetic)
    dog = dog_input(root)
    dog.to_csv(DATA / "crowdkit_dog_input.csv", index=False)
    write_model_fixtures("dog", dog)


if __name__ == "__main__":
    main()
