"""The ablation grid's TOML configuration: every malformed key is refused naming the file, the key and the value."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.errors import InputError

from command_line import clean_failure

runner = CliRunner()


def ablate_fails(tmp_path: Path, config: Path, code: int = 1) -> str:
    """``ablate -c config``: it must fail cleanly with ``code``; the message, whitespace collapsed."""
    result = runner.invoke(app, ["ablate", "-c", str(config), "-o", str(tmp_path / "out"), "-j", "1"])
    return clean_failure(result, code)


@pytest.mark.parametrize(("text", "key", "value"), [
    (b"sweep = 3\n", "'sweep'", "got 3"),
    (b"trials = 2\nmethods = 3\n", "'methods'", "got 3"),
    (b'trials = 2\nmethods = ["mv", 3]\n', "'methods'", "3"),
    (b'trials = 2\n[[sweep]]\nname = "adversarial"\nvalues = ["a", "b"]\n', "'sweep.values (adversarial)'",
     "got 'a'"),
    (b'trials = 2\n[base]\nitems = "many"\n', "'base.items'", "got 'many'"),
    (b"trials = 2\n[base]\nqualities = 0.5\n", "'base.qualities'", "got 0.5"),
    (b'trials = 2\n[base]\nagents = "x"\n', "'base.agents'", "got 'x'"),
    (b"trials = 2\n[base]\nstrict = true\n", "'base.strict'", "got True"),
])
def test_malformed_keys_name_the_key_and_value(tmp_path: Path, text: bytes, key: str, value: str) -> None:
    """Issue 26 E2: a key of the wrong type (a sweep that is not a list of tables, methods that are not names,
    sweep values or [base] settings of the wrong kind) stops with exit 1 naming the config file, the key and the
    value, never a traceback."""
    config = tmp_path / "grid.toml"
    config.write_bytes(text)
    message = ablate_fails(tmp_path, config)
    assert str(config) in message and key in message and value in message, message


def test_a_config_that_is_not_utf8_or_is_a_folder(tmp_path: Path) -> None:
    """Issue 26 E2: a config file that is not UTF-8, or a folder, is refused as the ratings readers word it."""
    config = tmp_path / "grid.toml"
    config.write_bytes(b"# r\xe9sum\xe9\ntrials = 2\n")
    message = ablate_fails(tmp_path, config)
    assert str(config) in message and "line 1 is not UTF-8 text" in message, message
    folder = tmp_path / "cfg.toml"
    folder.mkdir()
    message = ablate_fails(tmp_path, folder)
    assert str(folder) in message and "is a directory, not a file" in message, message


@pytest.mark.parametrize(("text", "key", "says"), [
    ('trials = 1000000000\n[[sweep]]\nname = "adversarial"\nvalues = [0.0]\n', "trials", "100,000"),
    ('trials = 2\n[base]\nitems = 1000000000\n[[sweep]]\nname = "adversarial"\nvalues = [0.0]\n', "base.items",
     "GiB"),
    ('trials = 2\n[base]\nqualities = [0.8, 0.5]\nitems = 15\nraters = 6\nlabels_per_response = 3\n'
     '[[sweep]]\nname = "levels"\nvalues = [2, 5000]\n', "sweep.values", "from 2 to 1000")])
def test_a_grid_too_large_to_run_is_refused_before_any_work(tmp_path: Path, text: str, key: str, says: str) -> None:
    """Issue 26 (E6): these configs ended in MemoryError or OverflowError tracebacks."""
    config = tmp_path / "grid.toml"
    config.write_text(text)
    output = clean_failure(runner.invoke(app, ["ablate", "-c", str(config), "-o", str(tmp_path / "out")]), 1)
    assert key in output and says in output and "grid.toml" in output



def test_the_trials_bound_names_the_override_which_lifts_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 26 (E6): trials above the bound are refused naming how much longer they would take and the override;
    STABLEVAL_ALLOW_LARGE=1 lifts the bound (checked, not run)."""
    from stableval.simulate.grid_config import MAX_TRIALS, check_grid, default_grid

    grid = default_grid().with_trials(MAX_TRIALS * 10)
    with pytest.raises(InputError) as caught:
        check_grid(grid)
    assert "10× as long" in str(caught.value) and "STABLEVAL_ALLOW_LARGE=1" in str(caught.value), str(caught.value)
    output = clean_failure(runner.invoke(app, ["ablate", "--trials", str(MAX_TRIALS * 10), "-o",
                                               str(tmp_path / "o")]), 2)
    assert "STABLEVAL_ALLOW_LARGE=1" in " ".join(output.split())
    monkeypatch.setenv("STABLEVAL_ALLOW_LARGE", "1")
    check_grid(grid)
