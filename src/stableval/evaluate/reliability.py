"""Reliability of each evaluator against quality control (QC): accuracy on the items both could rate.

Implements NVIDIA's "Reliability scoring example for Win-Tie-Loss human evaluation" (NVIDIA
GenerativeAIExamples, ``nemo/HumanEvaluation/Reliability_Scoring_Win_Tie_Loss.ipynb``; spec
``reliability-vs-qc.txt``). Per evaluator, over the items it judged that have a QC judgment:

* **reliability** = matches with QC / *applicable* items, an item being applicable when neither the evaluator
  nor QC flagged it (e.g. as NSFW / not ratable) and neither skipped it — a flagging error is counted
  separately, not as a wrong label;
* **flag mismatch %** = items where the evaluator's flag differs from QC's / items neither skipped;
* **total items** = items judged that have QC; plus a Wilson (1927) 95% interval for the reliability and a
  warning when an evaluator has fewer than ``min_items`` applicable items.

Overall: pooled reliability (Σ matches / Σ applicable), pooled flag mismatch, and the share of items QC flagged.
QC is a designated rater (``qc_rater``), a gold table (``gold``), QC embedded in the input (the notebook's
JSON format, :func:`read_toy_json`), or the leave-one-out consensus of the other raters (``consensus=True``;
items without a strict majority are excluded and counted).

>>> import pandas as pd
>>> frame = pd.DataFrame({"item": ["q1", "q1", "q2", "q2", "q3", "q3"],
...                       "rater": ["qc", "ann", "qc", "ann", "qc", "ann"],
...                       "label": ["A", "A", "B", "A", "", "B"], "flag": ["no", "no", "no", "no", "yes", "no"]})
>>> result = reliability_vs_qc(frame, qc_rater="qc", min_items=1)
>>> row = result.evaluators.iloc[0]
>>> row.evaluator, int(row.correct), int(row.applicable), int(row.flag_mismatches), int(row.total_items)
('ann', 1, 2, 1, 3)
>>> round(result.overall["reliability"], 3), round(result.overall["qc_flagged_pct"], 1)
(0.5, 33.3)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.data.read import (
    ROLE_ALIASES,
    id_column,
    line_offset,
    read_table_file,
    resolve_columns,
    row_error,
)
from stableval.data.table import AnnotationTable
from stableval.errors import InputError
from stableval.evaluate.intervals import wilson_interval

__all__ = [
    "FLAG_FALSE",
    "FLAG_TRUE",
    "JUDGMENT_ROLES",
    "ReliabilityResult",
    "judgments_from_frame",
    "plot_reliability",
    "read_gold",
    "read_judgments",
    "read_toy_json",
    "reliability_vs_qc",
]

#: Roles of a judgment table for reliability: the annotation roles plus optional ``flag`` and ``skip``.
JUDGMENT_ROLES: dict[str, tuple[str, ...]] = {
    **ROLE_ALIASES,
    "label": (*ROLE_ALIASES["label"], "best"),
    "flag": ("flag", "item_flag", "flagged", "nsfw", "unratable"),
    "skip": ("skip", "skipped"),
}
#: Text read as a set flag / skip (case-insensitive) ...
FLAG_TRUE: frozenset[str] = frozenset({"yes", "y", "true", "t", "1"})
#: ... and as not set (an empty cell is not set).
FLAG_FALSE: frozenset[str] = frozenset({"no", "n", "false", "f", "0", ""})
_FLAG_ALLOWED = "yes/no, true/false, y/n, 1/0 (case-insensitive) or empty"
_COLUMNS = ["item", "agent", "rater", "label", "flag", "skip", "qc", "row"]


# ====================================================================================== reading
def _bool_column(frame: pd.DataFrame, name: str, *, source: str) -> np.ndarray:
    text = frame[name].astype(str).str.strip().str.lower().to_numpy(dtype=object)
    truth = np.isin(text, list(FLAG_TRUE))
    bad = ~truth & ~np.isin(text, list(FLAG_FALSE))
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise row_error(f"not a yes/no value ({int(bad.sum()):,} row(s) in all)", source=source, row=pos + 1,
                         offset=line_offset(frame), column=name, value=str(frame[name].iloc[pos]),
                         allowed=_FLAG_ALLOWED)
    return truth


def judgments_from_frame(
    frame: pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    source: str = "<DataFrame>",
    default_agent: str | None = None,
    require_rater: bool = True,
) -> pd.DataFrame:
    """Validate a raw judgment frame into the columns ``item, agent, rater, label, flag, skip, qc, row``.

    ``flag`` / ``skip`` columns are optional (yes/no, true/false, 1/0, empty = no). A label may be empty only
    where the row is flagged or skipped. ``levels`` (optional) restricts the non-empty labels. ``agent`` is
    optional (empty when absent: the unit is then the item). ``row`` is the 1-based data row, for messages.

    >>> import pandas as pd
    >>> judgments_from_frame(pd.DataFrame({"item": ["1"], "worker": ["w"], "best": ["tie"], "item_flag": ["No"]}))
      item agent rater label   flag   skip     qc  row
    0    1           w   tie  False  False  False    1
    """
    if len(frame) == 0:
        raise InputError("no rows", file=source, allowed="one row per judgment")
    roles = JUDGMENT_ROLES if require_rater else {r: a for r, a in JUDGMENT_ROLES.items() if r != "rater"}
    found = resolve_columns(frame, roles, columns, source=source, optional=("agent", "flag", "skip"))
    offset = line_offset(frame)
    item = id_column(frame, str(found["item"]), source=source, role="item")
    if found["agent"] is not None:
        agent = id_column(frame, str(found["agent"]), source=source, role="agent")
    else:
        agent = pd.Series("" if default_agent is None else str(default_agent), index=item.index, dtype=object)
    rater = (id_column(frame, str(found["rater"]), source=source, role="rater") if require_rater
             else pd.Series("", index=item.index, dtype=object))
    flag = (_bool_column(frame, str(found["flag"]), source=source) if found["flag"] is not None
            else np.zeros(len(frame), dtype=bool))
    skip = (_bool_column(frame, str(found["skip"]), source=source) if found["skip"] is not None
            else np.zeros(len(frame), dtype=bool))
    label_col = str(found["label"])
    label = frame[label_col].astype(str).str.strip().reset_index(drop=True)
    missing = (label == "").to_numpy() & ~flag & ~skip
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise row_error(f"empty label on a row that is neither flagged nor skipped ({int(missing.sum()):,} "
                         "row(s) in all)", source=source, row=pos + 1, offset=offset, column=label_col,
                         value="", allowed="a label, or flag/skip set on that row")
    if levels is not None:
        names = [part.strip() for part in levels.split(",")] if isinstance(levels, str) else [str(v) for v in levels]
        bad = ~label.isin(names).to_numpy() & (label != "").to_numpy()
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise row_error(f"label is not one of the levels ({int(bad.sum()):,} row(s) in all)", source=source,
                             row=pos + 1, offset=offset, column=label_col, value=label.iloc[pos],
                             allowed="one of: " + ", ".join(names))
    return pd.DataFrame({"item": item.to_numpy(dtype=object), "agent": agent.to_numpy(dtype=object),
                         "rater": rater.to_numpy(dtype=object), "label": label.to_numpy(dtype=object),
                         "flag": flag, "skip": skip, "qc": np.zeros(len(frame), dtype=bool),
                         "row": np.arange(1, len(frame) + 1)})


def read_toy_json(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read the JSON format of NVIDIA's reliability notebook into judgment rows (QC rows have ``qc=True``).

    The file is a JSON list with one object per item::

        [{"output_values": {"<evaluator id>": {"item_flag": "No", "best": "response_1"}, ...},
          "QC": {"<qc id>": {"item_flag": "No", "best": "response_2"}}}, ...]

    Item ids are the 1-based positions in the list (``row`` too); ``best`` is the label (``response_1``,
    ``response_2``, ``tie``); ``item_flag`` Yes/No is the flag (``best`` may be missing when flagged); an
    optional ``skip`` (yes/no) is read too.
    """
    path = Path(path)
    source = str(path)
    if not path.is_file():
        raise InputError("file not found", file=source, allowed="an existing JSON file")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid JSON ({exc})", file=source,
                         allowed='a JSON list of {"output_values": {...}, "QC": {...}} objects') from exc
    allowed_item = 'an object {"output_values": {rater: {"item_flag", "best"}}, "QC": {rater: {...}}}'
    if not isinstance(data, list) or not data:
        raise InputError("expected a non-empty JSON list of items", file=source, allowed=allowed_item)
    records: list[tuple[str, str, str, str, str, str, bool, int]] = []
    for number, entry in enumerate(data, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("output_values"), dict) \
                or not isinstance(entry.get("QC", {}), dict):
            raise InputError("item is not in the notebook's format", file=source, row=number,
                             value=str(entry)[:80], allowed=allowed_item)
        for block, is_qc in (("output_values", False), ("QC", True)):
            for rater, judgment in entry.get(block, {}).items():
                if not isinstance(judgment, dict):
                    raise InputError("judgment is not an object", file=source, row=number, column=block,
                                     value=judgment, allowed='{"item_flag": "No", "best": "response_1"}')
                records.append((str(number), "", str(rater), str(judgment.get("best") or ""),
                                str(judgment.get("item_flag") or ""), str(judgment.get("skip") or ""), is_qc,
                                number))
    raw = pd.DataFrame(records, columns=["item", "agent", "rater", "best", "item_flag", "skip", "qc", "row"])
    flag = _bool_column(raw, "item_flag", source=source)
    skip = _bool_column(raw, "skip", source=source)
    missing = (raw["best"] == "").to_numpy() & ~flag & ~skip
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise InputError("no 'best' on a judgment that is not flagged", file=source, row=int(raw["row"].iloc[pos]),
                         column="best", value=raw["rater"].iloc[pos], allowed="response_1, response_2 or tie")
    return pd.DataFrame({"item": raw["item"], "agent": raw["agent"], "rater": raw["rater"], "label": raw["best"],
                         "flag": flag, "skip": skip, "qc": raw["qc"].to_numpy(dtype=bool), "row": raw["row"]})


