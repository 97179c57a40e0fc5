"""Issue 32: the AlpacaEval importer on small files built here the way the tool writes them (its
documented export format): what it leaves out is counted; its errors name the file, record, field and value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stableval import InputError
from stableval.cli import app

from importer_files import load, runner, write_json


def alpaca_rows(model: str, preferences: list[Any]) -> list[dict[str, Any]]:
    instructions = ["How did US states get their names?", "What is a haiku?", "Name three primes.",
                    "Explain recursion."]
    return [{"instruction": instruction, "output_1": "...", "generator_1": "gpt4_1106_preview",
             "dataset": "helpful_base", "output_2": "...", "generator_2": model,
             "annotator": "weighted_alpaca_eval_gpt4_turbo", "preference": preference,
             "price_per_example": 0.0133, "time_per_example": 1.2,
             "raw_completion": {"concise_explanation": "...", "ordered_models": [{"model": "M", "rank": 1}]}}
            for instruction, preference in zip(instructions, preferences, strict=False)]


def test_alpaca_eval_results_folder_gives_llm_votes(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_json(results / "model-a" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json",
               alpaca_rows("model-a", [1.93, 1.0, None, 1.5]))
    write_json(results / "model-b" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json",
               alpaca_rows("model-b", [1.12, 2.0, 1.61, 0]))
    loaded = load(results, "alpaca-eval")
    assert loaded.votes is not None
    assert loaded.votes.frame["winner"].tolist() == ["b", "a", "tie", "a", "b", "b", "tie"]
    notes = "\n".join(loaded.votes.notes)
    assert "3 fractional preference(s) counted as a win of the side they lean to" in notes
    assert "left out 1 annotation(s) without a preference" in notes
    result = runner.invoke(app, ["score", "--from", "alpaca-eval", str(results), "--raters", "llm", "-B", "0"])
    assert result.exit_code == 0, result.output
    assert "raters: llm only" in result.output


def test_alpaca_eval_preference_out_of_range(tmp_path: Path) -> None:
    path = write_json(tmp_path / "annotations.json", alpaca_rows("m", [1.2, 3.5]))
    with pytest.raises(InputError) as error:
        load(path, "alpaca-eval")
    assert (error.value.row, error.value.column, error.value.value) == (2, "preference", 3.5)
