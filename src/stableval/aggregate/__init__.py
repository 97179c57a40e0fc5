"""Aggregators: turn disagreeing judgments into one distribution over levels per response.

>>> from stableval.aggregate import MajorityVote, DawidSkene, Stableval
"""

from stableval.aggregate.bradley_terry import BradleyTerry
from stableval.aggregate.dawid_skene import DawidSkene
from stableval.aggregate.majority_vote import MajorityVote
from stableval.aggregate.stableval import Stableval

__all__ = ["BradleyTerry", "DawidSkene", "MajorityVote", "Stableval"]
