"""One progress-bar helper (rich, on stderr) that the CLI turns on and the API leaves off by default.

>>> with progress_bar("working", total=3, enabled=False) as bar:
...     for _ in range(3):
...         bar.advance()
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class Advance(Protocol):
    def advance(self, steps: int = 1) -> None: ...


class _Silent:
    def advance(self, steps: int = 1) -> None:
        return None


class _RichBar:
    def __init__(self, progress: object, task: object) -> None:
        self._progress = progress
        self._task = task

    def advance(self, steps: int = 1) -> None:
        self._progress.advance(self._task, steps)  # type: ignore[attr-defined]


@contextmanager
def progress_bar(description: str, total: int, *, enabled: bool = True) -> Iterator[Advance]:
    """A transient rich progress bar with an ETA; a no-op when disabled or stderr is not a terminal."""
    if not enabled:
        yield _Silent()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield _Silent()
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        yield _RichBar(progress, progress.add_task(description, total=total))
