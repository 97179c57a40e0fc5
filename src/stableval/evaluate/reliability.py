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
QC is a designated rater (``qc_rater``), a gold file (``gold``, :func:`stableval.datasets.gold.read_gold`), QC
embedded in the input (the notebook's JSON format, :func:`stableval.datasets.nvidia_reliability.read_toy_json`), or
the leave-one-out consensus of the other raters (``consensus=True``; items without a strict majority are excluded
and counted). Judgment files are read by :func:`stableval.datasets.judgments.read_judgments`.

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

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import jsonable, records
from stableval.console import Displayed
from stableval.data.table import AnnotationTable
from stableval.datasets.gold import GOLD_ROLES, GoldLabels
from stableval.datasets.judgments import JUDGMENT_COLUMNS, judgments_from_frame
from stableval.errors import InputError
from stableval.evaluate.intervals import wilson_interval

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["ReliabilityResult", "reliability_vs_qc"]

_COLUMNS = list(JUDGMENT_COLUMNS)


# ====================================================================================== the result
def _pct(value: float, digits: int = 1) -> str:
    return "N/A" if value != value else f"{100 * value:.{digits}f}%"


@dataclass(frozen=True)
class ReliabilityResult(Displayed):
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

    def to_frame(self) -> pd.DataFrame:
        """The notebook's table (:meth:`table`)."""
        return self.table()

    def render(self, console: Console) -> None:
        """The reliability table (evaluators, then Overall) and the share of items QC flagged."""
        from rich import box
        from rich.table import Table

        overall, settings = self.overall, self.settings
        qc = {"rater": f"rater(s) {', '.join(settings['qc_rater'] or [])}", "gold": "the QC file",
              "consensus": f"consensus of the other raters (>= {settings['consensus_min']})",
              "embedded": "QC judgments in the input"}[settings["qc"]]
        console.print(f"[bold]{settings['source']}[/]: {overall['evaluators']} evaluators, "
                      f"{overall['total_items']:,} evaluator judgments with QC; QC = {qc}")
        confidence = round(settings["confidence"] * 100)
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title="Reliability against QC", title_justify="left")
        for name in ("Evaluator", "Reliability", "Correct / applicable", f"{confidence}% CI (Wilson)",
                     "Flag mismatch", "Total items", "Skipped", "Excluded"):
            table.add_column(name, justify="left" if name == "Evaluator" else "right")
        row: Any  # a row of the table (itertuples)
        for row in self.table().itertuples(index=False):
            name = str(row.evaluator) + (" *" if row.few_items else "")
            interval = "" if row.ci_low != row.ci_low else f"[{_pct(row.ci_low)}, {_pct(row.ci_high)}]"
            mismatch = "N/A" if row.flag_mismatch_pct != row.flag_mismatch_pct else f"{row.flag_mismatch_pct:.1f}%"
            table.add_row(name, _pct(row.reliability, 2), f"{int(row.correct)}/{int(row.applicable)}", interval,
                          mismatch, f"{int(row.total_items):,}", f"{int(row.skipped):,}", f"{int(row.excluded):,}",
                          style="bold" if row.evaluator == "Overall" else None)
        console.print(table)
        flagged = overall["qc_flagged_pct"]
        console.print(f"Overall prompts flagged as non-ratable by QC: "
                      f"{'N/A' if flagged != flagged else f'{flagged:.2f}%'} ({overall['qc_flagged']:,} of "
                      f"{overall['qc_items']:,})")
        console.print(f"Overall reliability across all evaluators: {_pct(overall['reliability'], 2)} "
                      f"({overall['correct']:,}/{overall['applicable']:,})")
        if self.evaluators["few_items"].any():
            console.print(f"* fewer than {settings['min_items']} applicable items: read that reliability with care.")
        for note in self.notes:
            console.print(f"note: {note}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: NaN becomes None."""
        return {"settings": jsonable(self.settings), "overall": jsonable(self.overall),
                "evaluators": records(self.evaluators), "notes": list(self.notes)}


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
                         options={"duplicates": "first|last"},
                         allowed="one judgment per " + what + " ({duplicates} keeps one)")
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


