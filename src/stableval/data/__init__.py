"""The annotation table and its readers: files → validated, integer-coded :class:`AnnotationTable`.

One concept per module: :mod:`~stableval.data.files` (read and write table files, name rows),
:mod:`~stableval.data.columns` (column roles, ids, the CLI flag spellings), :mod:`~stableval.data.labels`
(levels, label codes, credit), :mod:`~stableval.data.duplicates` (the duplicate policy),
:mod:`~stableval.data.annotations` and :mod:`~stableval.data.pairwise` (the two readers) and
:mod:`~stableval.data.loader` (one input path above both: :class:`InputOptions`, :func:`load`, :func:`read_any`).
Names load lazily, so the command line starts without pandas; :mod:`~stableval.data.flags` spells the flags.

>>> from stableval.data import example_path, read_any
>>> table = read_any(example_path("mt_bench"), duplicates="keep")
>>> table.n_raters, table.n_agents, table.n_items
(65, 6, 80)
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from stableval._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data.annotations import annotations_from_frame, read_annotations
    from stableval.data.columns import ROLE_ALIASES
    from stableval.data.duplicates import DUPLICATE_POLICIES
    from stableval.data.files import FORMATS, output_format, read_table_file, write_frame
    from stableval.data.frames import as_table
    from stableval.data.labels import parse_list
    from stableval.data.loader import InputOptions, Loaded, load, load_frame, read_any
    from stableval.data.pairwise import (
        PAIRWISE_ALIASES,
        PAIRWISE_CREDIT,
        PAIRWISE_LEVELS,
        WINNER_VALUES,
        PairwiseTable,
        is_pairwise_frame,
        pairwise_from_frame,
        pairwise_to_annotations,
        read_pairwise,
    )
    from stableval.data.table import AnnotationTable, default_credit

#: public name → the module that defines it (loaded on first use, so the command line starts without pandas)
_HOME: dict[str, str] = {
    "annotations_from_frame": "stableval.data.annotations",
    "read_annotations": "stableval.data.annotations",
    "ROLE_ALIASES": "stableval.data.columns",
    "DUPLICATE_POLICIES": "stableval.data.duplicates",
    "FORMATS": "stableval.data.files",
    "as_table": "stableval.data.frames",
    "output_format": "stableval.data.files",
    "read_table_file": "stableval.data.files",
    "write_frame": "stableval.data.files",
    "parse_list": "stableval.data.labels",
    "InputOptions": "stableval.data.loader",
    "Loaded": "stableval.data.loader",
    "load": "stableval.data.loader",
    "load_frame": "stableval.data.loader",
    "read_any": "stableval.data.loader",
    "PAIRWISE_ALIASES": "stableval.data.pairwise",
    "PAIRWISE_CREDIT": "stableval.data.pairwise",
    "PAIRWISE_LEVELS": "stableval.data.pairwise",
    "WINNER_VALUES": "stableval.data.pairwise",
    "PairwiseTable": "stableval.data.pairwise",
    "is_pairwise_frame": "stableval.data.pairwise",
    "pairwise_from_frame": "stableval.data.pairwise",
    "pairwise_to_annotations": "stableval.data.pairwise",
    "read_pairwise": "stableval.data.pairwise",
    "AnnotationTable": "stableval.data.table",
    "default_credit": "stableval.data.table",
}

__all__ = [
    "DUPLICATE_POLICIES",
    "EXAMPLES",
    "FORMATS",
    "PAIRWISE_ALIASES",
    "PAIRWISE_CREDIT",
    "PAIRWISE_LEVELS",
    "ROLE_ALIASES",
    "WINNER_VALUES",
    "AnnotationTable",
    "InputOptions",
    "Loaded",
    "PairwiseTable",
    "annotations_from_frame",
    "as_table",
    "default_credit",
    "example_path",
    "is_pairwise_frame",
    "load",
    "load_frame",
    "output_format",
    "pairwise_from_frame",
    "pairwise_to_annotations",
    "parse_list",
    "read_annotations",
    "read_any",
    "read_pairwise",
    "read_table_file",
    "write_frame",
]

#: Bundled example name → file in ``stableval/examples`` (see its README.md for origin and license).
EXAMPLES: dict[str, str] = {
    "mt_bench": "mt_bench_turn1_votes.csv",
}


def example_path(name: str = "mt_bench") -> Path:
    """The path of a bundled example file.

    ``"mt_bench"``: 1,689 turn-1 MT-Bench expert/author pairwise votes (Zheng et al. 2023, CC BY 4.0); one
    judge voted twice on the same pair, so read it with ``duplicates="keep"``.

    >>> example_path().name
    'mt_bench_turn1_votes.csv'
    """
    if name not in EXAMPLES:
        raise ValueError(f"no bundled example {name!r}; allowed: {', '.join(EXAMPLES)}")
    resource = resources.files("stableval").joinpath("examples", EXAMPLES[name])
    path = Path(str(resource))
    if not path.is_file():
        raise FileNotFoundError(f"bundled example {name!r} is missing from the installation: {path}")
    return path


__getattr__, __dir__ = lazy_exports(globals(), _HOME, __all__)
