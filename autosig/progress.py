"""A progress bar on stderr that appears only when it helps.

Shown only when stderr is a terminal and the work has already taken more than
``delay`` seconds: short runs, pipes, CI logs and pre-commit stay silent, and stdout
(the report) is never touched.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import IO, Any

import click

DEFAULT_DELAY = 1.0


class Progress:
    """Count finished work items; draw a click progress bar once the run proves slow.

    Use as a context manager::

        with Progress(len(items), "Checking") as progress:
            for item in items:
                work(item)
                progress.advance()
    """

    def __init__(
        self,
        total: int,
        label: str = "",
        *,
        enabled: bool = True,
        delay: float = DEFAULT_DELAY,
        file: IO[str] | None = None,
    ) -> None:
        self.total = total
        self.label = label
        self.delay = delay
        self.file = file if file is not None else sys.stderr
        self.enabled = enabled and _is_terminal(self.file)
        self.done = 0
        self._start = time.monotonic()
        self._bar: Any = None

    @property
    def shown(self) -> bool:
        """Whether the bar has been drawn (tests and callers may want to know)."""
        return self._bar is not None

    def advance(self, n: int = 1) -> None:
        """Record ``n`` finished items; draw or update the bar when it is due."""
        self.done += n
        if not self.enabled:
            return
        if self._bar is None:
            if time.monotonic() - self._start < self.delay or self.done >= self.total:
                return
            self._bar = click.progressbar(
                length=self.total, label=self.label, file=self.file, show_pos=True
            )
            self._bar.__enter__()
            self._bar.update(self.done)
            return
        self._bar.update(n)

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
            self._bar = None


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
