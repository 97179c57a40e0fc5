"""Crowdsourcing results CSVs → ratings (or pairwise votes): Amazon Mechanical Turk and Prolific.

**Mechanical Turk** (:func:`read_mturk`): a batch's results CSV (Manage → Results → Download CSV): one row per
assignment with ``HITId``, ``WorkerId``, ``AssignmentStatus`` (``Submitted``, ``Approved`` or ``Rejected``), the
HIT's inputs as ``Input.NAME`` and the worker's answers as ``Answer.NAME`` columns, and the ``Approve``/``Reject``
columns a requester fills to review offline. The worker is the rater. Rejected assignments (status ``Rejected``,
or a reason written in ``Reject``) are left out and counted.

**Prolific** (:func:`read_prolific`): Prolific hosts no questions; answers come from the survey or task tool,
which records the participant's ``PROLIFIC_PID``. Read a results CSV with one row per answer, the participant id
(``PROLIFIC_PID``, ``Participant id`` or ``participant_id``) and, joined from Prolific's submissions export, the
submission's ``Status``: ``REJECTED``, ``RETURNED``, ``TIMED-OUT`` and ``SCREENED-OUT`` rows are left out and
counted.

The answer read (the label) is the one answer column, or the one ``columns.label`` names (an MTurk answer with or
without its ``Answer.`` prefix). The item is an input named ``item``/``item_id``/``question_id``/...
(``columns.item``; MTurk falls back on the ``HITId``), the agent an input named ``agent``/``model``/...
(``columns.agent``) or ``default_agent``; inputs naming two agents (``agent_a``/``model_a`` and
``agent_b``/``model_b``) make the answers pairwise votes (``a``, ``b``, ``tie`` or the winner's name).

>>> import pathlib, tempfile
>>> from stableval.data.options import InputOptions
>>> path = pathlib.Path(tempfile.mkdtemp()) / "Batch_1_batch_results.csv"
>>> _ = path.write_text("HITId,WorkerId,AssignmentStatus,Input.item_id,Input.model,Answer.rating,Approve,Reject\\n"
...                     "H1,W1,Approved,q1,A,4,x,\\nH1,W2,Rejected,q1,A,1,,bot\\n")
>>> imported = read_mturk(path, InputOptions())
>>> imported.frame.to_dict("records"), imported.notes[-1]
([{'item': 'q1', 'agent': 'A', 'rater': 'W1', 'label': '4'}], 'left out 1 rejected assignment(s)')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace

import pandas as pd

from stableval.data.columns import ROLE_ALIASES
from stableval.data.files import read_table_file
from stableval.data.importers.imported import Imported, Rows
from stableval.data.importers.records import Tally, role_key
from stableval.data.importers.scales import label_scale
from stableval.data.options import InputOptions
from stableval.errors import InputError

__all__ = ["PROLIFIC_LEFT_OUT", "read_mturk", "read_prolific"]

#: Prolific submission statuses whose answers are left out.
PROLIFIC_LEFT_OUT: tuple[str, ...] = ("REJECTED", "RETURNED", "TIMED-OUT", "SCREENED-OUT")
_PARTICIPANT = ("prolific_pid", "participant id", "participant_id", "participant")


def _column(frame: pd.DataFrame, names: tuple[str, ...]) -> str | None:
    lowered = {str(c).strip().lower(): str(c) for c in frame.columns}
    return next((lowered[name] for name in names if name in lowered), None)


def read_mturk(path: str | os.PathLike[str], options: InputOptions) -> Imported:
    """Read a Mechanical Turk batch results CSV (see the module docstring)."""
    source = str(path)
    frame = read_table_file(path)
    if "WorkerId" not in frame.columns:
        raise InputError("no WorkerId column", file=source, allowed="a batch results CSV (HITId, WorkerId, "
                         "AssignmentStatus, Input.*, Answer.* columns)")
    if options.columns:  # an input may be named with or without its Input. prefix
        options = replace(options, columns={role: name.removeprefix("Input.") if role != "label" else name
                                            for role, name in options.columns.items()})
    inputs = {c[len("Input."):]: c for c in map(str, frame.columns) if c.startswith("Input.")}
    answers = {c[len("Answer."):]: c for c in map(str, frame.columns) if c.startswith("Answer.")}
    status = frame["AssignmentStatus"].str.strip().str.lower() if "AssignmentStatus" in frame.columns else None
    rejected = status.eq("rejected") if status is not None else pd.Series(False, index=frame.index)
    if "Reject" in frame.columns:
        rejected |= frame["Reject"].fillna("").str.strip().ne("")
    return _CrowdReader(source, frame, options, inputs=inputs, answers=answers, rater="WorkerId",
                        fallback_item="HITId" if "HITId" in frame.columns else None,
                        left_out={"rejected assignment(s)": rejected}).read("assignment(s)")


def read_prolific(path: str | os.PathLike[str], options: InputOptions) -> Imported:
    """Read a Prolific results CSV (see the module docstring)."""
    source = str(path)
    frame = read_table_file(path)
    rater = _column(frame, _PARTICIPANT)
    if rater is None:
        raise InputError("no participant id column", file=source,
                         allowed="a column PROLIFIC_PID, Participant id or participant_id")
    status_col = _column(frame, ("status",))
    left_out = {}
    if status_col is not None:
        status = frame[status_col].fillna("").str.strip().str.upper()
        for name in PROLIFIC_LEFT_OUT:
            left_out[f"answer(s) of {name} submissions"] = status.eq(name)
    columns = {str(c): str(c) for c in frame.columns if str(c) not in (rater, status_col)}
    return _CrowdReader(source, frame, options, inputs=columns, answers=columns, rater=rater, fallback_item=None,
                        left_out=left_out).read("row(s)")


class _CrowdReader:
    """One row per judgment of a results CSV."""

    def __init__(self, source: str, frame: pd.DataFrame, options: InputOptions, *, inputs: Mapping[str, str],
                 answers: Mapping[str, str], rater: str, fallback_item: str | None,
                 left_out: Mapping[str, pd.Series]) -> None:
        self.source, self.frame, self.options, self.rater, self.left_out = source, frame, options, rater, left_out
        self.inputs = inputs
        item = role_key(inputs, "item", options, source=source)
        if item is None and fallback_item is None:
            raise InputError("no column naming the item", file=source, allowed="a column item, item_id, "
                             "question_id, ..., or name one with {columns.item}", option="columns.item",
                             options={"columns.item": "NAME"})
        self.item = inputs[item] if item is not None else str(fallback_item)
        self.item_note = f"item: {self.item}" + ("" if item is not None else " (no input names the item)")
        agent = role_key(inputs, "agent", options, source=source)
        self.agent = inputs[agent] if agent is not None else None
        self.pair: tuple[str, str] | None = None
        if agent is None:
            a, b = (role_key(inputs, role, options, source=source) for role in ("agent_a", "agent_b"))
            if a is not None and b is not None:
                self.pair = inputs[a], inputs[b]
            elif options.default_agent is None:
                raise InputError("no column naming the agent", file=source,
                                 allowed="a column agent, model or system (or agent_a and agent_b for pairwise "
                                         "votes), or name one with {columns.agent}; or {default_agent} when one "
                                         "agent is rated", option="columns.agent",
                                 options={"columns.agent": "NAME", "default_agent": "NAME"})
        self.label = self._answer_column(answers)

    def _answer_column(self, answers: Mapping[str, str]) -> str:
        used = {self.item, self.agent, *(self.pair or ())}
        candidates = {name: column for name, column in answers.items() if column not in used}
        named = (self.options.columns or {}).get("label")
        if named is not None:
            key = named.removeprefix("Answer.") if named.removeprefix("Answer.") in answers else named
            if key not in candidates:
                raise InputError(f"no answer column {named!r}", file=self.source,
                                 allowed=", ".join(candidates) or "(no answer columns)", option="columns.label")
            return candidates[key]
        if len(candidates) == 1:
            return next(iter(candidates.values()))
        aliases = ROLE_ALIASES["label"] + (("winner", "preference", "choice") if self.pair else ())
        lowered = {name.strip().lower(): column for name, column in candidates.items()}
        found = next((lowered[a] for a in aliases if a in lowered), None)
        if found is None:
            raise InputError(f"{len(candidates)} answer columns; name the one to read with {{columns.label}}",
                             file=self.source, allowed=", ".join(candidates) or "(no answer columns)",
                             option="columns.label", options={"columns.label": "NAME"})
        return found

    def read(self, what: str) -> Imported:
        frame, tally = self.frame, Tally()
        keep = pd.Series(True, index=frame.index)
        for reason, mask in self.left_out.items():
            tally.add(reason, int((mask & keep).sum()))
            keep &= ~mask
        empty = frame[self.label].fillna("").str.strip().eq("") & keep
        tally.add(f"{what} without an answer in {self.label}", int(empty.sum()))
        keep &= ~empty
        rows = Rows(*(("item", "agent_a", "agent_b", "rater", "winner") if self.pair
                      else ("item", "agent", "rater", "label")))
        kept = frame[keep]
        text = {name: kept[name].fillna("").str.strip().tolist() for name in
                {self.item, self.rater, self.label, *([self.agent] if self.agent else []), *(self.pair or ())}}
        for k, number in enumerate((kept.index + 1).tolist()):
            if self.pair:
                rows.add(number, item=text[self.item][k], agent_a=text[self.pair[0]][k],
                         agent_b=text[self.pair[1]][k], rater=text[self.rater][k], winner=text[self.label][k])
            else:
                agent = text[self.agent][k] if self.agent else str(self.options.default_agent)
                rows.add(number, item=text[self.item][k], agent=agent, rater=text[self.rater][k],
                         label=text[self.label][k])
        notes = [f"{len(frame):,} {what} read; answer: {self.label}", self.item_note]
        fields = {"item": self.item, "rater": self.rater}
        levels = credit = None
        if self.pair:
            fields.update(agent_a=self.pair[0], agent_b=self.pair[1], winner=self.label)
        else:
            fields.update(agent=self.agent or "", label=self.label)
            if self.agent is None:
                notes.append(f"no agent column: every judgment is of agent {self.options.default_agent!r}")
            seen = sorted(set(rows.values["label"]))
            scale = label_scale(seen)
            if scale is None and self.options.levels is None and seen:
                raise InputError(f"the answers in {self.label} are words, whose order the file does not state",
                                 file=self.source, column=self.label, allowed="name them worst first with {levels}",
                                 option="levels", options={"levels": ",".join(seen)})
            if scale is not None:
                levels, credit = scale
                if self.options.levels is None:
                    notes.append(f"levels {levels[0]}..{levels[-1]}: the numbers answered (the file does not state "
                                 "the scale; name the full scale with levels)")
        return rows.imported(fields, [*notes, *tally.notes()], levels=levels, credit=credit)
