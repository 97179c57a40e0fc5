"""The command registry (``commands/__init__.py``): every command that reads ratings takes the same input flags
from one declaration, every command that writes a result takes --format/--output, each command module is named
after its commands, and `report`/`plot` read what `score` reads."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from stableval.cli import app
from stableval.commands.common import INPUT_FLAGS, INPUT_PROFILES
from stableval.commands.output import Output

from command_line import renamed_pairwise
from paths import SRC

runner = CliRunner()


def registered(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, click command) of every command ``stableval`` registers, groups walked into."""
    command = command if command is not None else typer.main.get_command(app)
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from registered(sub, (*path, name))
    else:
        yield path, command


def parameters(command: Any) -> dict[str, inspect.Parameter]:
    """The parameters of the command function as written (before the decorators turned records into flags)."""
    return dict(inspect.signature(inspect.unwrap(command.callback), follow_wrapped=False).parameters)


#: every command that reads ratings (it takes ``inputs: InputOptions``) and every one that writes a result
#: (``out: Output``), found by introspection: a new command cannot escape the contracts below
RATINGS_COMMANDS = [path for path, command in registered() if "inputs" in parameters(command)]


RESULT_COMMANDS = [path for path, command in registered()
                   if parameters(command).get("out") is not None
                   and parameters(command)["out"].annotation in (Output, "Output")]


def options_of(path: tuple[str, ...]) -> set[str]:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return {opt for parameter in command.params for opt in [*parameter.opts, *parameter.secondary_opts]}


def flags(profile: str) -> set[str]:
    out: set[str] = set()
    for name in INPUT_PROFILES[profile]:
        out.update(INPUT_FLAGS[name][0].__metadata__[0].param_decls)
    return out


ALL_INPUT_FLAGS = set().union(*(flags(profile) for profile in INPUT_PROFILES))


def test_the_scan_finds_the_commands() -> None:
    assert len(RATINGS_COMMANDS) >= 8 and len(RESULT_COMMANDS) >= 15
    assert ("score",) in RATINGS_COMMANDS and ("nrp", "score") in RESULT_COMMANDS and ("demo",) not in RESULT_COMMANDS


@pytest.mark.parametrize("path", RATINGS_COMMANDS, ids=" ".join)
def test_every_ratings_command_takes_the_shared_input_flags(path: tuple[str, ...]) -> None:
    """Exactly the input flags of one profile, all from the one declaration (INPUT_FLAGS)."""
    taken = options_of(path) & ALL_INPUT_FLAGS
    assert any(taken == flags(profile) for profile in INPUT_PROFILES), sorted(taken)
    if path not in (("pairwise",), ("reliability",)):
        assert flags("ratings") <= options_of(path)


@pytest.mark.parametrize("path", RESULT_COMMANDS, ids=" ".join)
def test_every_result_command_writes_table_json_or_csv(path: tuple[str, ...]) -> None:
    assert {"--format", "-f", "--output", "-o"} <= options_of(path)


def test_bootstrap_is_declared_once_and_every_command_uses_it() -> None:
    """``--bootstrap/-B`` is written once in the source (``bootstrap_flag``); every command that has it has the
    short form and the same bound."""
    written = [str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
               if re.search(r"[\"']--bootstrap[\"']", path.read_text(encoding="utf-8"))]
    assert written == ["commands/common.py"]
    having = 0
    for path, command in registered():
        for parameter in command.params:
            if "--bootstrap" in parameter.opts:
                having += 1
                assert parameter.opts == ["--bootstrap", "-B"] and parameter.min == 0, path
    assert having >= 9


def test_every_command_module_is_named_after_its_commands() -> None:
    """medqa and ddx live in commands/studies.py, not in rater_bootstrap.py; diagnose takes GoldOpt from common."""
    modules = {path: inspect.unwrap(command.callback).__module__ for path, command in registered()}
    assert modules[("rater-bootstrap",)] == "stableval.commands.rater_bootstrap"
    assert modules[("medqa",)] == modules[("ddx",)] == "stableval.commands.studies"
    assert "commands.score" not in (SRC / "commands" / "diagnose.py").read_text(encoding="utf-8")


def test_votes_and_judgments_profiles() -> None:
    assert flags("votes") <= options_of(("pairwise",))
    assert flags("judgments") <= options_of(("reliability",))


def test_json_output_is_strict_json_with_command_and_version(tmp_path: Path) -> None:
    path, columns = renamed_pairwise(tmp_path)
    result = runner.invoke(app, ["score", str(path), *columns, "-B", "0", "-f", "json"])  # no CIs: NaN inside
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output, parse_constant=lambda name: pytest.fail(f"{name} in JSON output"))
    assert payload["command"].startswith("stableval") and payload["version"]
    assert payload["scores"][0]["ci_low"] is None


def test_output_into_a_missing_folder_is_created(tmp_path: Path) -> None:
    path, columns = renamed_pairwise(tmp_path)
    out = tmp_path / "new" / "folder" / "scores.csv"
    result = runner.invoke(app, ["score", str(path), *columns, "-B", "0", "-f", "csv", "-o", str(out)])
    assert result.exit_code == 0 and out.read_text().startswith("method,agent,score"), result.output


def named_options() -> set[str]:
    """Every option name an InputError in the source names (``option="..."`` or the keys of ``options={...}``)."""
    import ast

    names: set[str] = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = getattr(node, "func", None)
            if not isinstance(node, ast.Call) or getattr(called, "id", getattr(called, "attr", "")) not in (
                    "InputError", "row_error", "replace"):
                continue
            for keyword in node.keywords:
                if keyword.arg == "option" and isinstance(keyword.value, ast.Constant):
                    names.add(str(keyword.value.value))
                elif keyword.arg == "options" and isinstance(keyword.value, ast.Dict):
                    names.update(str(key.value) for key in keyword.value.keys if isinstance(key, ast.Constant))
    return {name for name in names if isinstance(name, str) and name != "None"}


