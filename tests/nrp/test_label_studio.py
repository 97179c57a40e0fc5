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


# ------------------------------------------------------------------------------------------ malformed input
def _agree(*paths: Path) -> str:
    """``nrp agree`` on ``paths``: it must fail cleanly with exit 1; the message, whitespace collapsed."""
    from command_line import clean_failure

    result = CliRunner().invoke(app, ["nrp", "agree", *map(str, paths)])
    return clean_failure(result, 1)


@pytest.mark.parametrize(("export", "where", "value"), [
    (b'[{"id":1,"data":{"items":["d1","d2"]}}]', "row 1, column 'data.items'", "'d1'"),
    (b'[{"id":1,"data":"text"}]', "row 1, column 'data'", "'text'"),
    (b'[{"id":1,"data":{"items":[{"id":"d1"}]},"annotations":["done"]}]', "row 1, column 'annotations'", "'done'"),
    (b'[{"id":1,"data":{"items":[{"id":"d1"}]},"annotations":"done"}]', "row 1, column 'annotations'", "'done'"),
    (b'[{"id":1,"data":{"items":[{"id":"d1"}]},"annotations":[{"result":["x"]}]}]',
     "row 1, column 'annotations.result'", "'x'"),
    (b'[{"id":1,"data":{"items":[{"id":"d1"}]},"annotations":[{"result":[{"value":{"ranker":{"rank":"d1"}}}]}]}]',
     "row 1, column 'annotations.result.value.ranker'", "'d1'"),
    (b'[{"id":1,"data":{"items":[{"id":"d1","score":[1]},{"id":"d2","score":0.9}]},"annotations":[{"completed_by":1,'
     b'"result":[{"type":"ranker","value":{"ranker":{"rank":["d2","d1"]}}}]}]}]', "row 1, column 'data.items.score'",
     "[1]"),
    (b'[{"id":1,"data":{"items":[{"id":"d1","score":"Infinity"}]},"annotations":[{"completed_by":1,'
     b'"result":[{"type":"ranker","value":{"ranker":{"rank":["d1"]}}}]}]}]', "row 1, column 'data.items.score'",
     "'Infinity'"),
    (b'[{"id":1,"data":{"query":"caf\xe9","items":[{"id":"d1"}]}}]', "export.json", "not UTF-8"),
])
def test_malformed_exports_name_the_task_and_field(tmp_path: Path, export: bytes, where: str, value: str) -> None:
    """Issue 26 E1: a malformed Label Studio export (items or annotations that are not objects, a score that is
    not a finite number, Latin-1 text) stops with exit 1 naming the file, the task (row), the field and the value,
    never a traceback."""
    path = tmp_path / "export.json"
    path.write_bytes(export)
    message = _agree(path)
    assert str(path) in message and where in message and value in message, message


@pytest.mark.parametrize(("expert", "rankings", "where", "value"), [
    (b"qid,item,rank\nq1,d1,1\nq1,d2,inf\n", None, "expert.csv, row 2 (line 3), column 'rank'", "'inf'"),
    (b"qid,item,rank\nq1,d1,1\nq1,d2,1.5\n", None, "expert.csv, row 2 (line 3), column 'rank'", "'1.5'"),
    (b"qid,item,rank\nq1,d1,1\nq1,d2,2\n", b"q1 Q0 d1 1 high run\n", "run.txt, row 1, column 'score'",
     "'high'"),
    (b"qid,item,rank\nq1,d1,1\nq1,d2,2\n", b"q1 Q0 d1 1 0.9 run\nq1 Q0 d2 2 nan run\n",
     "run.txt, row 2, column 'score'", "'nan'"),
    (b"qid,item,rank\nq1,d1,1\nq1,d2,2\n", b"q1 Q0 d1 1 0.9 run\nq1 Q0 d2 2 0.5 caf\xe9\n", "run.txt", "not UTF-8"),
    (b"qid,item,rank\nq1,d1,1\nq1,d2,2\n", b"qid,docno,score\nq1,d1,0.5\nq1,d2,-inf\n",
     "run.csv, row 2 (line 3), column 'score'", "'-inf'"),
])
def test_malformed_expert_and_system_tables_name_the_line(tmp_path: Path, expert: bytes, rankings: bytes | None,
                                                           where: str, value: str) -> None:
    """Issue 26 E1: a rank or score that is not a finite number (or a rank that is not a whole number), and a run
    file that is not UTF-8, stop with exit 1 naming the file, the row and line, the column and the value as
    written."""
    (tmp_path / "expert.csv").write_bytes(expert)
    paths = [tmp_path / "expert.csv"]
    if rankings is not None:
        paths.append(tmp_path / ("run.txt" if not rankings.startswith(b"qid,") else "run.csv"))
        paths[-1].write_bytes(rankings)
    message = _agree(*paths)
    assert where in message and value in message, message
