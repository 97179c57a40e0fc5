"""Reading test collections (``nrp/testcollection.py``): bad grades named by the qrels file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from stableval.errors import InputError
from stableval.nrp.testcollection import read_qrels


@pytest.mark.parametrize("grade", ["inf", "-1", "nan", "high"])
def test_a_bad_qrels_grade_names_the_qrels_file_its_line_and_the_value_as_written(tmp_path: Path,
                                                                                  grade: str) -> None:
    """Issue 26 (E15): it named the collection folder, a row of the merged table and ``np.float64(inf)``."""
    path = tmp_path / "qrels.txt"
    path.write_text(f"q1 0 d1 1\n\nq1 0 d2 {grade}\n")
    with pytest.raises(InputError) as caught:
        read_qrels(path)
    text = str(caught.value)
    assert text.startswith(f"{path}, row 3") and f"got '{grade}'" in text and "np.float64" not in text
