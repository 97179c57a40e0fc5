"""A small thread-safe LRU of per-track results, keyed by what invalidates them (the track's submission count and
last submission): the admin pages' diagnostics, agreement and results tables are recomputed only after a new
submission.

>>> cache: ResultCache[int] = ResultCache(size=2)
>>> cache.get(("t", 1), lambda: 41 + 1), cache.get(("t", 1), lambda: 0)
(42, 42)
>>> cache.get(("t", 2), lambda: 7, enabled=False), len(cache)
(7, 1)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["ResultCache"]

T = TypeVar("T")


class ResultCache(Generic[T]):
    """The ``size`` most recently used results; :meth:`get` computes a missing one outside the lock."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable, compute: Callable[[], T], *, enabled: bool = True) -> T:
        """The cached result for ``key``, or ``compute()`` (stored unless ``enabled`` is false)."""
        if enabled:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key]
        result = compute()
        if enabled:
            with self._lock:
                self._items[key] = result
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        return result

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
