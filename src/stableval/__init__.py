"""stableval: disagreement-aware, stable evaluation of AI systems from human and LLM-judge ratings."""

from stableval.aggregate import DawidSkene, MajorityVote, Stableval
from stableval.data.table import AnnotationTable

__version__ = "0.1.0"

__all__ = ["AnnotationTable", "DawidSkene", "MajorityVote", "Stableval", "__version__"]
