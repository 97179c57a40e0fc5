"""One input path: read a ratings file once — annotations or pairwise votes — into an annotation table.

:class:`~stableval.data.options.InputOptions` (re-exported here) is the one record of how to read a file (what
every command's input flags and the report pass around); :func:`load` reads the file once and returns a
:class:`Loaded`: the annotation table, and for pairwise input the validated votes as well. :func:`read_any` is
the same returning only the table.

>>> from stableval.data import example_path
>>> loaded = load(example_path("mt_bench"), InputOptions(duplicates="keep"))
>>> loaded.votes.n_votes, loaded.table.n_judgments, loaded.table.levels
(1689, 3378, ('loss', 'tie', 'win'))
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from stableval.data.annotations import annotations_from_frame
from stableval.data.columns import ITEM_PARTS, KEY_HINTS, ROLE_ALIASES, resolve_columns
from stableval.data.files import categories_as_text, dataset_part, parquet_columns, read_table_file
from stableval.data.integer_ids import integer_table
from stableval.data.labels import parse_credit
from stableval.data.options import InputOptions
from stableval.data.pairwise import (
    PAIRWISE_LEVELS,
    PairwiseTable,
    is_pairwise_frame,
    pairwise_from_frame,
    pairwise_to_annotations,
)
from stableval.data.table import AnnotationTable
from stableval.errors import InputError

__all__ = ["InputOptions", "Loaded", "load", "load_frame", "load_with_frame", "read_any"]


@dataclass(frozen=True, eq=False)
class Loaded:
    """A ratings file as read by :func:`load`.

    Attributes:
        table: the judgments as an :class:`~stableval.data.table.AnnotationTable` (pairwise votes converted:
            winner ``win``, loser ``loss``, a tie ``tie`` for both).
        votes: the validated raw votes when the input was pairwise (for Bradley–Terry and the pairwise
            leaderboard), else ``None``.
    """

    table: AnnotationTable
    votes: PairwiseTable | None = None


def load_frame(frame: pd.DataFrame, options: InputOptions | None = None, *, source: str = "<DataFrame>",
               notes: Sequence[str] = ()) -> Loaded:
    """Validate a frame already in memory as :func:`load` does a file; ``source`` names it in messages, ``notes``
    (what was done to the frame before) come first in the table's notes.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"item": ["q1", "q1"], "agent": ["A", "B"], "rater": ["r1", "r1"],
    ...                       "label": ["good", "bad"]})
    >>> loaded = load_frame(frame, InputOptions(levels="bad,good"))
    >>> loaded.table.label.tolist(), loaded.votes is None
    ([1, 0], True)
    """
    options = options if options is not None else InputOptions()
    pairwise = options.pairwise if options.pairwise is not None else is_pairwise_frame(frame, options.columns)
    if not pairwise:
        table = annotations_from_frame(frame, columns=options.columns, levels=options.levels, credit=options.credit,
                                       duplicates=options.duplicates, source=source,
                                       default_agent=options.default_agent, merge_levels=options.merge_levels,
                                       bins=options.bins)
        return Loaded(table=replace(table, notes=(*notes, *table.notes)) if notes else table, votes=None)
    for name in ("merge_levels", "bins"):
        if getattr(options, name) is not None:
            raise InputError(f"{name} cannot be set for pairwise votes: their levels are fixed (loss, tie, win)",
                             file=source, value=getattr(options, name), option=name,
                             allowed="no recoding of pairwise votes")
    levels = options.levels
    if levels is not None:
        raise InputError("levels cannot be set for pairwise votes: they are fixed", file=source,
                         value=levels if isinstance(levels, str) else list(levels),
                         allowed="no levels (pairwise votes become loss, tie, win; set their credit with {credit})",
                         option="levels", options={"credit": "0,0.5,1"})
    if options.credit is not None:
        parse_credit(options.credit, PAIRWISE_LEVELS, source=source)  # fail before the rows are scanned
    votes = pairwise_from_frame(frame, columns=options.columns, duplicates=options.duplicates, source=source)
    if notes:
        votes = replace(votes, notes=(*notes, *votes.notes))
    return Loaded(table=pairwise_to_annotations(votes, credit=options.credit), votes=votes)


def load(path: str | os.PathLike[str], options: InputOptions | None = None) -> Loaded:
    """Read a ratings file once (:func:`~stableval.data.files.read_table_file`) and validate it.

    Pairwise votes (detected from the columns unless ``options.pairwise`` says) are validated, kept in
    ``Loaded.votes`` and converted to judgments; an annotation file gives ``votes=None``. With pairwise data
    the levels are fixed (``loss, tie, win``): setting ``levels`` is an error, ``credit`` may give three
    numbers, ``default_agent`` is not used.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "votes.csv"
    >>> _ = path.write_text("item,model_a,model_b,judge,winner\\nq1,A,B,r1,tie\\n")
    >>> loaded = load(path)
    >>> loaded.votes.frame["winner"].tolist(), loaded.table.to_frame()["label"].tolist()
    (['tie'], ['tie', 'tie'])
    """
    options = options if options is not None else InputOptions()
    if options.importer is not None:
        return load_with_frame(path, options)[0]
    fast = None if options.merge_levels is not None or options.bins is not None else integer_table(path, options)
    if fast is not None:  # Parquet with integer ids: no text per row; None where it does not apply
        return Loaded(table=fast, votes=None)
    frame = read_table_file(path, format=options.format, categorical=True,  # each distinct value read as text once
                            columns=_needed_columns(path, options))
    if options.pairwise if options.pairwise is not None else is_pairwise_frame(frame, options.columns):
        frame = categories_as_text(frame)
    try:
        return load_frame(frame, options, source=str(path))
    except InputError as exc:
        part = dataset_part(frame, exc.row) if exc.row is not None and exc.file == str(path) else None
        if part is None:
            raise
        raise exc.replace(problem=f"{exc.problem_template} (row {exc.row:,} of the dataset {path})", file=part[0],
                          row=part[1], line=None) from exc


def load_with_frame(path: str | os.PathLike[str], options: InputOptions | None = None
                    ) -> tuple[Loaded, pd.DataFrame, InputOptions]:
    """Read a ratings file once, as :func:`load` does, keeping the frame the table was read from (every column as
    text: what else the file says, such as rater kinds and answer lengths) and the options that read that frame.

    With ``options.importer`` the file is a tool's export: the importer
    (:func:`~stableval.data.importers.import_file`) gives the frame, its notes (what was left out) lead the
    table's, and a problem in a row is named by the export's record and field.

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "battles.json"
    >>> _ = path.write_text(json.dumps([{"question_id": "q1", "model_a": "A", "model_b": "B",
    ...                                  "winner": "tie (bothbad)", "judge": "u1"}]))
    >>> loaded, frame, read = load_with_frame(path, InputOptions(importer="arena"))
    >>> loaded.votes.frame["winner"].tolist(), read.importer, loaded.table.notes[0]
    (['tie'], None, '1 battle(s) read: 1 vote(s)')
    """
    options = options if options is not None else InputOptions()
    if options.importer is None:
        frame = read_table_file(path, format=options.format)
        return load_frame(frame, options, source=str(path)), frame, options
    from stableval.data.importers.registry import import_file

    imported = import_file(path, options)
    reading = imported.reading_options(options)
    try:
        loaded = load_frame(imported.frame, reading, source=str(path), notes=imported.notes)
    except InputError as exc:
        raise imported.locate(exc, str(path)) from exc
    return loaded, imported.frame, reading


def _needed_columns(path: str | os.PathLike[str], options: InputOptions) -> list[str] | None:
    """The columns an annotation file read from Parquet needs (roles, item parts, key hints); None (every column)
    for other formats, pairwise votes, or when the roles cannot be resolved (reading everything then names it)."""
    names = parquet_columns(path, format=options.format)
    if names is None:
        return None
    header = pd.DataFrame(columns=pd.Index(names, dtype=object))
    if options.pairwise or (options.pairwise is None and is_pairwise_frame(header, options.columns)):
        return None
    try:
        found = resolve_columns(header, ROLE_ALIASES, options.columns, source=str(path),
                                optional=("agent",) if options.default_agent is not None else ())
    except InputError:
        return None
    wanted = {str(column) for column in found.values() if column is not None}
    extra = {name.strip().lower() for name in (*ITEM_PARTS, *KEY_HINTS)}
    return [name for name in names if name in wanted or str(name).strip().lower() in extra]


def read_any(
    path: str | os.PathLike[str],
    *,
    pairwise: bool | None = None,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    credit: Sequence[float] | str | None = None,
    duplicates: str = "error",
    format: str | None = None,
    default_agent: str | None = None,
    merge_levels: str | Mapping[str, Sequence[object]] | None = None,
    bins: str | Sequence[float] | None = None,
) -> AnnotationTable:
    """Read a file once; pairwise votes (auto-detected unless ``pairwise`` says) are converted to judgments.

    The table of :func:`load`: with pairwise data the levels are fixed (``loss, tie, win``): passing ``levels``
    is an error, ``credit`` may give three numbers, ``default_agent`` is not used. ``merge_levels`` and ``bins``
    recode Likert or numeric labels into ordered levels (:mod:`stableval.data.recode`).

    >>> from stableval.data import example_path
    >>> table = read_any(example_path("mt_bench"), duplicates="keep")
    >>> table.n_judgments, table.n_agents, table.levels
    (3378, 6, ('loss', 'tie', 'win'))
    """
    options = InputOptions(levels=levels, credit=credit, duplicates=duplicates, columns=columns,
                           default_agent=default_agent, pairwise=pairwise, format=format,
                           merge_levels=merge_levels, bins=bins)
    return load(path, options).table
