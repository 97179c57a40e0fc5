"""CSV through Arrow reads what pandas reads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stableval.data import read_table_file
from stableval.data.files import categories_as_text
from stableval.errors import InputError

# ====================================================================================== CSV through pyarrow
TRICKY_CSV = {
    "plain": "item,agent,rater,label\nq1,A,r1,2\nq2,B,r2,0\n",
    "quotes and commas": 'item,agent,rater,label\n"q,1","say ""hi""",r1,2\n"q2",B," r2 ",0\n',
    "newline in a quoted field": 'item,agent,rater,label\n"q\n1",A,r1,2\nq2,B,r2,0\n',
    "empty fields and NA words": "item,agent,rater,label\nNA,,null,2\nnan,None,r2,\n",
    "blank lines": "item,agent,rater,label\n\nq1,A,r1,2\n\n\nq2,B,r2,0\n",
    "CRLF": "item,agent,rater,label\r\nq1,A,r1,2\r\nq2,B,r2,0\r\n",
    "semicolons": "item;agent;rater;label\n007;A;r1;2,5\n",
    "numbers stay as written": "item,agent,rater,label\n007,1e3,-0,2.50\n",
    "byte-order mark": "\ufeffitem,agent,rater,label\nq1,A,r1,2\n",
    "ragged row": "item,agent,rater,label\nq1,A,r1\nq2,B,r2,0\n",
    "too many fields": "item,agent,rater,label\nq1,A,r1,2,9\n",
    "repeated header": "item,item,rater,label\nq1,A,r1,2\n",
    "unicode": "item,agent,rater,label\nq1,é,r\u00a01,2\n",
    "no final newline": "item,agent,rater,label\nq1,A,r1,2",
    "leading blank line": "\nitem,agent,rater,label\nq1,A,r1,2\n",
    "quotes inside fields": 'item,agent,rater,label\nab"c,"ab"c, "r1",""\n',
    "tab and NUL in fields": "item,agent,rater,label\na\tb,A,r\x001,2\n",
}


@pytest.mark.parametrize("name", list(TRICKY_CSV))
@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_csv_through_arrow_reads_what_pandas_reads(tmp_path: Path, name: str, suffix: str) -> None:
    """Issue 14: the fast reading path equals the simple one."""
    text = TRICKY_CSV[name]
    path = tmp_path / f"t{suffix}"
    path.write_text(text.replace(",", "\t") if suffix == ".tsv" and name != "semicolons" else text, encoding="utf-8")
    outcomes = []
    for categorical in (False, True):
        try:
            frame = read_table_file(path, categorical=categorical)
            outcomes.append((categories_as_text(frame) if categorical else frame, frame.attrs))
        except InputError as exc:
            outcomes.append((str(exc), None))
    (plain, plain_attrs), (coded, coded_attrs) = outcomes
    if isinstance(plain, str):
        assert plain == coded
    else:
        # (a row with one field too many makes pandas take the first column as the index: same values either way)
        assert isinstance(coded, pd.DataFrame) and coded_attrs == plain_attrs
        shifted = name == "too many fields" or (name == "tab and NUL in fields" and suffix == ".tsv")
        assert coded.equals(plain.reset_index(drop=True) if shifted else plain)


# ====================================================================================== rows → file lines
@pytest.mark.parametrize(("text", "line"), [
    ("agent,item,rater,label\nm,a,r1,1\nm,b,r1,zz\n", 3),
    ("\n\nagent,item,rater,label\nm,a,r1,1\nm,b,r1,zz\n\n\n", 5),          # blank lines above and below
    ("\r\nagent,item,rater,label\r\nm,a,r1,1\r\nm,b,r1,zz", 4),            # CRLF, no final newline
    ("agent,item,rater,label\nm,a,r1,1\n\nm,b,r1,zz\n", None),             # a blank line between rows
    ('agent,item,rater,label\n"m\n2",a,r1,1\nm,b,r1,zz\n', None),          # a value over two lines
])
def test_an_error_names_the_true_file_line_or_none(tmp_path: Path, text: str, line: int | None) -> None:
    """Issue 26: rows of a file with blank lines above the header were named by the wrong line ("row 2 (line 3)"
    for line 5); where rows and lines do not match one to one, the error names the row only."""
    from stableval.data.annotations import read_annotations

    path = tmp_path / "labels.csv"
    path.write_bytes(text.encode())
    with pytest.raises(InputError) as excinfo:
        read_annotations(path, levels=["0", "1"])
    message = str(excinfo.value)
    assert "row 2" in message and "'zz'" in message, message
    assert (f"row 2 (line {line})" in message) if line is not None else ("row 2 (line" not in message), message
