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

from stableval._lazy import lazy_package
from stableval._version import __version__ as __version__

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.aggregate import (
        GLAD as GLAD,
        MACE as MACE,
        BradleyTerry as BradleyTerry,
        DawidSkene as DawidSkene,
        MajorityVote as MajorityVote,
        OneCoinDawidSkene as OneCoinDawidSkene,
        OrdinalRaters as OrdinalRaters,
        Stableval as Stableval,
        Wawa as Wawa,
        ZeroBasedSkill as ZeroBasedSkill,
        clone as clone,
        get_method as get_method,
        method_names as method_names,
    )
    from stableval.data import (
        AnnotationTable as AnnotationTable,
        InputOptions as InputOptions,
        Loaded as Loaded,
        PairwiseTable as PairwiseTable,
        annotations_from_frame as annotations_from_frame,
        example_path as example_path,
        load as load,
        pairwise_to_annotations as pairwise_to_annotations,
        read_annotations as read_annotations,
        read_any as read_any,
        read_pairwise as read_pairwise,
    )
    from stableval.datasets import load_dataset as load_dataset
    from stableval.errors import (
        InputError as InputError,
        MissingColumnError as MissingColumnError,
        NotFittedError as NotFittedError,
        StableValError as StableValError,
    )
    from stableval.evaluate import (
        AgentScores as AgentScores,
        BudgetPlan as BudgetPlan,
        Diagnostics as Diagnostics,
        PairwiseLeaderboard as PairwiseLeaderboard,
        PPIPairwise as PPIPairwise,
        PPIScores as PPIScores,
        StabilityResult as StabilityResult,
        diagnose as diagnose,
        pairwise_leaderboard as pairwise_leaderboard,
        plan_ppi as plan_ppi,
        ppi_bradley_terry as ppi_bradley_terry,
        ppi_scores as ppi_scores,
        ranking_stability as ranking_stability,
        score_agents as score_agents,
    )


__getattr__, __dir__, __all__ = lazy_package(globals())
