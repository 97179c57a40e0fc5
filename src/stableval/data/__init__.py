"""The annotation table and its readers: files → validated, integer-coded :class:`AnnotationTable`.

>>> table = read_any(example_path("mt_bench"), duplicates="keep")
>>> table.n_raters, table.n_agents, table.n_items
(65, 6, 80)
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from stableval.data.pairwise import (
    PAIRWISE_ALIASES,
    PAIRWISE_CREDIT,
    PAIRWISE_LEVELS,
    WINNER_VALUES,
    PairwiseTable,
    is_pairwise_frame,
    pairwise_from_frame,
    pairwise_to_annotations,
    read_any,
    read_pairwise,
)
from stableval.data.read import (
    DUPLICATE_POLICIES,
    FORMATS,
    ROLE_ALIASES,
    annotations_from_frame,
    parse_list,
    read_annotations,
    read_table_file,
)
from stableval.data.table import AnnotationTable, default_credit

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
    "PairwiseTable",
    "annotations_from_frame",
    "default_credit",
    "example_path",
    "is_pairwise_frame",
    "pairwise_from_frame",
    "pairwise_to_annotations",
    "parse_list",
    "read_annotations",
    "read_any",
    "read_pairwise",
    "read_table_file",
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
