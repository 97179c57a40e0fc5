"""``stableval reliability``: NVIDIA's toy example, QC by rater, by file and by consensus, output formats and
errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.datasets.judgments import read_judgments

from paths import RELIABILITY_FLAGS, nvidia_toy_files

runner = CliRunner()


# ------------------------------------------------------------------ CLI
def test_cli_toy_table_and_plot(tmp_path: Path) -> None:
    data, _ = nvidia_toy_files()
    plot = tmp_path / "rel.png"
    result = runner.invoke(app, ["reliability", str(data), "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "Overall reliability across all evaluators: 62.96% (34/54)" in result.output
    assert "flagged as non-ratable by QC: 0.00%" in result.output
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_cli_qc_rater_json_and_csv(tmp_path: Path) -> None:
    result = runner.invoke(app, ["reliability", str(RELIABILITY_FLAGS), "--qc-rater", "qc", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["overall"]["correct"] == 4 and payload["settings"]["qc"] == "rater"
    result = runner.invoke(app, ["reliability", str(RELIABILITY_FLAGS), "--qc", "consensus", "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith("evaluator,reliability,correct,applicable")
    assert result.output.splitlines()[-1].startswith("Overall,")


def test_cli_qc_file(tmp_path: Path) -> None:
    gold = tmp_path / "gold.csv"
    gold.write_text("item,label,flag\ni1,A,no\ni2,B,no\ni3,,yes\ni4,A,no\ni5,C,no\n")
    frame = read_judgments(RELIABILITY_FLAGS)
    ratings = tmp_path / "ratings.csv"
    frame.loc[frame["rater"] != "qc"].assign(flag=lambda f: f["flag"].map({True: "yes", False: "no"}),
                                             skip=lambda f: f["skip"].map({True: "yes", False: "no"})) \
        .drop(columns=["agent", "qc", "row"]).to_csv(ratings, index=False)
    result = runner.invoke(app, ["reliability", str(ratings), "--qc-file", str(gold), "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["overall"]["correct"] == 4                # same as --qc-rater qc


def test_cli_usage_and_input_errors(tmp_path: Path) -> None:
    result = runner.invoke(app, ["reliability", str(RELIABILITY_FLAGS)])
    assert result.exit_code == 2 and "--qc" in result.output
    result = runner.invoke(app, ["reliability", str(RELIABILITY_FLAGS), "--qc-rater", "qc", "--qc", "consensus"])
    assert result.exit_code == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("item,rater,label,flag\nq1,r1,A,perhaps\n")
    result = runner.invoke(app, ["reliability", str(bad), "--qc", "consensus"])
    assert result.exit_code == 1 and "'perhaps'" in result.output


@pytest.mark.slow
def test_qc_consensus_is_one_flag_in_both_commands_and_qc_consensus_its_alias() -> None:
    """Issue 25: ``reliability --qc consensus`` and ``report --qc-consensus`` named one concept two ways; both
    commands now declare the same QC flags (``--qc-consensus``), and ``--qc consensus`` is an alias saying so."""
    from stableval.commands.common import QC_FLAGS

    for command in ("reliability", "report"):
        help_text = " ".join(runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output.split())
        assert "--qc-consensus" in help_text and "Alias of --qc-consensus" in help_text
        assert all(name in help_text for name in ("--qc-rater", "--qc-file"))
    assert set(QC_FLAGS) == {"qc_rater", "qc_file", "qc_consensus", "qc_alias"}
    new = runner.invoke(app, ["reliability", str(RELIABILITY_FLAGS), "--qc-consensus", "-f", "csv"])
    old = runner.invoke(app, ["reliability", str(RELIABILITY_FLAGS), "--qc", "consensus", "-f", "csv"])
    assert new.exit_code == old.exit_code == 0 and new.output == old.output
    both = runner.invoke(app, ["reliability", str(RELIABILITY_FLAGS), "--qc-file", str(RELIABILITY_FLAGS),
                               "--qc-consensus"])
    assert both.exit_code == 2 and "give one QC source, not --qc-file and --qc-consensus" in " ".join(
        part for part in both.output.replace("│", " ").split())


def test_flag_reasons_breakdown(tmp_path: Path) -> None:
    """Issue 31: --flag-reasons breaks the flags down by reason per evaluator, in the table and the JSON; with QC
    as a consensus it is refused (QC has no flags of its own there)."""
    path = tmp_path / "judgments.csv"
    path.write_text("item,rater,label,flag,why\n"
                    "i1,lead,,yes,PII\ni1,a,,yes,PII\ni2,lead,,yes,medical advice\ni2,a,B,no,\n"
                    "i3,lead,A,no,\ni3,a,A,no,\n")
    args = ["reliability", str(path), "--qc-rater", "lead", "--flag-reason-col", "why", "--flag-reasons"]
    table = runner.invoke(app, args)
    assert table.exit_code == 0, table.output
    assert "Flags by reason" in table.stdout and "medical advice" in table.stdout
    payload = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    rows = {(r["evaluator"], r["reason"]): r for r in payload["flags_by_reason"]}
    assert rows[("a", "PII")]["both"] == 1 and rows[("a", "medical advice")]["missed"] == 1
    refused = runner.invoke(app, ["reliability", str(path), "--qc-consensus", "--flag-reasons"])
    assert refused.exit_code == 2 and "--flag-reasons" in refused.output


def test_reliability_reads_the_bundled_pairwise_votes() -> None:
    """Issue 27: the bundled example (pairwise votes) was refused with "no label column"; each comparison is now a
    unit and a vote's label the preferred agent, as every other reading command reads votes."""
    import stableval

    example = str(stableval.example_path("mt_bench"))
    result = runner.invoke(app, ["reliability", example, "--qc-consensus", "--duplicates", "last", "-f", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["evaluators"]
    assert len(rows) == 65 and all(0 <= row["reliability"] <= 1 for row in rows if row["reliability"] is not None)
    repeated = runner.invoke(app, ["reliability", example, "--qc-consensus"])
    assert repeated.exit_code == 1 and "--duplicates first|last keeps one" in " ".join(repeated.output.split())


def test_help_offers_only_the_duplicate_policies_reliability_takes() -> None:
    """Issue 27: --help offered --duplicates keep, which reliability then refused."""
    help_text = runner.invoke(app, ["reliability", "--help"], terminal_width=200).output
    assert "error|first|last" in help_text and "keep]" not in help_text and "|keep" not in help_text
    data, _ = nvidia_toy_files()
    result = runner.invoke(app, ["reliability", str(data), "--duplicates", "keep"])
    assert result.exit_code == 2 and "'keep' is not one of" in result.output


def test_the_few_items_note_lists_evaluators_by_name_not_row_order(tmp_path: Path) -> None:
    """Issue 26 (oracle: shuffled rows): the note named the evaluators in the order their rows came."""
    rows = "item,rater,label\n" + "".join(f"q{i},{r},1\n" for r in ("zed", "amy", "kim") for i in range(3))
    path = tmp_path / "r.csv"
    path.write_text(rows)
    result = CliRunner().invoke(app, ["reliability", str(path), "--qc-consensus"])
    assert result.exit_code == 0, result.output
    assert "amy, kim, zed" in result.output
