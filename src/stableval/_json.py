"""One way to turn results into JSON-ready Python: numpy scalars become Python numbers, NaN and infinities ``None``.

Every result's ``to_dict()`` goes through these helpers, so no command ever writes ``NaN`` or ``Infinity`` (which
are not JSON) and every frame becomes a list of plain records the same way.

>>> import numpy as np, pandas as pd
>>> jsonable({"a": np.float64("nan"), "b": (np.int64(2), np.bool_(True)), "c": [np.inf, 0.5]})
{'a': None, 'b': [2, True], 'c': [None, 0.5]}
>>> records(pd.DataFrame({"x": [1.0, np.nan], "y": ["p", "q"]}))
[{'x': 1.0, 'y': 'p'}, {'x': None, 'y': 'q'}]
>>> matrix(pd.DataFrame([[np.nan, 0.75]], index=["A"], columns=["A", "B"]))
{'A': {'A': None, 'B': 0.75}}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["jsonable", "matrix", "records"]


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars and arrays made plain, non-finite floats made ``None``, recursively."""
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One JSON-ready dictionary per row (column names as text)."""
    return [{str(key): jsonable(value) for key, value in row.items()} for row in frame.to_dict("records")]


def matrix(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """A square frame (e.g. agents × agents) as ``{row: {column: value}}``."""
    return {str(row): {str(column): jsonable(value) for column, value in values.items()}
            for row, values in frame.iterrows()}
