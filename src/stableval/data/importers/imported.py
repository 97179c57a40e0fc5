"""What an importer gives: :class:`Imported`, the judgments or votes as a table, where each row came from, and
what was left out (collected with :class:`Rows`).

The table has the columns the annotation and pairwise readers find by themselves (``item, agent, rater, label``,
or ``item, agent_a, agent_b, rater, winner``), plus ``rater_kind`` when the importer declares its raters LLM judges
(:attr:`~stableval.data.importers.registry.Importer.rater_kind`). The input options then apply to that table as to
any file: levels, credit, the duplicate policy. Messages about its rows name the export's record and field
(:meth:`Imported.locate`), not the table's row.

>>> import pandas as pd
>>> rows = Rows("item", "agent", "rater", "label")
>>> rows.add(3, item="t1", agent="A", rater="7", label="4")
>>> imported = rows.imported({"label": "annotations[].result.value.rating"}, levels=("1", "2", "3", "4", "5"))
>>> imported.frame.to_dict("records"), imported.records.tolist(), imported.pairwise
([{'item': 't1', 'agent': 'A', 'rater': '7', 'label': '4'}], [3], False)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from stableval.data.options import InputOptions
from stableval.errors import InputError

__all__ = ["Imported", "Rows"]


@dataclass(frozen=True, eq=False)
class Imported:
    """An export read by an importer.

    Attributes:
        frame: one row per judgment (``item, agent, rater, label``) or per vote (``item, agent_a, agent_b, rater,
            winner``), all text.
        records: (rows,) the export's record (task, record, row or line; 1-based) each row comes from.
        fields: frame column → the export's field it was read from, for messages.
        notes: what the importer did: the question read, where ids came from, what was left out and how many.
        levels, credit: the scale the export states (e.g. a rating's numbers); ``None``: the user names it.
    """

    frame: pd.DataFrame
    records: np.ndarray
    fields: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    levels: tuple[str, ...] | None = None
    credit: tuple[float, ...] | None = None

    @property
    def pairwise(self) -> bool:
        """Whether the rows are pairwise votes."""
        return "winner" in self.frame.columns

    def reading_options(self, options: InputOptions) -> InputOptions:
        """The options that read :attr:`frame`: the user's levels, credit and duplicate policy (the user's levels
        win over the export's, and then so must the credit); the columns, default agent and format were the
        importer's to apply.

        >>> rows = Rows("item", "agent", "rater", "label")
        >>> rows.add(1, item="q", agent="A", rater="r", label="2")
        >>> imported = rows.imported({}, levels=("1", "2"), credit=(0.0, 1.0))
        >>> imported.reading_options(InputOptions(importer="argilla", columns={"label": "rating"})).levels
        ('1', '2')
        """
        user_levels = options.levels is not None
        levels = options.levels if user_levels else (None if self.pairwise else self.levels)
        credit = options.credit if options.credit is not None else (
            None if user_levels or self.pairwise else self.credit)
        return replace(options, importer=None, columns=None, default_agent=None, format=None,
                       pairwise=self.pairwise, levels=levels, credit=credit)

    def locate(self, error: InputError, source: str) -> InputError:
        """``error`` about a row of :attr:`frame` (read from ``source``) as one about the export's record and
        field."""
        if error.file != source or (error.row is None and error.column is None):
            return error
        row = error.row
        record = int(self.records[row - 1]) if row is not None and 1 <= row <= len(self.records) else row
        column = self.fields.get(error.column, error.column) if error.column is not None else None
        return error.replace(row=record, line=None, column=column)


class Rows:
    """The rows an importer collects, with the record each comes from; :meth:`imported` makes the
    :class:`Imported`."""

    def __init__(self, *columns: str) -> None:
        self.columns = columns
        self.values: dict[str, list[str]] = {name: [] for name in columns}
        self.records: list[int] = []

    def add(self, record: int, **values: str) -> None:
        for name in self.columns:
            self.values[name].append(values[name])
        self.records.append(record)

    def __len__(self) -> int:
        return len(self.records)

    def imported(self, fields: Mapping[str, str], notes: Iterable[str] = (), *,
                 levels: Sequence[str] | None = None, credit: Sequence[float] | None = None) -> Imported:
        frame = pd.DataFrame({name: pd.Series(values, dtype=object) for name, values in self.values.items()})
        return Imported(frame=frame, records=np.asarray(self.records, dtype=np.int64), fields=dict(fields),
                        notes=tuple(notes), levels=tuple(levels) if levels is not None else None,
                        credit=tuple(float(c) for c in credit) if credit is not None else None)
