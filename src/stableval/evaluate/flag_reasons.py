"""Flags by reason, per evaluator against quality control (QC): which kinds of not-ratable items (PII, medical
advice, NSFW, ...) each evaluator flags, and which of QC's flags it misses.

For each evaluator and each reason, over the units (item, agent) the evaluator judged and QC judged too:

* ``flagged``: the evaluator flagged the unit for this reason;
* ``qc_flagged``: QC flagged it for this reason;
* ``both``: both flagged it for this reason;
* ``other_reason``: QC flagged it for this reason, the evaluator flagged it for another;
* ``missed``: QC flagged it for this reason, the evaluator did not flag it;
* ``extra``: the evaluator flagged it for this reason, QC did not flag it.

An ``(all)`` row per reason sums the evaluators. The reasons come from the judgments' ``flag_reason`` column
(:func:`stableval.datasets.judgments.judgments_from_frame`, the notebook JSON's ``flag_reason``).

>>> import pandas as pd
>>> rows = pd.DataFrame({"item": ["1", "1", "2", "2"], "agent": "", "rater": ["e", "q", "e", "q"],
...                      "flag": [True, True, False, True], "qc": [False, True, False, True],
...                      "flag_reason": ["PII", "PII", "", "NSFW"]})
>>> table = flags_by_reason(rows).frame
>>> table[table["evaluator"] == "e"][["reason", "flagged", "qc_flagged", "both", "missed"]].values.tolist()
[['NSFW', 0, 1, 0, 1], ['PII', 1, 1, 1, 0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import records
from stableval.console import Displayed

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["FLAG_REASON_COLUMNS", "FlagReasons", "flags_by_reason"]

#: The columns of :attr:`FlagReasons.frame`.
FLAG_REASON_COLUMNS = ("evaluator", "reason", "flagged", "qc_flagged", "both", "other_reason", "missed", "extra")


@dataclass(frozen=True)
class FlagReasons(Displayed):
    """The breakdown (:data:`FLAG_REASON_COLUMNS`, evaluators sorted, then ``(all)``) and notes."""

    frame: pd.DataFrame
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {"flags_by_reason": records(self.frame), "notes": list(self.notes)}

    def to_frame(self) -> pd.DataFrame:
        return self.frame

    def render(self, console: Console) -> None:
        from rich import box
        from rich.table import Table

        from stableval.markup import literal

        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                      title="Flags by reason (evaluator against QC, on the items both judged)")
        for name in ("Evaluator", "Reason", "Flagged", "QC flagged", "Both", "Other reason", "Missed", "Extra"):
            table.add_column(name, justify="left" if name in ("Evaluator", "Reason") else "right")
        row: Any
        for row in self.frame.itertuples(index=False):
            table.add_row(literal(str(row.evaluator)), literal(str(row.reason)), *(f"{int(v):,}" for v in row[2:]))
        console.print(table)
        for note in self.notes:
            console.print(f"note: {literal(note)}")


def flags_by_reason(judgments: pd.DataFrame, qc_rater: Sequence[str] | None = None) -> FlagReasons:
    """The per-evaluator breakdown of flags by reason (see the module docstring). QC is the rows with ``qc`` set
    (the notebook's embedded QC) or, with ``qc_rater``, those raters' rows; a unit QC judged twice keeps the
    first QC row. Without a ``flag_reason`` column every flag's reason is ``unspecified``."""
    frame = judgments.copy()
    if "flag_reason" not in frame.columns:
        frame["flag_reason"] = np.where(frame["flag"].to_numpy(bool), "unspecified", "")
    qc = frame["qc"].to_numpy(bool) | (frame["rater"].astype(str).isin([str(r) for r in qc_rater or ()])
                                       .to_numpy())
    unit = ["item", "agent"]
    reference = frame[qc].drop_duplicates(unit)[[*unit, "flag", "flag_reason"]].rename(
        columns={"flag": "qc_flag", "flag_reason": "qc_reason"})
    evaluations = frame[~qc].merge(reference, on=unit, how="inner")
    notes = []
    without = int((~qc).sum()) - len(evaluations)
    if without:
        notes.append(f"{without:,} evaluator judgment(s) without a QC judgment of the same item are left out")
    e_flag, q_flag = evaluations["flag"].to_numpy(bool), evaluations["qc_flag"].to_numpy(bool)
    e_reason = evaluations["flag_reason"].astype(str).to_numpy()
    q_reason = evaluations["qc_reason"].astype(str).to_numpy()
    same = e_flag & q_flag & (e_reason == q_reason)
    long = pd.concat([
        pd.DataFrame({"evaluator": evaluations["rater"].astype(str), "reason": e_reason, "flagged": e_flag,
                      "qc_flagged": False, "both": same, "other_reason": False, "missed": False,
                      "extra": e_flag & ~q_flag}),
        pd.DataFrame({"evaluator": evaluations["rater"].astype(str), "reason": q_reason, "flagged": False,
                      "qc_flagged": q_flag, "both": False, "other_reason": q_flag & e_flag & (e_reason != q_reason),
                      "missed": q_flag & ~e_flag, "extra": False}),
    ], ignore_index=True)
    long = long[long["reason"] != ""]
    counts = FLAG_REASON_COLUMNS[2:]
    per = long.groupby(["evaluator", "reason"], sort=True)[list(counts)].sum().astype(int).reset_index()
    total = per.groupby("reason", sort=True)[list(counts)].sum().reset_index().assign(evaluator="(all)")
    table = pd.concat([per, total], ignore_index=True)[list(FLAG_REASON_COLUMNS)]
    if table.empty:
        notes.append("no item is flagged by an evaluator or by QC")
    return FlagReasons(frame=table.reset_index(drop=True), notes=tuple(notes))
