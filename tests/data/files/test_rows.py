"""Places in a table file: row errors and row numbers as text."""

from __future__ import annotations

from stableval.data.files import row_error, rows_text


# ====================================================================================== row errors
def test_row_error_puts_the_file_line_after_the_row_or_after_the_problem() -> None:
    at_row = row_error("empty item id", source="a.csv", row=4, offset=1, column="item", value="")
    assert str(at_row) == "a.csv, row 4 (line 5), column 'item': empty item id: got ''"
    assert at_row.problem == "empty item id" and at_row.row == 4
    at_problem = row_error("unknown turn", source="a.csv", row=4, offset=1, column="turn", value="3",
                           line_at="problem")
    assert str(at_problem) == "a.csv, row 4, column 'turn': unknown turn (line 5): got '3'"
    no_lines = row_error("bad", source="a.parquet", row=4, offset=None, column="x", value="?", line_at="problem")
    assert str(no_lines) == "a.parquet, row 4, column 'x': bad: got '?'"


def test_rows_text() -> None:
    assert rows_text([1, 2, 3], 1) == "rows 1, 2 and 3 (lines 2, 3 and 4)"
    assert rows_text([5], 0) == "row 5 (line 5)"
    assert rows_text([5, 9], None) == "rows 5 and 9"
