"""Issue 32: the package as a user installs it: the version written once, the files the code loads shipped as
package data, extras that install on a normal machine, the supported Pythons stated, and the scripts that
``make wheel-check`` runs (``scripts/check_wheel.py``, ``scripts/label_studio_example.py``)."""

from __future__ import annotations

import doctest
import fnmatch
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from typer.testing import CliRunner

import stableval
from stableval.cli import app

from paths import REPO, script

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_written_once() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "stableval._version.__version__"}
    done = subprocess.run([sys.executable, "-m", "stableval", "--version"], capture_output=True, text=True)
    assert done.stdout.strip() == f"stableval {stableval.__version__}"
    assert (REPO / "CHANGELOG.md").read_text(encoding="utf-8").startswith("# Changelog")


def test_every_file_of_the_package_is_package_data() -> None:
    """The templates, static files, migrations and the bundled example the code loads reach the wheel (the built
    wheel itself is compared with the package's files by ``make wheel-check``)."""
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["stableval"]
    files = script("check_wheel").package_files(REPO)
    data = sorted(name.removeprefix("stableval/") for name in files if not name.endswith(".py"))
    assert "examples/mt_bench_turn1_votes.csv" in data and "portal/migrations/script.py.mako" in data
    unshipped = [name for name in data if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns)]
    assert not unshipped, f"files of the package no package-data pattern ships: {unshipped}"


def test_no_requirement_is_pinned_to_one_version() -> None:
    """The ``neural`` extra took ``torch==2.13.0``, a build only the development machine carries; every requirement
    now takes a range, and the CPU build the Makefile hands pip satisfies it."""
    project = PYPROJECT["project"]
    requirements = [Requirement(text) for extra in project["optional-dependencies"].values() for text in extra]
    requirements += [Requirement(text) for text in project["dependencies"]]
    pinned = [str(r) for r in requirements if any(spec.operator in ("==", "===") for spec in r.specifier)]
    assert not pinned, f"requirements pinned to one version: {pinned}"
    torch = next(Requirement(text) for text in project["optional-dependencies"]["neural"]
                 if text.startswith("torch"))
    assert torch.specifier.contains("2.13.0+cpu") and torch.specifier.contains("2.15.0")
    assert "find-links" not in (REPO / "Makefile").read_text(encoding="utf-8")


def test_the_supported_pythons_are_stated_and_this_one_is_among_them() -> None:
    project = PYPROJECT["project"]
    stated = sorted(tuple(map(int, c.rsplit(" ", 1)[1].split("."))) for c in project["classifiers"]
                    if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert stated, "classifiers name no Python version"
    assert SpecifierSet(project["requires-python"]) == SpecifierSet(">={}.{}".format(*stated[0]))
    assert SpecifierSet(project["requires-python"]).contains(".".join(map(str, sys.version_info[:3])))


@pytest.mark.parametrize("name", ["check_wheel", "label_studio_example"])
def test_the_wheel_check_scripts_doctests_pass(name: str) -> None:
    result = doctest.testmod(script(name))
    assert result.failed == 0


def test_check_wheel_reads_a_wheel_and_names_what_differs(tmp_path: Path) -> None:
    check = script("check_wheel")
    wheel = tmp_path / "stableval-9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in ("stableval/__init__.py", "stableval/examples/x.csv", "stableval-9.9.dist-info/RECORD"):
            archive.writestr(name, "")
    found = check.wheel_files(wheel)
    assert found == {"stableval/__init__.py", "stableval/examples/x.csv"}
    assert check.contents_problems({"stableval/__init__.py", "stableval/portal/static/portal.css"}, found) == [
        "missing from the wheel: stableval/portal/static/portal.css",
        "in the wheel but not in the package: stableval/examples/x.csv"]


def test_the_label_studio_example_scores_and_its_left_out_records_are_counted(tmp_path: Path) -> None:
    """The smoke test ``make wheel-check`` runs from the installed wheel, here from the source tree."""
    example = script("label_studio_example")
    assert example.main([str(tmp_path / "export.json")]) == 0
    result = CliRunner().invoke(app, ["score", "--from", "label-studio", str(tmp_path / "export.json"), "-B", "50"])
    assert result.exit_code == 0, result.output
    assert "95 judgments of 24 responses (8 items × 3 agents) by 4 raters" in result.output
    for counted in ("left out 1 skipped (cancelled) annotation(s)", "left out 1 task(s) nobody annotated"):
        assert counted in result.output
    board = [line.split()[0] for line in result.output.splitlines() if line.startswith(" model-")]
    assert board == ["model-a", "model-b", "model-c"]


def test_the_readme_shows_the_two_commands_the_wheel_check_runs() -> None:
    """Done-when of issue 32: from the wheel to a Label Studio leaderboard in two commands, shown in the README and
    run by ``make wheel-check`` (CI) from a fresh virtual environment."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    smoke = " ".join(["stableval", *script("check_wheel").SMOKE])
    two = re.search(r"```bash\n(pip install [^\n]*)\n(stableval [^\n]*)\n```", readme)
    assert two, "the README shows no `pip install` + `stableval` block"
    assert "dist/stableval-*.whl" in two.group(1) and two.group(2).split("  ")[0].strip() == smoke