@dataclass(frozen=True)
class _Aligned:
    """Every evaluator judgment next to its QC judgment (the align step of :func:`reliability_vs_qc`)."""

    evaluations: pd.DataFrame  # the evaluator judgments (J rows)
    label: np.ndarray          # (J,) label code of each judgment
    has_qc: np.ndarray         # (J,) a QC judgment (or a consensus) exists for its item
    q_flag: np.ndarray         # (J,) QC flagged the item
    q_skip: np.ndarray         # (J,) QC skipped it
    q_label: np.ndarray        # (J,) QC's label code (-1 without)
    qc_items: int              # QC judgments of items some evaluator judged
    qc_flagged: int            # ... of which QC flagged
    excluded_reason: str
    notes: tuple[str, ...]


def reliability_vs_qc(
    judgments: pd.DataFrame | AnnotationTable,
    *,
    qc_rater: str | Sequence[str] | None = None,
    gold: GoldLabels | pd.DataFrame | None = None,
    consensus: bool = False,
    consensus_min: int = 2,
    min_items: int = 10,
    confidence: float = 0.95,
    duplicates: str = "error",
    source: str = "<DataFrame>",
) -> ReliabilityResult:
    """Per-evaluator reliability against QC (see the module docstring for the definitions).

    Steps: resolve the QC source, align every evaluator judgment with its QC judgment, count matches, flag
    mismatches and skips per evaluator, and summarise (per evaluator and pooled, with Wilson intervals).

    Args:
        judgments: rows ``item, agent, rater, label, flag, skip`` (:func:`~stableval.datasets.judgments.
            read_judgments` / :func:`~stableval.datasets.judgments.judgments_from_frame`; a raw frame is
            validated here), or an :class:`AnnotationTable`.
        qc_rater: the QC rater id(s); their judgments are QC (at most one per item), everyone else is evaluated.
        gold: QC labels (:func:`~stableval.datasets.gold.read_gold`, or a frame in the same format): matched on
            (item, agent) when it has agents, else on item.
        consensus: QC = the strict-majority judgment of the *other* raters of the item (leave-one-out), first
            on the flag, then on the label among those who did not flag it; items with fewer than
            ``consensus_min`` other raters or without a strict majority are excluded and counted.
        min_items: evaluators with fewer applicable items are marked ``few_items`` and warned about.
        confidence: level of the Wilson intervals.
        duplicates: the same rater twice on an item: ``"error"``, ``"first"`` or ``"last"``.
        source: the input's name in messages.

    Without ``qc_rater``, ``gold`` or ``consensus`` the QC must be embedded in the input (``qc`` column,
    as :func:`~stableval.datasets.nvidia_reliability.read_toy_json` gives).
    """
    if duplicates not in ("error", "first", "last"):
        raise ValueError(f"duplicates={duplicates!r}; allowed: 'error', 'first', 'last'")
    if min_items < 0 or consensus_min < 1 or not 0 < confidence < 1:
        raise ValueError("min_items must be >= 0, consensus_min >= 1 and confidence in (0, 1)")
    frame, mode = _resolve_qc(_as_judgments(judgments), qc_rater=qc_rater, gold=gold, consensus=consensus,
                              source=source)
    frame = _duplicates(frame, ["item", "agent", "rater"], duplicates, source=source, what="(item, agent, rater)")
    evaluations = frame.loc[~frame["qc"].to_numpy()].reset_index(drop=True)
    if evaluations.empty:
        raise InputError("no evaluator judgments besides QC", file=source, allowed="judgments by other raters")
    aligned = _align(evaluations, _qc_rows(frame, gold, mode), mode=mode, consensus_min=consensus_min,
                     source=source)
    raters, counts = _count(aligned)
    evaluators = _evaluator_table(aligned.evaluations, raters, counts, confidence=confidence, min_items=min_items)
    overall = _overall(counts, aligned, n_evaluators=len(evaluators), confidence=confidence)
    notes = [*aligned.notes, *_summary_notes(overall, evaluators, aligned.excluded_reason, min_items)]
    settings = {"qc": mode, "qc_rater": None if qc_rater is None else
                ([qc_rater] if isinstance(qc_rater, str) else list(qc_rater)),
                "consensus_min": consensus_min if mode == "consensus" else None, "min_items": min_items,
                "confidence": confidence, "duplicates": duplicates, "source": source}
    return ReliabilityResult(evaluators=evaluators, overall=overall, settings=settings, notes=tuple(notes))


