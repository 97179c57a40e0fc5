"""Make tests/data/crowdkit_ds_*.csv: crowd-kit 1.4.2's DawidSkene run to convergence on synthetic data.

crowd-kit is a test-only oracle (it pulls in transformers, so it is not a dev dependency). Re-create with:

    python -m venv /tmp/ck && /tmp/ck/bin/pip install crowd-kit==1.4.2 && /tmp/ck/bin/python \
        tests/oracles/make_crowdkit_fixture.py

The input is written too, so the test needs neither crowd-kit nor this script.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from crowdkit.aggregation import DawidSkene  # noqa: E402

from synthetic import synthetic_frame  # noqa: E402

DATA = HERE.parent / "data"


def main() -> None:
    frame, _ = synthetic_frame(n_items=150, n_raters=12, per_item=4, agents=("A", "B"), seed=7)
    frame["task"] = frame["item"] + "|" + frame["agent"]
    data = frame.rename(columns={"rater": "worker"})[["task", "worker", "label"]]
    data.to_csv(DATA / "crowdkit_ds_input.csv", index=False)
    model = DawidSkene(n_iter=10_000, tol=1e-13).fit(data)
    probas = model.probas_.sort_index()
    probas.columns = [f"p{c}" for c in probas.columns]
    probas.to_csv(DATA / "crowdkit_ds_posteriors.csv", float_format="%.12g")
    print(f"{len(model.loss_history_)} iterations; wrote {len(probas)} posteriors")


if __name__ == "__main__":
    main()
