"""Reading any table file: a duplicated header is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from stableval.errors import InputError


def test_read_table_file_refuses_duplicated_header(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    from stableval.data.files import read_table_file

    path = tmp_path / "dup.csv"
    path.write_text("a,b,a\n1,2,3\n")
    with pytest.raises(InputError, match="column 'a' appears more than once"):
        read_table_file(path)