def read_judgments(
    path: str | os.PathLike[str],
    *,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    format: str | None = None,
    default_agent: str | None = None,
) -> pd.DataFrame:
    """Read judgments for :func:`reliability_vs_qc`: a ``.json`` file in the notebook's format
    (:func:`read_toy_json`), else CSV/TSV/JSONL/Parquet with optional ``flag``/``skip`` columns."""
    path = Path(path)
    if format is None and path.suffix.lower() == ".json":
        return read_toy_json(path)
    frame = read_table_file(path, format=format)
    return judgments_from_frame(frame, columns=columns, levels=levels, source=str(path),
                                default_agent=default_agent)


def read_gold(
    path: str | os.PathLike[str],
    *,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    format: str | None = None,
) -> pd.DataFrame:
    """Read a QC (gold) file: ``item[, agent], label[, flag][, skip]``, one row per item (or response)."""
    frame = read_table_file(path, format=format)
    gold = judgments_from_frame(frame, columns=columns, levels=levels, source=str(path), require_rater=False)
    return gold.assign(qc=True, rater="<gold>")


# ====================================================================================== the result
@dataclass(frozen=True)
class ReliabilityResult:
    """What :func:`reliability_vs_qc` returns.

    Attributes:
        evaluators: one row per evaluator (most applicable items first): ``evaluator, reliability`` (matches /
            applicable; NaN when nothing is applicable), ``correct, applicable, ci_low, ci_high`` (Wilson
            interval), ``flag_mismatch_pct, flag_mismatches, flag_compared`` (items neither skipped),
            ``total_items`` (items judged that have QC), ``skipped`` (evaluator or QC skipped), ``excluded``
            (items without QC, or without consensus), ``few_items`` (applicable < ``min_items``).
        overall: pooled ``reliability, correct, applicable, ci_low, ci_high, flag_mismatch_pct,
            flag_mismatches, flag_compared, total_items, skipped, excluded``, plus ``qc_items``,
            ``qc_flagged, qc_flagged_pct`` (share of items QC flagged) and ``evaluators``.
        settings: the QC source and options.
        notes: what was excluded and why, and the few-items warnings.
    """

    evaluators: pd.DataFrame
    overall: dict[str, Any]
    settings: dict[str, Any]
    notes: tuple[str, ...] = field(default=())

    def table(self) -> pd.DataFrame:
        """The notebook's table: evaluators plus an ``Overall`` row, with reliability in percent."""
        rows = self.evaluators.copy()
        rows.loc[len(rows)] = {**{c: self.overall.get(c, np.nan) for c in rows.columns}, "evaluator": "Overall",
                               "few_items": False}
        return rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: NaN becomes None."""
        frame = self.evaluators.astype(object).where(self.evaluators.notna(), None)
        records = [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
                   for row in frame.to_dict("records")]
        overall = {k: (None if isinstance(v, float) and v != v else (v.item() if isinstance(v, np.generic) else v))
                   for k, v in self.overall.items()}
        return {"settings": self.settings, "overall": overall, "evaluators": records, "notes": list(self.notes)}


# ====================================================================================== the computation
def _as_judgments(data: pd.DataFrame | AnnotationTable) -> pd.DataFrame:
    if isinstance(data, AnnotationTable):
        frame = data.to_frame()
        return frame.assign(flag=False, skip=False, qc=False, row=np.arange(1, len(frame) + 1))[_COLUMNS]
    if set(_COLUMNS) <= set(data.columns):
        return data[_COLUMNS].reset_index(drop=True)
    return judgments_from_frame(data)


def _duplicates(frame: pd.DataFrame, keys: list[str], policy: str, *, source: str, what: str) -> pd.DataFrame:
    repeat = frame.duplicated(keys, keep="first").to_numpy()
    if not repeat.any():
        return frame
    if policy == "error":
        pos = int(np.flatnonzero(repeat)[0])
        first = frame.loc[frame[keys].eq(frame.iloc[pos][keys]).all(axis=1), "row"].tolist()[:4]
        raise InputError(f"{int(repeat.sum()):,} row(s) repeat a {what} judged on an earlier row: rows "
                         + ", ".join(str(r) for r in first), file=source, row=int(frame["row"].iloc[pos]),
                         value=" / ".join(str(frame.iloc[pos][k]) for k in keys),
                         allowed="one judgment per " + what + " (duplicates='first' or 'last' keeps one)")
    keep = ~frame.duplicated(keys, keep="first" if policy == "first" else "last").to_numpy()
    return frame.loc[keep].reset_index(drop=True)


def _unit_codes(*frames: pd.DataFrame, by_item_only: bool = False) -> list[np.ndarray]:
    """One integer code per (item, agent) (or per item), shared by all frames."""
    keys = [f["item"].astype(str) if by_item_only else f["item"].astype(str) + "\x1f" + f["agent"].astype(str)
            for f in frames]
    codes, _ = pd.factorize(pd.concat(keys, ignore_index=True))
    out, start = [], 0
    for key in keys:
        out.append(codes[start:start + len(key)].astype(np.int64))
        start += len(key)
    return out


def reliability_vs_qc(
    judgments: pd.DataFrame | AnnotationTable,
    *,
    qc_rater: str | Sequence[str] | None = None,
    gold: pd.DataFrame | None = None,
    consensus: bool = False,
    consensus_min: int = 2,
    min_items: int = 10,
    confidence: float = 0.95,
    duplicates: str = "error",
    source: str = "<DataFrame>",
) -> ReliabilityResult:
    """Per-evaluator reliability against QC (see the module docstring for the definitions).

    Args:
        judgments: rows ``item, agent, rater, label, flag, skip`` (:func:`read_judgments` /
            :func:`judgments_from_frame`; a raw frame is validated here), or an :class:`AnnotationTable`.
        qc_rater: the QC rater id(s); their judgments are QC (at most one per item), everyone else is evaluated.
        gold: QC labels (:func:`read_gold`): matched on (item, agent) when it has agents, else on item.
        consensus: QC = the strict-majority judgment of the *other* raters of the item (leave-one-out), first
            on the flag, then on the label among those who did not flag it; items with fewer than
            ``consensus_min`` other raters or without a strict majority are excluded and counted.
        min_items: evaluators with fewer applicable items are marked ``few_items`` and warned about.
        confidence: level of the Wilson intervals.
        duplicates: the same rater twice on an item: ``"error"``, ``"first"`` or ``"last"``.
        source: the input's name in messages.

    Without ``qc_rater``, ``gold`` or ``consensus`` the QC must be embedded in the input (``qc`` column,
    as :func:`read_toy_json` gives).
    """
    if duplicates not in ("error", "first", "last"):
        raise ValueError(f"duplicates={duplicates!r}; allowed: 'error', 'first', 'last'")
    if min_items < 0 or consensus_min < 1 or not 0 < confidence < 1:
        raise ValueError("min_items must be >= 0, consensus_min >= 1 and confidence in (0, 1)")
    frame = _as_judgments(judgments)
    chosen = [name for name, given in (("qc_rater", qc_rater is not None), ("gold", gold is not None),
                                       ("consensus", consensus)) if given]
    if len(chosen) > 1:
        raise ValueError(f"give one QC source, not {' and '.join(chosen)}")
    if qc_rater is not None:
        ids = [qc_rater] if isinstance(qc_rater, str) else [str(v) for v in qc_rater]
        is_qc = frame["rater"].isin(ids).to_numpy()
        if not is_qc.any():
            raise InputError("no judgment by the QC rater", file=source, column="rater", value=", ".join(ids),
                             allowed="rater ids present, e.g. " + ", ".join(map(str, frame["rater"].unique()[:5])))
        frame = frame.assign(qc=is_qc)
        mode = "rater"
    elif gold is not None:
        frame = frame.assign(qc=False)
        mode = "gold"
    elif consensus:
        frame = frame.assign(qc=False)
        mode = "consensus"
    else:
        if not frame["qc"].any():
            raise ValueError("no QC: give qc_rater, gold or consensus=True (or QC embedded in the input)")
        mode = "embedded"
    frame = _duplicates(frame, ["item", "agent", "rater"], duplicates, source=source, what="(item, agent, rater)")
    evaluations = frame.loc[~frame["qc"].to_numpy()].reset_index(drop=True)
    if evaluations.empty:
        raise InputError("no evaluator judgments besides QC", file=source, allowed="judgments by other raters")
    if mode != "gold":
        qc_rows = frame.loc[frame["qc"].to_numpy()].reset_index(drop=True)
    else:
        assert gold is not None
        qc_rows = (gold[_COLUMNS] if set(_COLUMNS) <= set(gold.columns) else
                   judgments_from_frame(gold, require_rater=False)).reset_index(drop=True)

    labels, _ = pd.factorize(pd.concat([evaluations["label"], qc_rows["label"]], ignore_index=True))
    e_label = labels[: len(evaluations)].astype(np.int64)
    q_label_rows = labels[len(evaluations):].astype(np.int64)
    e_flag = evaluations["flag"].to_numpy(dtype=bool)
    e_skip = evaluations["skip"].to_numpy(dtype=bool)
    notes: list[str] = []

    if mode == "consensus":
        has_qc, q_flag, q_skip, q_label = _consensus(evaluations, e_label, e_flag, e_skip, consensus_min)
        excluded_reason = "without a consensus of the other raters"
    else:
        by_item = mode == "gold" and (qc_rows["agent"] == "").all() and not (evaluations["agent"] == "").all()
        e_unit, q_unit = _unit_codes(evaluations, qc_rows, by_item_only=bool(by_item))
        if by_item:
            notes.append("the QC file has no agent column: its label applies to every agent's response to the item")
        repeat = pd.Series(q_unit).duplicated().to_numpy()
        if repeat.any():
            pos = int(np.flatnonzero(repeat)[0])
            raise InputError(f"{int(repeat.sum()):,} item(s) have more than one QC judgment", file=source,
                             row=int(qc_rows["row"].iloc[pos]), value=str(qc_rows["item"].iloc[pos]),
                             allowed="one QC judgment per item")
        n_units = int(max(e_unit.max(initial=-1), q_unit.max(initial=-1))) + 1
        where = np.full(n_units, -1, dtype=np.int64)
        where[q_unit] = np.arange(q_unit.size)
        index = where[e_unit]
        has_qc = index >= 0
        safe = np.where(has_qc, index, 0)
        q_flag = qc_rows["flag"].to_numpy(dtype=bool)[safe] & has_qc
        q_skip = qc_rows["skip"].to_numpy(dtype=bool)[safe] & has_qc
        q_label = np.where(has_qc, q_label_rows[safe], -1)
        excluded_reason = "without a QC judgment"
        used_units = np.unique(q_unit[np.isin(q_unit, e_unit)])
        unused = int(q_unit.size - used_units.size)
        if unused:
            notes.append(f"{unused:,} QC judgment(s) are of items no evaluator judged")

    considered = has_qc
    skipped = considered & (e_skip | q_skip)
    compared = considered & ~e_skip & ~q_skip
    mismatch = compared & (e_flag != q_flag)
    applicable = compared & ~e_flag & ~q_flag
    correct = applicable & (e_label == q_label)

    rater_code, raters = pd.factorize(evaluations["rater"], sort=True)
    counts = {name: np.bincount(rater_code, weights=values.astype(float), minlength=len(raters)).astype(np.int64)
              for name, values in (("correct", correct), ("applicable", applicable), ("mismatch", mismatch),
                                   ("compared", compared), ("total", considered), ("skipped", skipped),
                                   ("excluded", ~considered))}
    low, high = (np.clip(bound, 0.0, 1.0) for bound in
                 wilson_interval(counts["correct"], counts["applicable"], confidence))
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(counts["applicable"] > 0, counts["correct"] / np.maximum(counts["applicable"], 1), np.nan)
        mismatch_pct = np.where(counts["compared"] > 0, 100.0 * counts["mismatch"] / np.maximum(counts["compared"], 1),
                                np.nan)
    evaluators = pd.DataFrame({
        "evaluator": np.asarray(raters, dtype=object),
        "reliability": rel,
        "correct": counts["correct"],
        "applicable": counts["applicable"],
        "ci_low": np.asarray(low, dtype=float),
        "ci_high": np.asarray(high, dtype=float),
        "flag_mismatch_pct": mismatch_pct,
        "flag_mismatches": counts["mismatch"],
        "flag_compared": counts["compared"],
        "total_items": counts["total"],
        "skipped": counts["skipped"],
        "excluded": counts["excluded"],
        "few_items": counts["applicable"] < min_items,
    })
    # keep first-appearance order of the input (as the notebook does), stable
    first_seen = pd.factorize(evaluations["rater"])[1]
    evaluators = evaluators.set_index("evaluator").loc[list(first_seen)].reset_index()

    sums = {name: int(values.sum()) for name, values in counts.items()}
    o_low, o_high = (np.clip(bound, 0.0, 1.0) for bound in
                     wilson_interval(sums["correct"], sums["applicable"], confidence))
    if mode == "consensus":
        qc_items = int(considered.sum())
        qc_flagged = int((q_flag & considered).sum())
    else:
        in_play = np.isin(np.arange(q_unit.size), index[has_qc])
        qc_items = int(in_play.sum())
        qc_flagged = int((qc_rows["flag"].to_numpy(dtype=bool) & in_play).sum())
    overall = {
        "reliability": sums["correct"] / sums["applicable"] if sums["applicable"] else float("nan"),
        "correct": sums["correct"], "applicable": sums["applicable"],
        "ci_low": float(o_low), "ci_high": float(o_high),
        "flag_mismatch_pct": 100.0 * sums["mismatch"] / sums["compared"] if sums["compared"] else float("nan"),
        "flag_mismatches": sums["mismatch"], "flag_compared": sums["compared"],
        "total_items": sums["total"], "skipped": sums["skipped"], "excluded": sums["excluded"],
        "qc_items": qc_items, "qc_flagged": qc_flagged,
        "qc_flagged_pct": 100.0 * qc_flagged / qc_items if qc_items else float("nan"),
        "evaluators": len(evaluators),
    }
    if sums["excluded"]:
        notes.append(f"{sums['excluded']:,} evaluator judgment(s) {excluded_reason} were excluded")
    if sums["skipped"]:
        notes.append(f"{sums['skipped']:,} judgment(s) skipped by the evaluator or QC are not applicable")
    few = evaluators.loc[evaluators["few_items"], "evaluator"].tolist()
    if few:
        notes.append(f"{len(few)} evaluator(s) with fewer than {min_items} applicable items (their reliability "
                     "may be high or low by chance): " + ", ".join(map(str, few[:20]))
                     + (" ..." if len(few) > 20 else ""))
    settings = {"qc": mode, "qc_rater": None if qc_rater is None else
                ([qc_rater] if isinstance(qc_rater, str) else list(qc_rater)),
                "consensus_min": consensus_min if mode == "consensus" else None, "min_items": min_items,
                "confidence": confidence, "duplicates": duplicates, "source": source}
    return ReliabilityResult(evaluators=evaluators, overall=overall, settings=settings, notes=tuple(notes))


def _consensus(evaluations: pd.DataFrame, label: np.ndarray, flag: np.ndarray, skip: np.ndarray,
               minimum: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Leave-one-out strict-majority QC for every judgment: (has consensus, QC flag, QC skip, QC label)."""
    (unit,) = _unit_codes(evaluations)
    n_units = int(unit.max()) + 1
    n_labels = int(label.max()) + 1
    active = ~skip
    rated = active & ~flag
    total = np.bincount(unit, weights=active, minlength=n_units)[unit] - active
    flagged = np.bincount(unit, weights=active & flag, minlength=n_units)[unit] - (active & flag)
    per_label = np.zeros((n_units, n_labels))
    np.add.at(per_label, (unit[rated], label[rated]), 1.0)
    others = per_label[unit]
    others[np.arange(unit.size)[rated], label[rated]] -= 1.0
    unflagged = total - flagged
    top = others.argmax(axis=1)
    top_count = others[np.arange(unit.size), top]
    q_flag = 2 * flagged > total
    label_majority = 2 * top_count > unflagged
    has = (total >= minimum) & (q_flag | ((2 * flagged < total) & label_majority))
    return has, q_flag & has, np.zeros(unit.size, dtype=bool), np.where(has & ~q_flag, top, -1)