def _resolve_qc(frame: pd.DataFrame, *, qc_rater: str | Sequence[str] | None,
                gold: GoldLabels | pd.DataFrame | None, consensus: bool, source: str) -> tuple[pd.DataFrame, str]:
    """The judgments with their ``qc`` column set for the chosen QC source, and the mode's name."""
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
        return frame.assign(qc=is_qc), "rater"
    if gold is not None:
        return frame.assign(qc=False), "gold"
    if consensus:
        return frame.assign(qc=False), "consensus"
    if not frame["qc"].any():
        raise ValueError("no QC: give qc_rater, gold or consensus=True (or QC embedded in the input)")
    return frame, "embedded"


def _qc_rows(frame: pd.DataFrame, gold: GoldLabels | pd.DataFrame | None, mode: str) -> pd.DataFrame:
    """The QC judgments: the ``qc`` rows of the input, or the gold rows."""
    if mode != "gold" or gold is None:
        return frame.loc[frame["qc"].to_numpy()].reset_index(drop=True)
    if isinstance(gold, GoldLabels):
        return gold.judgments()
    if set(_COLUMNS) <= set(gold.columns):
        return gold[_COLUMNS].reset_index(drop=True)
    return judgments_from_frame(gold, require_rater=False, roles=GOLD_ROLES).reset_index(drop=True)


def _align(evaluations: pd.DataFrame, qc_rows: pd.DataFrame, *, mode: str, consensus_min: int,
           source: str) -> _Aligned:
    """Each evaluator judgment's QC flag, skip and label: by consensus of the other raters, or by its unit."""
    labels, _ = pd.factorize(pd.concat([evaluations["label"], qc_rows["label"]], ignore_index=True))
    e_label = labels[: len(evaluations)].astype(np.int64)
    q_label_rows = labels[len(evaluations):].astype(np.int64)
    e_flag = evaluations["flag"].to_numpy(dtype=bool)
    if mode == "consensus":
        has, q_flag, q_skip, q_label = _consensus(evaluations, e_label, e_flag,
                                                  evaluations["skip"].to_numpy(dtype=bool), consensus_min)
        return _Aligned(evaluations, e_label, has, q_flag, q_skip, q_label, qc_items=int(has.sum()),
                        qc_flagged=int((q_flag & has).sum()),
                        excluded_reason="without a consensus of the other raters", notes=())
    notes: list[str] = []
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
    used_units = np.unique(q_unit[np.isin(q_unit, e_unit)])
    unused = int(q_unit.size - used_units.size)
    if unused:
        notes.append(f"{unused:,} QC judgment(s) are of items no evaluator judged")
    in_play = np.isin(np.arange(q_unit.size), index[has_qc])
    qc_flag = qc_rows["flag"].to_numpy(dtype=bool)
    return _Aligned(evaluations, e_label, has_qc, qc_flag[safe] & has_qc,
                    qc_rows["skip"].to_numpy(dtype=bool)[safe] & has_qc, np.where(has_qc, q_label_rows[safe], -1),
                    qc_items=int(in_play.sum()), qc_flagged=int((qc_flag & in_play).sum()),
                    excluded_reason="without a QC judgment", notes=tuple(notes))


