"""``stableval medqa`` and ``stableval ddx`` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.datasets.ddx import load_ddx
from stableval.studies.ddx import noisy_predictor

from command_line import clean_failure
from synthetic import certain_ddx_cases

runner = CliRunner()


def test_side_output_onto_a_folder_is_refused_before_reading(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    output = clean_failure(runner.invoke(app, ["ddx", str(tmp_path / "missing.json"), "--certainty-out",
                                               str(tmp_path)]), 2)
    assert "--certainty-out" in output and "is a folder" in output  # refused before the missing input is read


def test_ddx_command(tmp_path: Path) -> None:
    ann, _ = certain_ddx_cases(40, 8, seed=2)
    selectors = [[[[int(c)] for c in [ann.condition[ann.ranking_offsets[r]]]] for r in
                  range(ann.case_offsets[i], ann.case_offsets[i + 1])] for i in range(ann.n_cases)]
    sel = tmp_path / "sel.json"
    sel.write_text(json.dumps(selectors))
    (tmp_path / "dermatology_risks.txt").write_text("\n".join(str(i % 3) for i in range(8)) + "\n")
    (tmp_path / "dermatology_conditions.txt").write_text("\n".join(f"cond{i}" for i in range(8)) + "\n")
    scores = noisy_predictor(load_ddx(sel, conditions=tmp_path / "dermatology_conditions.txt"), 0.5, seed=0)
    np.savetxt(tmp_path / "m.txt", scores, fmt="%.3e")
    np.save(tmp_path / "m2.npy", scores)
    out = runner.invoke(app, ["ddx", str(sel), "-p", f"txt={tmp_path / 'm.txt'}", "-p", str(tmp_path / "m2.npy"),
                              "-B", "20", "--format", "json", "--certainty-out", str(tmp_path / "cert.csv")])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    rows = {(r["model"], r["k"], r["risk"]): r["accuracy"] for r in payload["accuracy"]}
    assert rows[("txt", 1, "all")] == rows[("m2", 1, "all")]
    assert ("m2", 5, "high") in rows and (tmp_path / "cert.csv").exists()
    table = runner.invoke(app, ["ddx", str(sel), "-B", "20", "--least-certain", "3"])
    assert table.exit_code == 0 and "annotation certainty only" in table.stdout
    np.savetxt(tmp_path / "short.txt", scores[:5])
    bad = runner.invoke(app, ["ddx", str(sel), "-p", str(tmp_path / "short.txt")])
    assert bad.exit_code == 1 and "wrong shape" in bad.output
    usage = runner.invoke(app, ["ddx", str(sel), "--top-k", "0"])
    assert usage.exit_code == 2


def test_medqa_command(medqa_csv: Path, tmp_path: Path) -> None:
    preds = tmp_path / "answers.csv"
    preds.write_text("qid,answer\n1,A\n2,a\n3,A\n4,A\n5,A\n6,A\n")
    plot = tmp_path / "medqa.png"
    out = runner.invoke(app, ["medqa", str(medqa_csv), "-p", f"constA={preds}", "-B", "200", "--plot", str(plot),
                              "--format", "json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    none = next(r for r in payload["accuracy"] if r["filter"] == "none")
    assert none["model"] == "constA" and none["accuracy"] == pytest.approx(2 / 6)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = runner.invoke(app, ["medqa", str(medqa_csv), "-B", "50"])
    assert table.exit_code == 0 and "exclusion shares only" in table.stdout
    csv_out = runner.invoke(app, ["medqa", str(medqa_csv), "-p", str(preds), "-B", "50", "-f", "csv"])
    assert csv_out.stdout.splitlines()[0] == "metric,model,filter,mean,ci_low,ci_high"
    preds.write_text("qid,answer\n1,A\n")
    missing = runner.invoke(app, ["medqa", str(medqa_csv), "-p", str(preds)])
    assert missing.exit_code == 1 and "no answer for 5 of 6 questions" in missing.output
    preds.write_text("qid,answer\n1,E\n")
    bad = runner.invoke(app, ["medqa", str(medqa_csv), "-p", str(preds)])
    assert bad.exit_code == 1 and "answers.csv, row 1" in bad.output and "'E'" in bad.output


def _certain_selectors(tmp_path: Path) -> Path:
    ann, _ = certain_ddx_cases(30, 6, seed=2)
    selectors = [[[[int(c)] for c in [ann.condition[ann.ranking_offsets[r]]]] for r in
                  range(ann.case_offsets[i], ann.case_offsets[i + 1])] for i in range(ann.n_cases)]
    sel = tmp_path / "sel.json"
    sel.write_text(json.dumps(selectors))
    return sel


def test_ddx_method_choices_come_from_the_ranking_registry(tmp_path: Path) -> None:
    """Issue 29: every registered ranking method runs through ``stableval ddx --method``; the plausibility CSV."""
    from stableval.aggregate.rankings import ranking_method_names

    sel = _certain_selectors(tmp_path)
    for name in ranking_method_names():
        out = runner.invoke(app, ["ddx", str(sel), "--method", name, "-B", "5", "--format", "json",
                                  "--plausibility-out", str(tmp_path / f"{name}.csv")])
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout)["settings"]["method"] == name
        assert list(np.genfromtxt(tmp_path / f"{name}.csv", delimiter=",", dtype=str, max_rows=1)) == [
            "case", "rank", "condition", "plausibility"]
    assert runner.invoke(app, ["ddx", str(sel), "--method", "nope"]).exit_code == 2


def test_ddx_compare_methods_and_conformal(tmp_path: Path) -> None:
    sel = _certain_selectors(tmp_path)
    out = runner.invoke(app, ["ddx", str(sel), "--compare-methods", "irn,pl", "-B", "5", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert [row["method"] for row in json.loads(out.stdout)["methods"]] == ["irn", "pl"]
    bad = runner.invoke(app, ["ddx", str(sel), "--compare-methods", "irn,nope"])
    assert bad.exit_code == 2 and "unknown ranking method" in bad.output
    sets = runner.invoke(app, ["ddx", str(sel), "--conformal", "0.2", "--sets-out", str(tmp_path / "sets.csv")])
    assert sets.exit_code == 0, sets.output
    assert "coverage" in sets.stdout and (tmp_path / "sets.csv").exists()
    assert runner.invoke(app, ["ddx", str(sel), "--conformal", "1"]).exit_code == 2


def test_ddx_ranking_param_reaches_the_method(tmp_path: Path) -> None:
    """Issue 29: ``--ranking-param`` sets a ranking method's hyper-parameter on ``ddx`` as the API's ``params``
    does (same plausibility), and a value that changes it changes the plausibility."""
    from stableval.studies.ddx import evaluate_ddx

    sel = _certain_selectors(tmp_path)
    plausibility = {}
    for shape in ("1", "2"):
        target = tmp_path / f"pl{shape}.csv"
        out = runner.invoke(app, ["ddx", str(sel), "--method", "pl", "--ranking-param", f"pl.prior_shape={shape}",
                                  "-B", "5", "--format", "json", "--plausibility-out", str(target)])
        assert out.exit_code == 0, out.output
        plausibility[shape] = pd.read_csv(target)["plausibility"].to_numpy(float)
    assert len(plausibility["1"]) == 30 and len(plausibility["2"]) == 150  # ML: one certain condition per case
    api = evaluate_ddx(load_ddx(sel), method="pl", params={"pl": {"prior_shape": 1.0}}, n_draws=5)
    frame = api.plausibility_frame()
    assert np.allclose(frame["plausibility"].to_numpy(float), plausibility["1"], atol=5e-4)  # CSV rounding
    compared = runner.invoke(app, ["ddx", str(sel), "--compare-methods", "irn,pl", "--ranking-param",
                                   "pl.prior_shape=1", "-B", "5", "--format", "json"])
    assert compared.exit_code == 0, compared.output


@pytest.mark.parametrize(("flags", "says"), [
    (["--ranking-param", "pl.prior_shape=0.5", "--method", "pl"], "a number ≥ 1"),
    (["--ranking-param", "pl.prior_shape=3"], "not among the chosen ranking methods (irn)"),
    (["--ranking-param", "pl.prior_shape=3", "--compare-methods", "irn,borda"], "not among the chosen"),
    (["--ranking-param", "pl.shape=3", "--method", "pl"], "pl has no parameter 'shape'"),
    (["--ranking-param", "prior_shape=3", "--method", "pl"], "expected METHOD.NAME=VALUE"),
    (["--ranking-param", "bayes-pl.samples=50", "--method", "bayes-pl"], "set it with n_draws (--draws)"),
])
def test_ddx_ranking_param_usage_errors(tmp_path: Path, flags: list[str], says: str) -> None:
    """Issue 29: a bad, unknown or unused ranking parameter is a usage error naming the flag, never ignored."""
    output = clean_failure(runner.invoke(app, ["ddx", str(_certain_selectors(tmp_path)), "-B", "5", *flags]), 2)
    assert "--ranking-param" in output and says in " ".join(output.split())


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_medqa_per_question_file(medqa_csv: Path, tmp_path: Path, suffix: str) -> None:
    """Issue 31: --per-question writes one row per question in the format its suffix names."""
    from stableval.data.files import read_table_file
    from stableval.studies.medqa import PER_QUESTION_COLUMNS

    target = tmp_path / "out" / f"questions{suffix}"
    out = runner.invoke(app, ["medqa", str(medqa_csv), "-B", "50", "--per-question", str(target)])
    assert out.exit_code == 0, out.output
    frame = read_table_file(target)
    assert tuple(frame.columns) == PER_QUESTION_COLUMNS and len(frame) == 6
    assert frame["excluded_p"].astype(float).tolist()[1:4] == [1.0, 1.0, 1.0]


def test_medqa_reason_two_step_and_refusals(medqa_csv: Path, tmp_path: Path) -> None:
    """Issue 31: --reason chooses the missing-information column, --two-step adds its tables and plot; a bad
    --reason or --per-question suffix is a usage error before any work."""
    plot = tmp_path / "two.png"
    out = runner.invoke(app, ["medqa", str(medqa_csv), "-B", "20", "--reason", "info_missing", "--two-step-plot",
                              str(plot), "-f", "json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["settings"]["reason"] == "info_missing"
    assert [r["ratings"] for r in payload["two_step"]["changes"]] == [11, 0, 7, 1, 19]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = runner.invoke(app, ["medqa", str(medqa_csv), "-B", "20", "--two-step"])
    assert "Two-step design" in table.stdout and "rater pairs with identical answers" in table.stdout
    bad = clean_failure(runner.invoke(app, ["medqa", str(medqa_csv), "--reason", "missing"]), 2)
    assert "--reason" in bad and "important_info_missing, info_missing" in bad
    suffix = clean_failure(runner.invoke(app, ["medqa", str(medqa_csv), "--per-question", str(tmp_path / "q.txt")]),
                           2)
    assert "--per-question" in suffix and ".parquet" in suffix
