"""stableval: disagreement-aware, stable evaluation of AI systems from human and LLM-judge ratings.

The public names load lazily, so ``import stableval`` and ``stableval --help`` stay fast.

>>> import stableval
>>> table = stableval.read_any(stableval.example_path("mt_bench"), duplicates="keep")
>>> result = stableval.score_agents(table, ["mv", "stableval"], bootstrap=100)
>>> result.leaderboard()["agent"].iloc[0]
'gpt-4'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_exports
from stableval._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate import (
        GLAD,
        MACE,
        BradleyTerry,
        DawidSkene,
        MajorityVote,
        OneCoinDawidSkene,
        OrdinalRaters,
        Stableval,
        Wawa,
        ZeroBasedSkill,
        clone,
        get_method,
        method_names,
    )
    from stableval.data import (
        AnnotationTable,
        InputOptions,
        Loaded,
        PairwiseTable,
        annotations_from_frame,
        example_path,
        load,
        pairwise_to_annotations,
        read_annotations,
        read_any,
        read_pairwise,
    )
    from stableval.datasets import load_dataset
    from stableval.errors import InputError, NotFittedError, StableValError
    from stableval.evaluate import (
        AgentScores,
        Diagnostics,
        PairwiseLeaderboard,
        StabilityResult,
        diagnose,
        pairwise_leaderboard,
        ranking_stability,
        score_agents,
    )

_HOME = {
    "BradleyTerry": "stableval.aggregate",
    "DawidSkene": "stableval.aggregate",
    "MajorityVote": "stableval.aggregate",
    "OneCoinDawidSkene": "stableval.aggregate",
    "GLAD": "stableval.aggregate",
    "MACE": "stableval.aggregate",
    "OrdinalRaters": "stableval.aggregate",
    "Wawa": "stableval.aggregate",
    "ZeroBasedSkill": "stableval.aggregate",
    "Stableval": "stableval.aggregate",
    "clone": "stableval.aggregate",
    "get_method": "stableval.aggregate",
    "method_names": "stableval.aggregate",
    "AnnotationTable": "stableval.data",
    "InputOptions": "stableval.data",
    "Loaded": "stableval.data",
    "load": "stableval.data",
    "PairwiseTable": "stableval.data",
    "annotations_from_frame": "stableval.data",
    "example_path": "stableval.data",
    "pairwise_to_annotations": "stableval.data",
    "read_annotations": "stableval.data",
    "read_any": "stableval.data",
    "read_pairwise": "stableval.data",
    "InputError": "stableval.errors",
    "NotFittedError": "stableval.errors",
    "StableValError": "stableval.errors",
    "AgentScores": "stableval.evaluate",
    "score_agents": "stableval.evaluate",
    "Diagnostics": "stableval.evaluate",
    "PairwiseLeaderboard": "stableval.evaluate",
    "StabilityResult": "stableval.evaluate",
    "diagnose": "stableval.evaluate",
    "pairwise_leaderboard": "stableval.evaluate",
    "ranking_stability": "stableval.evaluate",
    "load_dataset": "stableval.datasets",
}

__all__ = [
    "GLAD",
    "MACE",
    "AgentScores",
    "AnnotationTable",
    "BradleyTerry",
    "DawidSkene",
    "Diagnostics",
    "InputError",
    "InputOptions",
    "Loaded",
    "MajorityVote",
    "NotFittedError",
    "OneCoinDawidSkene",
    "OrdinalRaters",
    "PairwiseLeaderboard",
    "PairwiseTable",
    "StabilityResult",
    "StableValError",
    "Stableval",
    "Wawa",
    "ZeroBasedSkill",
    "__version__",
    "annotations_from_frame",
    "clone",
    "diagnose",
    "example_path",
    "get_method",
    "load",
    "load_dataset",
    "method_names",
    "pairwise_leaderboard",
    "pairwise_to_annotations",
    "ranking_stability",
    "read_annotations",
    "read_any",
    "read_pairwise",
    "score_agents",
]


__getattr__, __dir__ = lazy_exports(globals(), _HOME, __all__)