def _count(aligned: _Aligned) -> tuple[pd.Index, dict[str, np.ndarray]]:
    """The evaluators (sorted) and, per evaluator, the judgments correct, applicable, flag-mismatched, compared
    (neither skipped), with QC (total), skipped and excluded (without QC)."""
    e_flag = aligned.evaluations["flag"].to_numpy(dtype=bool)
    e_skip = aligned.evaluations["skip"].to_numpy(dtype=bool)
    considered = aligned.has_qc
    skipped = considered & (e_skip | aligned.q_skip)
    compared = considered & ~e_skip & ~aligned.q_skip
    mismatch = compared & (e_flag != aligned.q_flag)
    applicable = compared & ~e_flag & ~aligned.q_flag
    correct = applicable & (aligned.label == aligned.q_label)
    rater_code, raters = pd.factorize(aligned.evaluations["rater"], sort=True)
    counts = {name: np.bincount(rater_code, weights=values.astype(float), minlength=len(raters)).astype(np.int64)
              for name, values in (("correct", correct), ("applicable", applicable), ("mismatch", mismatch),
                                   ("compared", compared), ("total", considered), ("skipped", skipped),
                                   ("excluded", ~considered))}
    return pd.Index(raters), counts


def _evaluator_table(evaluations: pd.DataFrame, raters: pd.Index, counts: dict[str, np.ndarray], *,
                     confidence: float, min_items: int) -> pd.DataFrame:
    """One row per evaluator, in the order evaluators first appear in the input (as the notebook does)."""
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
    first_seen = pd.factorize(evaluations["rater"])[1]
    return evaluators.set_index("evaluator").loc[list(first_seen)].reset_index()


def _overall(counts: dict[str, np.ndarray], aligned: _Aligned, *, n_evaluators: int,
             confidence: float) -> dict[str, Any]:
    """The pooled counts and rates over every evaluator, and the share of items QC flagged."""
    sums = {name: int(values.sum()) for name, values in counts.items()}
    o_low, o_high = (np.clip(bound, 0.0, 1.0) for bound in
                     wilson_interval(sums["correct"], sums["applicable"], confidence))
    qc_items, qc_flagged = aligned.qc_items, aligned.qc_flagged
    return {
        "reliability": sums["correct"] / sums["applicable"] if sums["applicable"] else float("nan"),
        "correct": sums["correct"], "applicable": sums["applicable"],
        "ci_low": float(o_low), "ci_high": float(o_high),
        "flag_mismatch_pct": 100.0 * sums["mismatch"] / sums["compared"] if sums["compared"] else float("nan"),
        "flag_mismatches": sums["mismatch"], "flag_compared": sums["compared"],
        "total_items": sums["total"], "skipped": sums["skipped"], "excluded": sums["excluded"],
        "qc_items": qc_items, "qc_flagged": qc_flagged,
        "qc_flagged_pct": 100.0 * qc_flagged / qc_items if qc_items else float("nan"),
        "evaluators": n_evaluators,
    }


def _summary_notes(overall: dict[str, Any], evaluators: pd.DataFrame, excluded_reason: str,
                   min_items: int) -> list[str]:
    """What was excluded or skipped, and which evaluators rated too few items."""
    notes = []
    if overall["excluded"]:
        notes.append(f"{overall['excluded']:,} evaluator judgment(s) {excluded_reason} were excluded")
    if overall["skipped"]:
        notes.append(f"{overall['skipped']:,} judgment(s) skipped by the evaluator or QC are not applicable")
    few = sorted(map(str, evaluators.loc[evaluators["few_items"], "evaluator"]))  # not in row order
    if few:
        notes.append(f"{len(few)} evaluator(s) with fewer than {min_items} applicable items (their reliability "
                     "may be high or low by chance): " + ", ".join(few[:20])
                     + (" ..." if len(few) > 20 else ""))
    return notes


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
