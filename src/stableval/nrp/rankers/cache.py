"""A score/embedding cache keyed by ranker and text, in memory and optionally in an SQLite file.

Keys are SHA-1 digests of the ranker's identity (model path, parameters) and the texts, so a cache file can be
shared between runs: re-scoring the same documents or answers with the same ranker costs nothing.

>>> import numpy as np
>>> cache = ScoreCache()
>>> k = cache.key("bm25(k1=1.5)", "flu", "fever and cough")
>>> cache.put([k], [np.array([2.5])])
>>> cache.get([k, cache.key("bm25(k1=1.5)", "flu", "other")])[0]
[array([2.5], dtype=float32), None]
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["ScoreCache"]


class ScoreCache:
    """Float32 vectors (a score is a vector of length 1) stored by key; ``path`` persists them in SQLite."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._memory: dict[str, np.ndarray] = {}
        self.path = Path(path) if path is not None else None
        self.hits = 0
        self.misses = 0
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path)
            self._db.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value BLOB)")

    @staticmethod
    def key(ranker: str, *texts: str) -> str:
        digest = hashlib.sha1(ranker.encode("utf-8"))
        for text in texts:
            digest.update(b"\x1f" + text.encode("utf-8"))
        return digest.hexdigest()

    def get(self, keys: Sequence[str]) -> tuple[list[np.ndarray | None], np.ndarray]:
        """Values (None where absent) and a boolean mask of the keys found."""
        values: list[np.ndarray | None] = [self._memory.get(k) for k in keys]
        if self._db is not None:
            wanted = [k for k, v in zip(keys, values, strict=True) if v is None]
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for k, blob in self._db.execute(f"SELECT key, value FROM cache WHERE key IN ({marks})", chunk):
                    self._memory[k] = np.frombuffer(blob, dtype=np.float32)
            values = [self._memory.get(k) for k in keys]
        found = np.array([v is not None for v in values], dtype=bool)
        self.hits += int(found.sum())
        self.misses += int((~found).sum())
        return values, found

    def put(self, keys: Sequence[str], values: Sequence[np.ndarray]) -> None:
        arrays = [np.asarray(v, dtype=np.float32).reshape(-1) for v in values]
        self._memory.update(zip(keys, arrays, strict=True))
        if self._db is not None:
            self._db.executemany("INSERT OR REPLACE INTO cache VALUES (?, ?)",
                                 [(k, a.tobytes()) for k, a in zip(keys, arrays, strict=True)])
            self._db.commit()

    def __len__(self) -> int:
        return len(self._memory)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
