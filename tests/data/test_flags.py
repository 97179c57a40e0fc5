"""How the command line spells each input option and column role: every role and option has a flag, and messages
spell them from the one table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stableval.commands.common import flag_spelling
from stableval.data import PAIRWISE_ALIASES, ROLE_ALIASES, load_frame, read_table_file
from stableval.data.columns import CLI_FLAGS
from stableval.errors import InputError


# ====================================================================================== CLI flag spellings
def test_cli_flags_cover_every_column_role_and_input_option() -> None:
    for role in [*ROLE_ALIASES, *PAIRWISE_ALIASES]:
        assert CLI_FLAGS[role] == "--" + role.replace("_", "-") + "-col"
    for option in ("levels", "credit", "duplicates", "default_agent"):
        assert CLI_FLAGS[option] == "--" + option.replace("_", "-")
    assert CLI_FLAGS["format"] == "--input-format" and CLI_FLAGS["weight"] == "--weight-col"


def test_the_input_format_hint_of_the_file_reader_matches_cli_flags(tmp_path: Path) -> None:
    path = tmp_path / "ratings.txt"
    path.write_text("item,agent,rater,label\nq1,A,r1,1\n")
    with pytest.raises(InputError) as caught:
        read_table_file(path)
    assert str(caught.value).endswith("or pass format=") and caught.value.option == "format"
    assert caught.value.spelled(flag_spelling).endswith(f"or pass {CLI_FLAGS['format']}")


def test_messages_spell_flags_from_cli_flags() -> None:
    frame = pd.DataFrame({"question": ["q1"], "system": ["A"], "worker": ["w1"]})
    with pytest.raises(InputError) as caught:
        load_frame(frame)
    assert "name it with columns={'label': NAME}" in str(caught.value)
    text = caught.value.spelled(flag_spelling)
    assert f"name it with {CLI_FLAGS['label']} NAME" in text
    assert "other role options: " + ", ".join(CLI_FLAGS[r] for r in ROLE_ALIASES if r != "label") in text