# ====================================================================================== the plot
def plot_reliability(result: ReliabilityResult, path: str | os.PathLike[str], *, dpi: int = 150) -> Path:
    """Save the evaluators × metrics matrix (reliability %, flag mismatch %, total items; N in every cell) as PNG.

    Reliability is coloured red (0%) to green (100%), flag mismatch green (0%) to red (100%), as in the
    notebook; an ``Overall`` row closes the matrix.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result.table()
    n = len(rows)
    colours = np.ones((n, 3, 4))
    cmap = plt.get_cmap("RdYlGn")
    rel = rows["reliability"].to_numpy(dtype=float)
    mis = rows["flag_mismatch_pct"].to_numpy(dtype=float)
    colours[:, 0] = np.where(np.isfinite(rel)[:, None], cmap(np.nan_to_num(rel)), 1.0)
    colours[:, 1] = np.where(np.isfinite(mis)[:, None], cmap(1.0 - np.nan_to_num(mis) / 100.0), 1.0)
    colours[:, 2] = (0.93, 0.93, 0.93, 1.0)
    fig, ax = plt.subplots(figsize=(7.5, max(3.0, 1.4 + 0.42 * n)))
    ax.imshow(colours, aspect="auto")
    applicable = rows["applicable"].to_numpy(dtype=np.int64)
    compared = rows["flag_compared"].to_numpy(dtype=np.int64)
    totals = rows["total_items"].to_numpy(dtype=np.int64)
    names = [str(name) for name in rows["evaluator"]]
    for i in range(n):
        weight = "bold" if names[i] == "Overall" else "normal"
        cells = (
            "N/A" if not np.isfinite(rel[i]) else f"{100 * rel[i]:.0f}%",
            "N/A" if not np.isfinite(mis[i]) else f"{mis[i]:.0f}%",
            f"{totals[i]}",
        )
        ns = (f"N={applicable[i]}", f"N={compared[i]}", "items")
        for j, (text, sub) in enumerate(zip(cells, ns, strict=True)):
            luminance = float(colours[i, j, :3] @ np.array([0.299, 0.587, 0.114]))
            ax.text(j, i, f"{text}\n{sub}", ha="center", va="center", fontsize=8, fontweight=weight,
                    color="white" if luminance < 0.45 else "black")
    ax.set_xticks(range(3), ["Reliability (%)", "Flag mismatch (%)", "Total items (count)"])
    ax.set_yticks(range(n), [str(e) + (" *" if few else "") for e, few in zip(rows["evaluator"], rows["few_items"],
                                                                               strict=True)])
    ax.xaxis.tick_top()
    ax.set_xlabel(f"metric (N = items in the denominator; * = fewer than {result.settings['min_items']} "
                  "applicable items)")
    ax.set_ylabel("evaluator")
    ax.set_title(f"Reliability against QC ({result.settings['qc']}): overall "
                 + ("N/A" if not np.isfinite(result.overall["reliability"]) else
                    f"{100 * result.overall['reliability']:.2f}%"), pad=28)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return out
