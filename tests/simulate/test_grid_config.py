"""The ablation grid's definition: example configs, bad configs named with file and key, shared settings,
select and replace."""

from __future__ import annotations

import dataclasses

import pytest

from stableval.errors import InputError
from stableval.simulate import default_grid, load_grid

from paths import REPO

EXAMPLES = REPO / "examples" / "ablation"


def test_shared_settings_are_computed_once() -> None:
    grid = default_grid()
    ids = [grid.setting_id(config) for _, _, config in grid.settings()]
    assert len(ids) == 26 and len(set(ids)) == 21  # the base configuration sits in 6 sweeps


def test_example_configs_load() -> None:
    default = load_grid(EXAMPLES / "default.toml")
    builtin = default_grid()
    assert [default.setting_id(c) for _, _, c in default.settings()] == [
        builtin.setting_id(c) for _, _, c in builtin.settings()]
    budget = load_grid(EXAMPLES / "budget.toml")
    assert budget.base.adversarial_mode == "random" and [s.name for s in budget.sweeps] == ["labels", "items"]
    assert load_grid(EXAMPLES / "quick.toml").trials == 4


@pytest.mark.parametrize(("text", "message"), [
    ("trails = 3\n", "column 'trails': unknown key in top level"),
    ("[base]\nraters = 4\nlabels_per_response = 6\n", "column 'base.labels_per_response'.*got 6"),
    ("[[sweep]]\nname = 'adversarial'\nvalues = [0.0, 1.5]\n", r"sweep #1 \(adversarial\).*got 1.5"),
    ("[[sweep]]\nname = 'speed'\nvalues = [1]\n", "unknown parameter.*got 'speed'"),
    ("trials = 1\n", "column 'trials'.*allowed: an integer >= 2"),
    ("methods = ['mv', 'best']\n", "unknown method 'best'"),
    ("trials = \n", "not valid TOML"),
])
def test_bad_configs_are_rejected_with_the_file_and_key(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as error:
        load_grid(path)
    assert str(path) in str(error.value)


def test_grid_select_and_replace() -> None:
    grid = default_grid()
    assert [s.name for s in grid.select(["gap", "hard"]).sweeps] == ["gap", "hard"]
    changed = dataclasses.replace(grid, seed=3)
    config = grid.base
    assert changed.setting_id(config) != grid.setting_id(config)
