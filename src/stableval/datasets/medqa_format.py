"""The vocabulary of a Relabeled MedQA ratings file: its answer letters, the flags derived from each rating, the
columns read and the option that picks the missing-information flag.

Nothing here imports numpy or pandas, so ``stableval medqa --help`` and its usage errors are answered without them;
the reader, :mod:`stableval.datasets.medqa`, imports these names from here.

>>> MISSING_OPTION.cli, MISSING_OPTION.default, LETTERS
('--reason', 'important_info_missing', ('A', 'B', 'C', 'D'))
"""

from __future__ import annotations

from stableval._options import Option

__all__ = ["LETTERS", "MISSING_OPTION", "REASONS", "REQUIRED"]

#: The answer options of a MedQA (USMLE) question.
LETTERS = ("A", "B", "C", "D")
#: The flags derived from each rating, in the column order of :attr:`~stableval.datasets.medqa.MedQARatings.flags`.
REASONS = ("missing_info", "label_error", "multiple_answers")
#: The columns of ``medqa_relabelling.csv`` that are read.
REQUIRED = ("qid", "worker_id", "answer_idx", "blind_answers", "important_info_missing", "seen_change",
            "seen_answerable", "seen_answers")
#: Which rater column marks a question's information as missing: declared once, read by ``load_medqa(missing=)``
#: and by ``stableval medqa --reason``.
MISSING_OPTION = Option(
    "reason", str, "The rater flag that excludes a question for missing information: important_info_missing "
    "(the information is missing and important to answer; the paper's choice) or info_missing (any information "
    "missing; the authors' notebook).", default="important_info_missing",
    choices=("important_info_missing", "info_missing"))
