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

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.data.annotations import (
        annotations_from_frame as annotations_from_frame,
        read_annotations as read_annotations,
    )
    from stableval.data.columns import ROLE_ALIASES as ROLE_ALIASES
    from stableval.data.duplicates import DUPLICATE_POLICIES as DUPLICATE_POLICIES
    from stableval.data.files import (
        FORMATS as FORMATS,
        output_format as output_format,
        read_table_file as read_table_file,
        write_frame as write_frame,
    )
    from stableval.data.frames import as_table as as_table
    from stableval.data.labels import parse_list as parse_list
    from stableval.data.loader import (
        InputOptions as InputOptions,
        Loaded as Loaded,
        load as load,
        load_frame as load_frame,
        read_any as read_any,
    )
    from stableval.data.pairwise import (
        PAIRWISE_ALIASES as PAIRWISE_ALIASES,
        PAIRWISE_CREDIT as PAIRWISE_CREDIT,
        PAIRWISE_LEVELS as PAIRWISE_LEVELS,
        WINNER_VALUES as WINNER_VALUES,
        PairwiseTable as PairwiseTable,
        is_pairwise_frame as is_pairwise_frame,
        pairwise_from_frame as pairwise_from_frame,
        pairwise_to_annotations as pairwise_to_annotations,
        read_pairwise as read_pairwise,
    )
    from stableval.data.table import (
        AnnotationTable as AnnotationTable,
        JudgmentTable as JudgmentTable,
        default_credit as default_credit,
    )


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


__getattr__, __dir__, __all__ = lazy_package(globals())
