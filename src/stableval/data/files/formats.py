"""File formats: the suffix table, the format a path or a name means, the label scale a file may carry, and
the UTF-8 check the text formats share.

>>> canonical_format(".TAB"), FORMATS[".pq"]
('tsv', 'parquet')
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stableval.errors import InputError

__all__ = ["ALLOWED_FORMATS", "FORMATS", "SCALE_KEY", "canonical_format", "file_scale", "format_of", "not_utf8",
           "utf8_problem"]


#: File suffix → format name, for reading and for writing.
FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
#: The formats and their suffixes, as messages list them.
ALLOWED_FORMATS = "csv (.csv), tsv (.tsv, .tab), jsonl (.jsonl, .ndjson), parquet (.parquet, .pq)"
#: Parquet schema metadata key (and frame.attrs key) of the label scale a file carries: JSON
#: ``{"column": "label", "levels": [...], "credit": [...]}``, written by ``stableval convert``.
SCALE_KEY = "stableval.scale"


def canonical_format(format: str) -> str | None:
    """``"csv"``, ``".tab"``, ``"PQ"`` ... → the format's name (``csv``, ``tsv``, ``parquet``); None if unknown."""
    name = format.lower().lstrip(".")
    name = FORMATS.get("." + name, name)
    return name if name in FORMATS.values() else None


def format_of(path: Path, format: str | None) -> str:
    """The format of ``path``: the one ``format`` names, else the one its suffix says; either unknown raises
    :class:`InputError`.

    >>> format_of(Path("votes.ndjson"), None), format_of(Path("votes.txt"), "tab")
    ('jsonl', 'tsv')
    """
    if format is not None:
        name = canonical_format(format)
        if name is None:
            raise InputError("unknown format", file=str(path), value=format, allowed=ALLOWED_FORMATS)
        return name
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError("cannot tell the file format from its suffix", file=str(path),
                         value=path.suffix or "",
                         allowed=f"{ALLOWED_FORMATS}; or pass {{format}}", option="format")
    return FORMATS[suffix]


def file_scale(frame: pd.DataFrame, column: str) -> tuple[list[str], list[float] | None] | None:
    """The levels (worst first) and credit that the file ``frame`` was read from declares for ``column``
    (Parquet written by ``stableval convert``); ``None`` when it declares none.

    >>> frame = pd.DataFrame({"label": ["good"]})
    >>> frame.attrs[SCALE_KEY] = {"column": "label", "levels": ["bad", "good"], "credit": [0, 1]}
    >>> file_scale(frame, "label"), file_scale(frame, "grade")
    ((['bad', 'good'], [0.0, 1.0]), None)
    """
    scale = frame.attrs.get(SCALE_KEY)
    if not isinstance(scale, dict) or scale.get("column") != column or not isinstance(scale.get("levels"), list):
        return None
    credit = scale.get("credit")
    return [str(v) for v in scale["levels"]], [float(v) for v in credit] if isinstance(credit, list) else None


def utf8_problem(data: bytes) -> tuple[int, int, str] | None:
    """(line, byte offset, reason) of the first byte that is not UTF-8 in ``data``; None if it all decodes.

    >>> utf8_problem(b"ok\\ncaf\\xe9\\n"), utf8_problem("café".encode())
    ((2, 6, 'invalid continuation byte'), None)
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data.count(b"\n", 0, exc.start) + 1, exc.start, exc.reason
    return None


def not_utf8(path: Path, problem: tuple[int, int, str], allowed: str) -> InputError:
    """The error for a file whose ``problem`` (from :func:`utf8_problem`) shows it is not UTF-8 text."""
    line, start, reason = problem
    return InputError(f"line {line} is not UTF-8 text ({reason} at byte {start}); re-save the file as UTF-8",
                      file=str(path), allowed=allowed)
