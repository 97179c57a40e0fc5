"""Expert rankings through a Label Studio export and back."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau
from typer.testing import CliRunner

from stableval.cli import app
from stableval.nrp.label_studio import read_label_studio
from stableval.nrp.rankers import make_ranker
from stableval.nrp.study import build_study, label_studio_tasks, write_label_studio_tasks


def test_label_studio_round_trip(study_data, tmp_path: Path) -> None:
    collection, answers = study_data
    study = build_study(collection, answers, make_ranker("bm25"), topics=4)
    tasks = json.loads(write_label_studio_tasks(study, tmp_path / "tasks.json").read_text(encoding="utf-8"))
    assert tasks == label_studio_tasks(study) and len(tasks) == 4
    assert [item["title"] for item in tasks[0]["data"]["items"]] == [f"Text {i}" for i in range(1, 6)]
    # what Label Studio exports after an expert ranked every task (ids given by Label Studio; best first)
    for number, task in enumerate(tasks, start=1):
        ranking = sorted(task["data"]["items"], key=lambda item: -item["score"])
        task["id"] = 100 + number
        task["annotations"] = [{"completed_by": 7, "was_cancelled": False, "result": [
            {"from_name": "rank", "to_name": "results", "type": "ranker",
             "value": {"ranker": {"rank": [item["id"] for item in ranking]}}}]}]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks), encoding="utf-8")
    frame = read_label_studio(export).frame
    assert len(frame) == 20 and set(frame["annotator"]) == {"7"}
    merged = frame.merge(study.items, on="item")
    assert np.allclose(merged["score_x"], merged["score_y"])
    # the simulated expert ranked by score: the system ranks (ties share the best rank) agree
    assert (merged["system_rank"] == merged.groupby("task")["score_x"].rank(ascending=False, method="min")).all()
    assert (merged["query_x"] == merged["query_y"]).all()
    agree = CliRunner().invoke(app, ["nrp", "agree", str(export), "--format", "csv"])
    assert agree.exit_code == 0, agree.output
    tau = pd.read_csv(io.StringIO(agree.output)).set_index("measure")["mean"]["Kendall tau-b"]
    expected = np.mean([kendalltau(-part["rank"], part["score_x"]).statistic for _, part in merged.groupby("task")])
    assert tau == pytest.approx(expected) and 0.9 < tau <= 1.0  # < 1 only where the ranker tied two items
