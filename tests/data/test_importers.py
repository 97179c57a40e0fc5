"""Issue 32: the importers are one declaration each (:data:`stableval.data.importers.IMPORTERS`), from which
``--from`` on every ratings command, ``stableval convert NAME`` and the docs table follow; the options an importer
cannot use are refused by name; converted exports score as they are."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

import stableval
from stableval import InputError, InputOptions
from stableval.cli import app
from stableval.data.importers import IMPORTERS

from paths import REPO

runner = CliRunner()
#: The commands that read ratings (``--from`` with any importer) or pairwise votes only.
RATINGS_COMMANDS = ("score", "stability", "diagnose", "agreement", "report", "plot")


def battles(path: Path) -> Path:
    path.write_text(json.dumps([
        {"question_id": f"q{k}", "model_a": a, "model_b": b, "winner": w, "judge": f"u{k % 3}"}
        for k, (a, b, w) in enumerate([("A", "B", "model_a"), ("B", "C", "tie"), ("C", "A", "model_b"),
                                       ("A", "C", "model_a"), ("B", "A", "tie (bothbad)")])]))
    return path


def single_judgments(path: Path) -> Path:
    lines = [{"question_id": q, "model": model, "judge": [judge, "single-v1"], "score": score, "turn": 1}
             for q, scores in [(81, (9, 4)), (82, (8, 3)), (83, (7, -1))]
             for judge in ("gpt-4", "claude-v1") for model, score in zip(("vicuna", "llama"), scores, strict=True)]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path


def command(name: str) -> Any:
    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]


# ====================================================================================== one declaration each
def test_every_importer_has_a_row_in_the_docs_table() -> None:
    text = (REPO / "docs" / "importers.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([\w-]+)` \|", text, flags=re.MULTILINE))
    assert rows == set(IMPORTERS), f"docs/importers.md table rows {sorted(rows)} != importers {sorted(IMPORTERS)}"
    for importer in IMPORTERS.values():
        assert importer.reader.startswith("stableval.data.importers.") and importer.tool and importer.left_out


def test_every_ratings_command_takes_from_and_lists_every_importer() -> None:
    for name in (*RATINGS_COMMANDS, "pairwise"):
        options = {opt: param for param in command(name).params for opt in param.opts}
        assert "--from" in options, f"stableval {name} has no --from"
        assert all(importer in str(options["--from"].help) for importer in IMPORTERS)


def test_convert_takes_every_importer_and_the_names_do_not_collide_with_datasets() -> None:
    from stableval.commands.convert import DATASET_NAMES, IMPORTER_NAMES

    assert IMPORTER_NAMES == tuple(IMPORTERS) and not set(IMPORTER_NAMES) & set(DATASET_NAMES)
    name = next(param for param in command("convert").params if param.name == "name")
    assert all(importer in str(name.help) for importer in IMPORTERS)


def test_an_unknown_importer_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", "--from", "labelstudio", str(battles(tmp_path / "b.json"))])
    assert result.exit_code == 2 and "label-studio" in result.output
    with pytest.raises(InputError, match="unknown importer") as error:
        stableval.load(tmp_path / "b.json", InputOptions(importer="labelstudio"))
    assert error.value.option == "importer"


# ====================================================================================== options
def test_an_importer_refuses_the_options_it_cannot_use(tmp_path: Path) -> None:
    path = battles(tmp_path / "b.json")
    with pytest.raises(InputError, match="does not take") as error:
        stableval.load(path, InputOptions(importer="arena", levels="bad,good"))
    assert error.value.option == "levels"
    result = runner.invoke(app, ["score", "--from", "arena", str(path), "--agent-col", "model", "-B", "0"])
    assert result.exit_code == 1 and "does not take --agent-col" in result.output
    result = runner.invoke(app, ["score", "--from", "arena", str(path), "--input-format", "csv", "-B", "0"])
    assert result.exit_code == 1 and "--input-format" in result.output


def test_a_votes_command_refuses_an_export_of_ratings(tmp_path: Path) -> None:
    path = single_judgments(tmp_path / "gpt-4_single.jsonl")
    result = runner.invoke(app, ["pairwise", "--from", "mt-bench-judge", str(path)])
    assert result.exit_code == 1 and "gives ratings, not pairwise votes" in result.output


def test_the_dask_executor_refuses_an_export(tmp_path: Path) -> None:
    from stableval.commands.common import read_partitioned

    with pytest.raises(typer.BadParameter, match="convert it first with stableval convert arena"):
        read_partitioned(tmp_path / "b.json", InputOptions(importer="arena"), client=None)


def test_everything_left_out_is_an_error_with_the_counts(tmp_path: Path) -> None:
    path = tmp_path / "gpt-4_single.jsonl"
    path.write_text(json.dumps({"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"], "score": -1,
                                "turn": 1}))
    with pytest.raises(InputError, match=r"nothing to read.*scored -1"):
        stableval.load(path, InputOptions(importer="mt-bench-judge"))


# ====================================================================================== every ratings command
@pytest.mark.parametrize("name", RATINGS_COMMANDS)
def test_every_ratings_command_reads_an_export(tmp_path: Path, name: str) -> None:
    path = battles(tmp_path / "clean_battle.json")
    extra = {"score": ["-B", "0"], "stability": ["--sizes", "2", "--repetitions", "3"], "diagnose": [],
             "agreement": [], "report": ["--quick", "--bootstrap", "5", "-o", str(tmp_path / "r.html")],
             "plot": ["ratings", "-o", str(tmp_path / "fig.png"), "--bootstrap", "5"]}[name]
    args = [name, *(extra[:1] if name == "plot" else []), "--from", "arena", str(path),
            *(extra[1:] if name == "plot" else extra)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output


# ====================================================================================== convert
def test_convert_writes_rater_kinds_and_the_file_scores_as_it_is(tmp_path: Path) -> None:
    out = tmp_path / "judged.csv"
    result = runner.invoke(app, ["convert", "mt-bench-judge", str(single_judgments(tmp_path / "s.jsonl")), "-o",
                                 str(out)])
    assert result.exit_code == 0, result.output
    assert "left out 2 judgment(s) scored -1" in result.output and "rater kinds: llm" in result.output
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["item", "agent", "rater", "label", "rater_kind"]
    assert set(frame["rater_kind"]) == {"llm"} and len(frame) == 10
    command_line = result.output.split("score it: ")[1].split()
    scored = runner.invoke(app, [*command_line[1:], "--raters", "llm", "-B", "0"])
    assert scored.exit_code == 0, scored.output


def test_convert_votes_are_read_back_by_pairwise(tmp_path: Path) -> None:
    out = tmp_path / "votes.parquet"
    result = runner.invoke(app, ["convert", "arena", str(battles(tmp_path / "b.json")), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "1 both-bad vote(s)" in result.output and "stableval pairwise" in result.output
    assert stableval.read_pairwise(out).n_votes == 5
    assert runner.invoke(app, ["pairwise", str(out), "-B", "0", "--prior", "1"]).exit_code == 0


def test_convert_refuses_dataset_options_for_an_importer_and_importer_flags_for_a_dataset(tmp_path: Path) -> None:
    path = battles(tmp_path / "b.json")
    result = runner.invoke(app, ["convert", "arena", str(path), "-o", str(tmp_path / "o.csv"), "--turns", "1"])
    assert result.exit_code == 2 and "arena takes no --turns" in result.output
    result = runner.invoke(app, ["convert", "qags", str(tmp_path), "-o", str(tmp_path / "o.csv"), "--label-col",
                                 "x"])
    assert result.exit_code == 2 and "qags takes no --label-col" in result.output and "importers" in result.output
