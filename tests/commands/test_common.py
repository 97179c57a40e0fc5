"""What every command shares (``commands/common.py``): the method flags and their help from the declarations,
``--param`` and shorthand aliases, the seed and prior checks, the rater flags, and the error's option spelled as a
flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stableval.aggregate import REGISTRY
from stableval.cli import app
from stableval.errors import InputError

from command_line import LEVEL_FLAGS, clean_failure, plain, two_item_ratings
from synthetic import LOW_MID_HIGH, small_three_level_table, write_table

runner = CliRunner()


@pytest.mark.parametrize("flag", [["--alpha-pi", "inf"], ["--alpha-mu", "inf"], ["--alpha-pi", "1e308"],
                                  ["--alpha-mu", "1e308"], ["--param", "stableval.alpha_pi=1e300"]])
@pytest.mark.parametrize("command", ["score", "diagnose"])
def test_huge_or_infinite_priors_are_refused(tmp_path: Path, flag: list[str], command: str) -> None:
    """Issue 16: bad input."""
    path = two_item_ratings(tmp_path / "r.csv")
    output = clean_failure(runner.invoke(app, [command, str(path), *LEVEL_FLAGS, *flag]), 2)
    assert flag[0] in output


@pytest.mark.parametrize("command", [["score", "-B", "5"], ["agreement", "-B", "5"], ["stability"]])
def test_negative_seed_is_a_usage_error_naming_seed(tmp_path: Path, command: list[str]) -> None:
    """Issue 16: bad input."""
    path = two_item_ratings(tmp_path / "r.csv")
    output = clean_failure(runner.invoke(app, [command[0], str(path), *LEVEL_FLAGS, *command[1:], "--seed", "-1"]), 2)
    assert "--seed" in output and "--sizes" not in output


def test_help_has_no_bool_type_hints() -> None:
    """Issue 16: bad input."""
    result = runner.invoke(app, ["report", "--help"])
    assert result.exit_code == 0 and "--quick" in result.output and "<bool>" not in result.output


def test_an_input_error_keeps_its_option_through_pickling_and_replace() -> None:
    """Errors raised on Dask workers come back pickled; the loader moves a dataset error to its file: both keep the
    option, so the command line can still spell it as a flag. Issue 16: bad input."""
    import pickle

    from stableval.commands.common import flag_spelling

    error = InputError("rows repeat", file="a.csv", row=3, line=4, column="item", value="q1",
                       allowed="{duplicates} to keep one", options={"duplicates": "first|last"})
    for copy in (pickle.loads(pickle.dumps(error)), error.replace(file="b.csv").replace(file="a.csv")):
        assert str(copy) == str(error) == ("a.csv, row 3 (line 4), column 'item': rows repeat: got 'q1'; allowed: "
                                           "duplicates='first'|'last' to keep one")
        assert copy.spelled(flag_spelling).endswith("allowed: --duplicates first|last to keep one")
        assert (copy.option, copy.options, copy.line) == ("duplicates", {"duplicates": "first|last"}, 4)


@pytest.mark.slow
def test_cli_help_lists_the_rater_flags() -> None:
    for command, flags in (("diagnose", ("--rater-info", "--length-col", "--judge-bootstrap")),
                           ("score", ("--rater-info", "--raters")),
                           ("stability", ("--rater-info", "--raters")), ("report", ("--rater-info", "--length-col"))):
        result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0
        for flag in flags:
            assert flag in result.stdout, (command, flag)


def test_shorthand_flags_read_their_help_from_the_declarations() -> None:
    """The help lists each hyper-parameter with its default (issue 28: STABLEVAL's alpha_pi default is now the
    learnt pooled prior, no longer 1.0)."""
    help_text = plain(runner.invoke(app, ["score", "--help"], env={"COLUMNS": "400"}).output)
    for name, flag in (("alpha_pi", "--alpha-pi"), ("max_iter", "--max-iter"), ("ties", "--ties")):
        option = next(m.param(name) for m in REGISTRY.values() if name in m.estimator.parameter_names())
        assert flag == option.cli and option.help[:60] in help_text, name
    assert "stableval.alpha_pi ('pooled')" in help_text


def test_convergence_warnings_name_python_parameters_and_the_cli_names_flags(tmp_path: Path) -> None:
    """The lower layer states facts in Python names; a command words its flags (issue 25, review F9)."""
    from stableval.aggregate.registry import convergence_warnings

    [python] = convergence_warnings({"stableval-2": {"converged": False, "n_iter": 3}})
    assert "max_iter=N" in python and "alpha_pi=2" in python and "--" not in python
    path = write_table(small_three_level_table(), tmp_path)
    result = runner.invoke(app, ["score", str(path), "--levels", ",".join(LOW_MID_HIGH), "-B", "0", "-m", "ds,glad",
                                 "--max-iter", "1", "-f", "json"])
    warnings = json.loads(result.output)["warnings"]
    assert any("(--max-iter N)" in text and "--alpha-pi 2" in text for text in warnings), warnings


# ---------------------------------------------------------------------------------------------- CLI flags
def test_param_flag_and_shorthand_aliases_reach_the_estimators(tmp_path: Path) -> None:
    path = write_table(small_three_level_table(), tmp_path)
    base = ["score", str(path), "--levels", ",".join(LOW_MID_HIGH), "-B", "0", "-f", "json"]
    result = runner.invoke(app, [*base, "-p", "stableval.alpha_pi=2", "--max-iter", "50", "--ties", "lowest"])
    assert result.exit_code == 0, result.output
    params = json.loads(result.output)["settings"]["params"]
    assert params["stableval"]["alpha_pi"] == 2.0 and params["stableval"]["max_iter"] == 50
    assert params["ds"]["max_iter"] == 50 and params["mv"]["ties"] == "lowest"
    both = runner.invoke(app, [*base, "--alpha-pi", "3", "-p", "stableval.alpha_pi=4"])
    assert json.loads(both.output)["settings"]["params"]["stableval"]["alpha_pi"] == 4.0  # --param wins


@pytest.mark.parametrize(("args", "message"), [
    (["-p", "stableval.alpah_pi=2"], "stableval has no parameter 'alpah_pi'; its parameters: alpha_mu"),
    (["-p", "nope.x=1"], "unknown method 'nope'"),
    (["-p", "alpha_pi=2"], "is not METHOD.NAME=VALUE"),
    (["-p", "stableval.alpha_mu=high"], "stableval.alpha_mu='high': allowed a number ≥ 1"),
    (["-p", "stableval.alpha_pi=high"], "stableval.alpha_pi='high': allowed a number ≥ 1, or one of auto, pooled"),
    (["-m", "mv", "-p", "stableval.alpha_pi=2"], "not among the chosen methods"),
    (["--alpha-pi", "0.5"], "stableval.alpha_pi=0.5: allowed a number ≥ 1"),
    (["--ties", "middle"], "mv.ties='middle': allowed one of split, lowest, highest, random"),
    (["-m", "mv,nope"], "unknown method 'nope'; allowed: mv, ds, stableval"),
])
def test_bad_method_flags_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    path = write_table(small_three_level_table(), tmp_path)
    result = runner.invoke(app, ["score", str(path), "--levels", ",".join(LOW_MID_HIGH), "-B", "0", *args])
    assert result.exit_code == 2, result.output
    assert message in plain(result.output), result.output


def test_recoding_flags_on_every_reading_command(tmp_path: Path) -> None:
    """Issue 31: --merge-levels and --bins are declared once (INPUT_FLAGS) and reach every command that reads
    ratings; the mapping is printed and kept in the JSON; a bad spec is an error naming the flag."""
    import typer

    from stableval.commands.common import INPUT_PROFILES

    assert all({"merge_levels", "bins"} <= set(INPUT_PROFILES[p]) for p in ("ratings", "judgments"))
    group = typer.main.get_command(app)
    readers = [name for name, command in group.commands.items()  # type: ignore[attr-defined]
               if any("--label-col" in p.opts for p in command.params)]
    assert {"score", "stability", "diagnose", "reliability", "report", "agreement"} <= set(readers)
    for name in readers:
        flags = {f for p in group.commands[name].params for f in p.opts}  # type: ignore[attr-defined]
        # pairwise votes have fixed levels; convert takes the dataset loaders' and importers' options
        assert {"--merge-levels", "--bins"} <= flags or name in ("pairwise", "convert"), name
    path = tmp_path / "likert.csv"
    path.write_text("item,agent,rater,label\nq1,A,r1,1\nq1,A,r2,5\nq1,B,r1,3\nq1,B,r2,4\nq2,A,r1,2\nq2,B,r2,4\n")
    table = runner.invoke(app, ["score", str(path), "-B", "5", "--merge-levels", "1,2=low 3=mid 4,5=high"])
    assert table.exit_code == 0, table.output
    assert "levels merged: 1,2 → low; 3 → mid; 4,5 → high" in table.stdout
    out = runner.invoke(app, ["stability", str(path), "--bins", "2.5,3.5", "-f", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["dataset"]["recoding"]["bins"] == [2.5, 3.5]
    bad = runner.invoke(app, ["score", str(path), "--merge-levels", "1,2=low 2=high"])
    assert bad.exit_code == 1 and "--merge-levels" in bad.output and "merged into both" in bad.output
    rel = runner.invoke(app, ["reliability", str(path), "--qc-consensus", "--merge-levels", "1,2=low 3,4,5=high",
                               "-f", "json"])
    assert rel.exit_code == 0, rel.output
    assert json.loads(rel.stdout)["settings"]["recoding"]["merge"]["high"] == ["3", "4", "5"]


@pytest.mark.parametrize("argv", [["score", "-B", "1000000000"], ["agreement", "-B", "2147483648"],
                                  ["report", "--quick", "-B", "1000000000"], ["stability", "-R", "1000000"],
                                  ["score", "--param", "stableval.n_starts=100000"],
                                  ["score", "-m", "mace", "--param", "mace.n_restarts=100000"],
                                  ["score", "-m", "ds", "--max-iter", "1000000000"]])
def test_a_count_a_few_zeros_too_large_is_refused_before_any_work(tmp_path: Path, argv: list[str]) -> None:
    """Issue 26 (E6): replicate, start and iteration counts have a documented bound, checked up front with a usage
    error naming the option and the bound (not a MemoryError traceback or hours of work)."""
    path = two_item_ratings(tmp_path / "r.csv")
    output = clean_failure(runner.invoke(app, [argv[0], str(path), *LEVEL_FLAGS, *argv[1:]]), 2)
    flag = argv[-2] if argv[-2] != "--param" else "--param"
    assert flag in output or {"-B": "--bootstrap", "-R": "--repetitions"}.get(flag, flag) in output
    assert any(bound in output for bound in ("100000", "1000]", "100,000"))


@pytest.mark.parametrize("argv", [["score", "-B", "10000000"], ["agreement", "-B", "10000000"],
                                  ["stability", "-R", "10000000"], ["score", "--param", "stableval.n_starts=100000"],
                                  ["score", "-m", "ds", "--max-iter", "1000000000"]])
def test_a_refused_count_names_its_cost_and_the_override(tmp_path: Path, argv: list[str]) -> None:
    """Issue 26 (E6): the refusal says what was asked would cost (memory of the draws, or how many times the work
    of the limit) and how to run it anyway (STABLEVAL_ALLOW_LARGE=1), not only the bound."""
    path = two_item_ratings(tmp_path / "r.csv")
    output = " ".join(clean_failure(runner.invoke(app, [argv[0], str(path), *LEVEL_FLAGS, *argv[1:]]), 2).split())
    assert "STABLEVAL_ALLOW_LARGE=1" in output and "run it anyway" in output, output
    if "-B" in argv or "-R" in argv:
        assert "10,000,000 replicates would hold 76.3 MiB" in output and "100× as long" in output, output
    else:
        assert "× as long" in output, output


@pytest.mark.parametrize("argv", [["score", "-m", "mv", "-B", "100001"], ["agreement", "-B", "100001"],
                                  ["score", "-m", "ds", "--max-iter", "1000001", "-B", "0"]])
def test_the_override_lifts_the_size_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            argv: list[str]) -> None:
    """Issue 26 (E6): with STABLEVAL_ALLOW_LARGE=1 a count above its bound runs (here just above it, on two
    items, so it stays fast)."""
    path = two_item_ratings(tmp_path / "r.csv")
    monkeypatch.setenv("STABLEVAL_ALLOW_LARGE", "1")
    result = runner.invoke(app, [argv[0], str(path), *LEVEL_FLAGS, *argv[1:], "-f", "json"])
    assert result.exit_code == 0, result.output
    if "-B" in argv and argv[argv.index("-B") + 1] != "0":
        assert json.loads(result.stdout)["settings"]["bootstrap"] == 100001


def test_pairwise_bootstrap_has_the_same_bound(tmp_path: Path) -> None:
    """Issue 26 (E6): ``pairwise -B 1000000000`` was a 44.7 GiB MemoryError."""
    from command_line import renamed_pairwise

    path, flags = renamed_pairwise(tmp_path)
    output = clean_failure(runner.invoke(app, ["pairwise", str(path), *flags[1:], "-B", "1000000000"]), 2)
    assert "--bootstrap" in output and "100000" in output
