"""Ctrl-C and SIGTERM while a command runs the user's workload: stop, say so, exit 128+N.

The workload runs in a process group of its own (``autosig.profile.launch``), which is
stopped before ``Interrupted`` reaches here; a Ctrl-C while autosig itself works (between
runs, comparing) arrives as a plain ``KeyboardInterrupt``. Either way the command's own
clean-up (``finally`` blocks: temporary folders) has run when the one line is printed.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import click

from autosig.errors import Interrupted


@contextlib.contextmanager
def interruptible(what: str) -> Iterator[None]:
    """Run the block so that SIGTERM stops it like Ctrl-C; on either, exit 128+N.

    ``what`` completes the line printed: ``autosig: interrupted (SIGINT): {what}``.
    """
    previous: Any = None
    main = threading.current_thread() is threading.main_thread()

    def on_term(signum: int, frame: Any) -> None:
        raise Interrupted(signum)

    if main:
        previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)
        click.echo(f"autosig: interrupted ({signal.Signals(signum).name}): {what}", err=True)
        sys.exit(128 + signum)
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
