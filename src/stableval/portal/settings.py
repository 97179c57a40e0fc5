"""The settings of a track, declared once.

>>> DEFAULT_TASK
'pairwise'
"""

from __future__ import annotations

__all__ = ["DEFAULT_TASK"]

#: The task type of a track created without ``--task``.
DEFAULT_TASK = "pairwise"
