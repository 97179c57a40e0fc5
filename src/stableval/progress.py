"""One progress helper (on stderr) that the CLI turns on and the API leaves off by default: a rich bar on a
terminal; elsewhere (a pipe, a log file, CI), for the long analyses that ask for it, plain stage lines.

>>> with progress_bar("working", total=3, enabled=False) as bar:
...     for _ in range(3):
...         bar.advance()
>>> import io
>>> log = io.StringIO()
>>> with progress_bar("report", total=2, lines=True, stream=log, clock=lambda: 0.0) as bar:
...     bar.stage("leaderboard")
...     bar.advance()
...     bar.stage("stability")
...     bar.advance()
>>> print(log.getvalue(), end="")
report: leaderboard (1/2) ...
report: stability (2/2) ...
report: done (2/2) in 0 s
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol, TextIO

__all__ = ["Advance", "progress_bar"]


class Advance(Protocol):
    def advance(self, steps: int = 1) -> None: ...

    def stage(self, name: str) -> None: ...


class _Silent:
    def advance(self, steps: int = 1) -> None:
        return None

    def stage(self, name: str) -> None:
        return None


class _RichBar:
    def __init__(self, progress: object, task: object, description: str) -> None:
        self._progress = progress
        self._task = task
        self._description = description

    def advance(self, steps: int = 1) -> None:
        self._progress.advance(self._task, steps)  # type: ignore[attr-defined]

    def stage(self, name: str) -> None:
        self._progress.update(self._task, description=f"{self._description}: {name}")  # type: ignore[attr-defined]


class _Lines:
    """Plain lines for a log: one per stage, and one per tenth of the work for a bar without stages."""

    def __init__(self, description: str, total: int, stream: TextIO, clock: Callable[[], float]) -> None:
        self._description, self._total, self._stream, self._clock = description, max(total, 1), stream, clock
        self._done = 0
        self._start = clock()
        self._shown_tenth = 0

    def _say(self, text: str) -> None:
        print(f"{self._description}: {text}", file=self._stream, flush=True)

    def stage(self, name: str) -> None:
        self._say(f"{name} ({self._done + 1}/{self._total}) ...")
        self._shown_tenth = -1  # a staged bar speaks at its stages only

    def advance(self, steps: int = 1) -> None:
        self._done += steps
        tenth = 10 * self._done // self._total
        if self._shown_tenth >= 0 and tenth > self._shown_tenth and self._done < self._total:
            self._shown_tenth = tenth
            self._say(f"{self._done:,}/{self._total:,} ({self._clock() - self._start:.0f} s)")

    def close(self) -> None:
        self._say(f"done ({self._done:,}/{self._total:,}) in {self._clock() - self._start:.0f} s")


@contextmanager
def progress_bar(description: str, total: int, *, enabled: bool = True, lines: bool = False,
                 stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> Iterator[Advance]:
    """A transient rich progress bar with an ETA on a terminal; elsewhere nothing, or with ``lines`` (the analyses
    that take minutes) a plain line per stage (:meth:`Advance.stage`) or per tenth of the work, then one when done,
    on ``stream`` (default stderr). A no-op when not ``enabled``."""
    if not enabled:
        yield _Silent()
        return
    if stream is None:
        from rich.console import Console

        console = Console(stderr=True)
        if console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
            with Progress(*columns, console=console, transient=True) as progress:
                yield _RichBar(progress, progress.add_task(description, total=total), description)
            return
    if not lines:
        yield _Silent()
        return
    bar = _Lines(description, total, stream if stream is not None else sys.stderr, clock)
    yield bar
    bar.close()