def test_every_option_an_error_names_is_spelled_as_a_real_flag() -> None:
    """Issue 25: the command line prints the option an InputError names as a flag (``flag_spelling``); that flag
    must exist on some command, or the advice would name a flag nobody has."""
    from stableval.commands.common import flag_spelling
    from stableval.data.flags import CLI_FLAGS
    from stableval.errors import COLUMN_OPTION

    real = set().union(*(options_of(path) for path, _ in registered()))
    inputs = ("levels", "credit", "duplicates", "format", "default_agent")
    named = named_options() | {name if name in inputs else COLUMN_OPTION + name for name in CLI_FLAGS}
    assert {"duplicates", "rater_info", "model_path", "columns.item"} <= named
    missing = sorted(f"{name} -> {flag_spelling(name)}" for name in named if flag_spelling(name) not in real)
    assert not missing, missing


def test_each_listed_summary_opens_its_command_help() -> None:
    """Issue 27: ``stableval --help`` lists the summaries declared in COMMANDS; each is the first paragraph of the
    command's own help (so the two cannot drift), and each module registers the commands COMMANDS names."""
    from stableval.commands import COMMANDS, load_command

    for name, listed in COMMANDS.items():
        help_text = load_command(name).help or ""
        assert help_text.split("\n\n")[0] == listed.summary, name
    assert list(typer.main.get_command(app).commands) == list(COMMANDS)  # type: ignore[attr-defined]


def test_help_lists_every_command_without_importing_any() -> None:
    """Issue 27: ``stableval --help`` and a mistyped command import no command module, numpy or pandas (it was
    ~1 CPU-second with every command module imported up front)."""
    import subprocess
    import sys

    probe = ("import sys, runpy\nsys.argv = ['stableval', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('stableval', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "heavy = sorted(m for m in sys.modules if m in ('numpy', 'pandas', 'scipy') "
             "or m.startswith('stableval.commands.') or m.startswith('stableval.aggregate'))\n"
             "print('HEAVY', heavy)")
    for argv in (["--help"], ["scroe"], ["--bogus"]):
        result = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                                env={**__import__("os").environ, "COLUMNS": "200"}, check=False)
        assert "HEAVY []" in result.stdout, (argv, result.stdout[-500:], result.stderr[-500:])
    listing = subprocess.run([sys.executable, "-c", probe, "--help"], capture_output=True, text=True,
                             env={**__import__("os").environ, "COLUMNS": "200"}, check=False).stdout
    assert "reliability" in listing and "Export the portal's confirmed judgments" in listing


def test_usage_errors_and_help_of_every_command_import_no_numerical_library() -> None:
    """Issue 27: ``stableval CMD --bogus`` and ``stableval CMD --help`` of every command — those whose flags come
    from the method registry (``score``, ``diagnose``, ``stability``, ``report``, ...), the ranking registry
    (``ddx``, ``plot``), the rankers (``nrp``) included — import neither numpy, scipy nor pandas, nor an estimator:
    the flags, their help and the usage error are built from the declarations alone (``score --bogus`` took 0.6
    CPU-seconds when the registry imported every estimator). Nor pydantic: typer coerces an unset ``--help`` flag of
    a group through it unless the flag is ``False`` (:class:`stableval.commands.Group`)."""
    import subprocess
    import sys

    from stableval.commands import COMMANDS

    probe = ("import sys\nfrom stableval.cli import main\n"
             "for argv in [[*name.split(), flag] for name in sys.argv[1:] for flag in ('--bogus-flag', '--help')]:\n"
             "    sys.argv = ['stableval', *argv]\n"
             "    try:\n        main()\n    except SystemExit:\n        pass\n"
             "    heavy = sorted(m for m in sys.modules "
             "if m.partition('.')[0] in ('numpy', 'pandas', 'scipy', 'pydantic') "
             "or m.startswith(('stableval.aggregate.majority_vote', 'stableval.aggregate.em', "
             "'stableval.aggregate.rankings.base', 'stableval.nrp.rankers.base')))\n"
             "    if heavy:\n        print('HEAVY', argv, heavy[:5])\n        break\n"
             "else:\n    print('HEAVY none')")
    commands = [*COMMANDS, "nrp agree", "nrp evaluate-rankers", "plot ddx-case", "portal track"]
    result = subprocess.run([sys.executable, "-c", probe, *commands], capture_output=True, text=True,
                            env={**__import__("os").environ, "COLUMNS": "200"}, check=False)
    assert "HEAVY none" in result.stdout, (result.stdout[-800:], result.stderr[-800:])
    assert "No such option: --bogus-flag" in result.stdout + result.stderr


def test_tidy_text_joins_the_lines_of_a_paragraph() -> None:
    """Issue 27: help without mid-sentence hard breaks (a docstring's line breaks are joined, lists kept)."""
    from stableval.commands import tidy_text

    assert tidy_text("One\n  two.\n\nThree\nfour.") == "One two.\n\nThree four."
    assert tidy_text("- a\n- b") == "- a\n- b"
    result = runner.invoke(app, ["score", "--help"], env={"COLUMNS": "300"}, terminal_width=300)
    assert "a rater_kind column)." in " ".join(result.output.split())
    assert "rater_kind\n" not in result.output


def test_portal_export_and_export_are_the_same_command() -> None:
    from stableval.commands import load_command

    portal = load_command("portal")
    assert inspect.unwrap(portal.commands["export"].callback) is inspect.unwrap(  # type: ignore[attr-defined]
        load_command("export").callback)
