"""The optional extras (``stableval/extras.py``): declared once, checked against pyproject.toml, and every command
that needs one ends with the one-line install command when it is missing (issue 27)."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.commands import COMMANDS
from stableval.extras import EXTRAS, install_hint, missing_module

from command_line import plain
from paths import REPO

runner = CliRunner()

#: the import name of distributions whose module is spelled differently
IMPORT_NAMES = {"python-multipart": "multipart", "markdown-it-py": "markdown_it", "sentence-transformers":
                "sentence_transformers", "dask[distributed]": "dask"}

#: modules an extra installs through another of its packages (dask[distributed], sentence-transformers)
TRANSITIVE = {"distributed", "transformers"}


def hide(monkeypatch: pytest.MonkeyPatch, extras: tuple[str, ...] = tuple(EXTRAS)) -> None:
    """Make the modules of ``extras`` look uninstalled (as in a venv with the core only)."""
    for extra in extras:
        for module in EXTRAS[extra]:
            monkeypatch.setitem(sys.modules, module, None)  # type: ignore[arg-type]


def test_extras_match_pyproject() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]
    assert set(EXTRAS) == set(declared) - {"dev", "docs"}  # docs: the site's build tools, never imported by stableval
    for extra, modules in EXTRAS.items():
        distributions = {re.split(r"[<>=;!~ ]", requirement)[0] for requirement in declared[extra]}
        importable = {IMPORT_NAMES.get(name, name.split("[")[0].replace("-", "_")) for name in distributions}
        assert set(modules) - TRANSITIVE <= importable, extra
    assert {listed.extra for listed in COMMANDS.values()} - {None} <= set(EXTRAS)


def test_missing_module_names_the_first_absent_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert missing_module("portal") is None
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # type: ignore[arg-type]
    assert missing_module("portal") == "sqlalchemy"
    assert install_hint("portal") == "pip install 'stableval[portal]'"


@pytest.mark.parametrize("argv", [["portal", "track", "t1"], ["portal", "migrate"], ["export"], ["serve"],
                                  ["nrp", "evaluate-rankers", "missing-folder"], ["nrp", "validate", "x"]],
                         ids=" ".join)
def test_a_command_without_its_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                            argv: list[str]) -> None:
    """Before reading anything: the collection of ``nrp evaluate-rankers`` need not even exist."""
    hide(monkeypatch)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, argv)
    extra = COMMANDS[argv[0]].extra
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"needs the '{extra}' extra" in plain(result.output) and install_hint(str(extra)) in plain(result.output)
    assert "Traceback" not in result.output and not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv", [["portal", "--help"], ["portal"], ["nrp", "score", "--help"], ["serve", "--help"]],
                         ids=" ".join)
def test_help_needs_no_extra(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    hide(monkeypatch)
    result = runner.invoke(app, argv)
    assert "Usage" in result.output and "extra" not in plain(result.output).split("Usage")[0]


def test_core_commands_need_no_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every command that declares no extra runs with the core only (the demo's pipeline end to end)."""
    hide(monkeypatch)
    assert all(listed.extra is None for name, listed in COMMANDS.items() if name in ("score", "demo", "simulate"))
    out = tmp_path / "ratings.csv"
    result = runner.invoke(app, ["simulate", "-o", str(out), "--items", "20", "--raters", "6"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["score", str(out), "-B", "0"])
    assert result.exit_code == 0, result.output
