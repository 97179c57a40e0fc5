"""The annotation table and its readers: files → validated, integer-coded :class:`AnnotationTable`.

One concept per module: :mod:`~stableval.data.files` (read and write table files, name rows; a package with one
module per format), :mod:`~stableval.data.columns` (column roles, ids), :mod:`~stableval.data.labels` (levels,
label codes, credit), :mod:`~stableval.data.duplicates` (the duplicate policy), :mod:`~stableval.data.annotations`
and :mod:`~stableval.data.pairwise` (the two readers), :mod:`~stableval.data.options` (:class:`InputOptions`, how
to read a file) and :mod:`~stableval.data.loader` (one input path above both: :func:`load`, :func:`read_any`).
The exports of rating tools (Label Studio, Argilla, Mechanical Turk, ...) are read by
:mod:`~stableval.data.importers` when ``InputOptions(importer=NAME)`` names one. Names load lazily, so the command
line starts without pandas. Messages name options in Python terms
(:class:`~stableval.errors.InputError` ``option``); :mod:`~stableval.data.flags` is how the command line spells
them.

Parquet is read in four places, each for one case:

* :mod:`~stableval.data.files.parquet` — one Parquet file through :func:`read_table_file`: every column as text
  (or categories of text), every check and message of the other formats. The general reader: :func:`load` uses
  it whenever the integer path below declines, and so do the dataset loaders and the portal's imports.
* :mod:`~stableval.data.files.parquet_dataset` — a folder or glob of Parquet files given to
  :func:`read_table_file`: the same reader over every file, rows numbered across the files, a bad file named.
* :mod:`~stableval.data.integer_ids` — tried first by :func:`load` for a Parquet file or dataset whose item,
  agent and rater ids are integers: codes them without making text per row. It answers only for clean files and
  returns ``None`` for anything that needs a message or a duplicate policy, so the general reader then reads the
  file and names the problem.
* :mod:`~stableval.data.partitioned` — ``--executor dask``: the file or dataset read row group by row group on
  the Dask workers into a :class:`~stableval.data.partitioned.PartitionedTable` that stays on the cluster.

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
    from stableval.data.files import (
        FORMATS as FORMATS,
        output_format as output_format,
        read_table_file as read_table_file,
        write_frame as write_frame,
    )
    from stableval.data.frames import as_table as as_table
    from stableval.data.item_text import read_item_text as read_item_text
    from stableval.data.labels import parse_list as parse_list
    from stableval.data.loader import (
        Loaded as Loaded,
        load as load,
        load_frame as load_frame,
        read_any as read_any,
    )
    from stableval.data.options import (
        DUPLICATE_POLICIES as DUPLICATE_POLICIES,
        DuplicatePolicy as DuplicatePolicy,
        InputOptions as InputOptions,
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
    from stableval.data.recode import Recoding as Recoding, recoding as recoding
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
