"""Tasks for the executor tests, in a module that worker processes can import by name.

A function defined in a test module cannot be sent to a ``forkserver`` or ``spawn`` worker: pytest imports test
modules under a name the worker cannot import again.
"""

from __future__ import annotations

import os


def square_with_pid(x: int) -> tuple[int, int]:
    """``x * x`` and the id of the process that computed it."""
    return x * x, os.getpid()


def fails_on_three(x: int) -> int:
    """``x``, except that task 3 raises."""
    if x == 3:
        raise ValueError("task 3 failed")
    return x
