"""Issue 32: the Inspect importer on small files built here the way the tool writes them (its
documented export format): what it leaves out is counted; its errors name the file, record, field and value."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from stableval import InputError
from stableval.cli import app

from importer_files import load, runner, write_json


def inspect_log(model: str, scores: list[dict[str, Any]], task: str = "security_guide") -> dict[str, Any]:
    samples = []
    for k, score in enumerate(scores, start=1):
        sample: dict[str, Any] = {"id": k, "epoch": 1, "input": "...", "target": "...", "messages": [],
                                  "output": {"model": model, "choices": []}, "metadata": {}}
        if score:
            sample["scores"] = {name: {"value": value, "answer": "...", "explanation": "..."}
                                for name, value in score.items()}
        else:
            sample["scores"] = {}
            sample["error"] = {"message": "RateLimitError", "traceback": "..."}
        samples.append(sample)
    return {"version": 2, "status": "success",
            "eval": {"run_id": "abc", "created": "2024-05-29T12:38:35", "task": task, "task_id": "t1",
                     "task_version": 0, "model": model, "dataset": {"name": "security_guide", "samples": len(scores)}},
            "plan": {"name": "plan", "steps": []}, "results": {"total_samples": len(scores), "scores": []},
            "stats": {}, "samples": samples}


def eval_zip(path: Path, log: dict[str, Any]) -> Path:
    """An ``.eval`` log as Inspect's eval recorder writes it: start.json, samples/<id>_epoch_<n>.json, results."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("start.json", json.dumps({"version": 2, "eval": log["eval"], "plan": log["plan"]}))
        for sample in log["samples"]:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        archive.writestr("results.json", json.dumps({"status": "success", "stats": {}, "results": log["results"]}))
    return path


def test_inspect_logs_json_and_eval_in_a_folder(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write_json(logs / "2024-05-29T12-38-35_security-guide_gpt-4o.json", inspect_log("openai/gpt-4o", [
        {"match": "C", "model_graded_fact": "C"}, {"match": "I", "model_graded_fact": "P"}, {}]))
    eval_zip(logs / "2024-05-29T13-01-02_security-guide_claude.eval", inspect_log("anthropic/claude-3-5-sonnet", [
        {"match": "C", "model_graded_fact": "C"}, {"match": "C", "model_graded_fact": {"a": 1}}]))
    write_json(logs / "logs.json", {"index": "of the log viewer"})
    loaded = load(logs, "inspect-ai")
    table = loaded.table
    assert table.levels == ("I", "P", "C") and list(table.credit) == [0.0, 0.5, 1.0]
    assert set(table.agents) == {"openai/gpt-4o", "anthropic/claude-3-5-sonnet"}
    assert set(table.raters) == {"match", "model_graded_fact"} and table.n_judgments == 7
    notes = "\n".join(table.notes)
    assert "left out 1 sample(s) that ended in an error" in notes
    assert "left out 1 score(s) that are not one value" in notes
    one = load(logs, "inspect-ai", columns={"label": "match"}).table
    assert set(one.raters) == {"match"} and one.n_judgments == 4
    result = runner.invoke(app, ["score", "--from", "inspect-ai", str(logs), "--raters", "llm", "-B", "0"])
    assert result.exit_code == 0, result.output


def test_inspect_numeric_scores_and_unknown_scorer(tmp_path: Path) -> None:
    path = write_json(tmp_path / "log.json", inspect_log("m", [{"f1": 0.5}, {"f1": 1.0}, {"f1": "C"}, {"f1": False}]))
    table = load(path, "inspect-ai").table
    assert table.levels == ("0", "0.5", "1") and list(table.credit) == [0.0, 0.5, 1.0]
    assert sorted(table.to_frame()["label"].tolist()) == ["0", "0.5", "1", "1"]
    with pytest.raises(InputError, match="no scorer 'bleu'") as error:
        load(path, "inspect-ai", columns={"label": "bleu"})
    assert error.value.option == "columns.label" and error.value.allowed == "f1"
