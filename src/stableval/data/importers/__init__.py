"""Importers: the exports of the tools people rate with, read as ratings or pairwise votes.

One module per tool (:mod:`~stableval.data.importers.label_studio`, :mod:`~stableval.data.importers.argilla`,
:mod:`~stableval.data.importers.crowd` for Mechanical Turk and Prolific, :mod:`~stableval.data.importers.arena`,
:mod:`~stableval.data.importers.alpaca_eval`, :mod:`~stableval.data.importers.mt_bench`,
:mod:`~stableval.data.importers.inspect_logs`), each declared once in :data:`IMPORTERS`
(:mod:`~stableval.data.importers.registry`). ``InputOptions(importer=NAME)`` — ``--from NAME`` on every command
that reads ratings — makes :func:`~stableval.data.load` read the file with that importer; ``stableval convert
NAME`` writes what it gives to a table file. Each importer counts what it leaves out in the table's notes.

>>> from stableval.data.importers import IMPORTERS
>>> IMPORTERS["label-studio"].tool, IMPORTERS["mt-bench-judge"].rater_kind
('Label Studio', 'llm')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.data.importers.imported import Imported as Imported
    from stableval.data.importers.registry import (
        IMPORTERS as IMPORTERS,
        Importer as Importer,
        import_file as import_file,
        importer_named as importer_named,
    )

__getattr__, __dir__, __all__ = lazy_package(globals())
