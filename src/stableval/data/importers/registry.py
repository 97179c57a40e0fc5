"""The importers: every tool whose exports stableval reads, declared once, importable without pandas.

One :class:`Importer` per tool names its reader (``"module:function"``, imported on first use), what the export
is, what it gives and what it leaves out. The command line derives ``--from`` and ``stableval convert NAME`` from
:data:`IMPORTERS`, and ``docs/importers.md`` has one row per name (``tests/data/test_importers.py`` checks it).

>>> list(IMPORTERS)[:3], IMPORTERS["arena"].gives
(['label-studio', 'argilla', 'mturk'], 'pairwise votes')
>>> importer_named("labelstudio")
Traceback (most recent call last):
...
stableval.errors.InputError: option 'importer': unknown importer: got 'labelstudio'; allowed: label-studio, argilla, \
mturk, prolific, arena, alpaca-eval, mt-bench-judge, inspect-ai
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stableval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data.importers.imported import Imported
    from stableval.data.options import InputOptions

__all__ = ["ALWAYS_TAKEN", "IMPORTERS", "Importer", "import_file", "importer_named"]

#: Options every importer takes: how the judgments it gives are deduplicated and credited, and the check that
#: they are (or are not) pairwise votes.
ALWAYS_TAKEN: tuple[str, ...] = ("duplicates", "credit", "pairwise")


@dataclass(frozen=True)
class Importer:
    """One tool's export format.

    Attributes:
        name: the name ``--from`` and ``stableval convert`` take.
        reader: ``"module:function"``; ``function(path, options)`` reads the export into an
            :class:`~stableval.data.importers.imported.Imported`.
        tool: the tool, as its users call it.
        export: which file of the tool is read.
        gives: ``ratings``, ``pairwise votes``, or both (which, depends on the question read).
        left_out: what is left out (and counted in the notes).
        takes: the input options it takes besides :data:`ALWAYS_TAKEN` (``levels``, ``default_agent``, and
            ``columns.ROLE`` for the tool's field that gives that role).
        rater_kind: ``"llm"`` when every rater is an LLM judge (the judgments get ``rater_kind=llm``).
        docs: where the tool documents the format.
    """

    name: str
    reader: str
    tool: str
    export: str
    gives: str
    left_out: str
    takes: tuple[str, ...] = ()
    rater_kind: str | None = None
    docs: str = ""

    def read(self, path: str | os.PathLike[str], options: InputOptions) -> Imported:
        """Run the reader (imported now) on ``path``.

        An option it does not take, a table that is not what ``options.pairwise`` asks for, and an export of which
        everything was left out raise :class:`~stableval.errors.InputError`; the rows get :attr:`rater_kind`.
        """
        source = str(path)
        taken = (*self.takes, *ALWAYS_TAKEN)
        given = [name for name, value in (("levels", options.levels), ("default_agent", options.default_agent),
                                          ("format", options.format)) if value is not None]
        given += [f"columns.{role}" for role in (options.columns or {})]
        for option in given:
            if option not in taken:
                listed = ", ".join("{" + name + "}" for name in self.takes)
                raise InputError(f"the {self.name} importer does not take {{{option}}}", file=source,
                                 allowed=f"for {self.name}: {listed}" if self.takes else
                                 f"none of the column, level or agent options for {self.name}",
                                 option=option, options={option: None, **{name: None for name in self.takes}})
        module, _, function = self.reader.partition(":")
        imported: Imported = getattr(importlib.import_module(module), function)(path, options)
        if self.rater_kind is not None:
            imported.frame["rater_kind"] = self.rater_kind
        if options.pairwise is not None and options.pairwise != imported.pairwise:
            gives = "pairwise votes" if imported.pairwise else "ratings, not pairwise votes"
            raise InputError(f"this {self.tool} export gives {gives}", file=source,
                             allowed="a command that reads " + ("pairwise votes" if imported.pairwise else "ratings"),
                             option="importer")
        if len(imported.frame) == 0:
            raise InputError("nothing to read: every record was left out (" + "; ".join(imported.notes) + ")",
                             file=source, allowed=f"{self.export} with at least one judgment")
        return imported


_HERE = "stableval.data.importers."
_ITEM_AGENT = ("columns.item", "columns.agent", "default_agent")

#: Every importer, by name.
IMPORTERS: dict[str, Importer] = {importer.name: importer for importer in (
    Importer("label-studio", _HERE + "label_studio:read_label_studio", "Label Studio",
             "the project's JSON export (Export → JSON: a list of tasks with their annotations)",
             "ratings (Rating, Number, Choices) or pairwise votes (Pairwise, Ranker)",
             "skipped (cancelled) annotations, tasks nobody annotated, annotations without an answer to the question, "
             "answers with several choices or per region, Ranker buckets; model predictions are not read",
             ("levels", "columns.label", "columns.agent_a", "columns.agent_b", *_ITEM_AGENT),
             docs="https://labelstud.io/guide/export.html"),
    Importer("argilla", _HERE + "argilla:read_argilla", "Argilla (2.x)",
             "the folder written by Dataset.to_disk (records.json and .argilla/settings.json) or the records.json "
             "of Dataset.records.to_json",
             "ratings (rating and label questions) or pairwise votes (ranking questions)",
             "discarded and draft responses, records without a submitted response to the question; suggestions "
             "are not read",
             ("levels", "columns.label", *_ITEM_AGENT),
             docs="https://docs.argilla.io/latest/how_to_guides/import_export/"),
    Importer("mturk", _HERE + "crowd:read_mturk", "Amazon Mechanical Turk",
             "a batch's results CSV (Download CSV: WorkerId, AssignmentStatus, Input.*, Answer.* columns)",
             "ratings (or pairwise votes when the inputs name two agents)",
             "rejected assignments (AssignmentStatus Rejected, or a reason in the Reject column) and assignments "
             "without an answer",
             ("levels", "columns.label", "columns.agent_a", "columns.agent_b", *_ITEM_AGENT),
             docs="https://docs.aws.amazon.com/AWSMechTurk/latest/RequesterUI/ReviewingResultsOutsideoftheRUI.html"),
    Importer("prolific", _HERE + "crowd:read_prolific", "Prolific",
             "a results CSV, one row per answer, with the participant's PROLIFIC_PID (or Participant id) and, "
             "joined from Prolific's submissions export, their Status",
             "ratings (or pairwise votes when the columns name two agents)",
             "submissions REJECTED, RETURNED or TIMED-OUT, and rows without an answer",
             ("levels", "columns.label", "columns.agent_a", "columns.agent_b", *_ITEM_AGENT),
             docs="https://researcher-help.prolific.com/"),
    Importer("arena", _HERE + "arena:read_arena", "Chatbot Arena / FastChat",
             "battle logs: a JSON list, JSON Lines or Parquet of battles (model_a, model_b, winner, judge)",
             "pairwise votes", "nothing: both-bad votes are kept as ties and counted",
             docs="https://huggingface.co/datasets/lmsys/chatbot_arena_conversations"),
    Importer("alpaca-eval", _HERE + "alpaca_eval:read_alpaca_eval", "AlpacaEval",
             "annotations.json (or a results folder: every annotations.json under it)",
             "pairwise votes", "annotations without a preference (the judge's answer could not be parsed)",
             rater_kind="llm", docs="https://github.com/tatsu-lab/alpaca_eval#interpreting-annotations"),
    Importer("mt-bench-judge", _HERE + "mt_bench:read_mt_bench_judgments", "MT-Bench (FastChat llm_judge)",
             "model_judgment/gpt-4_pair.jsonl (pairwise) or gpt-4_single.jsonl (single-answer grading)",
             "pairwise votes (pair) or ratings 1–10 (single)",
             "judgments marked error (pair) or scored -1 (single): the judge's verdict could not be parsed",
             rater_kind="llm", docs="https://github.com/lm-sys/FastChat/tree/main/fastchat/llm_judge"),
    Importer("inspect-ai", _HERE + "inspect_logs:read_inspect_logs", "Inspect (inspect_ai)",
             "eval logs: a .json log, an .eval log, or a folder of them (one model each)",
             "ratings: one per sample per scorer (the scorer is the rater)",
             "samples that ended in an error or have no score, and scores that are not one value (dicts, lists)",
             ("levels", "columns.label"), rater_kind="llm",
             docs="https://inspect.aisi.org.uk/eval-logs.html"),
)}


def import_file(path: str | os.PathLike[str], options: InputOptions) -> Imported:
    """Read ``path`` with the importer ``options.importer`` names (:meth:`Importer.read`)."""
    return importer_named(str(options.importer)).read(path, options)


def importer_named(name: str) -> Importer:
    """The importer called ``name`` (``Label_Studio`` and ``label-studio`` both work); an unknown name raises
    :class:`~stableval.errors.InputError` naming the option ``importer`` and every name."""
    key = str(name).strip().lower().replace("_", "-")
    if key not in IMPORTERS:
        raise InputError("unknown importer", value=name, allowed=", ".join(IMPORTERS), option="importer")
    return IMPORTERS[key]
