"""Run probe work in a forked copy of the process; stream its results back over a pipe.

Why a fork: a probe traces the user's code, and tracing runs its Python: prints,
``self.calls += 1``, ``random.random()``, a global seed counter, Keras name counters,
layers built on first use. In a copy, none of that reaches the program, whatever it is,
and the program's own tf.function caches stay untouched. Only the parent's wall time
is spent (the copy shares memory pages until it writes them).

What the copy must not do: TensorFlow's eager runtime (its thread pools) does not
survive a fork, and an eager op there would wait forever. ``guard_eager`` makes the
copy raise ``EagerOpInProbe`` on any eager kernel instead, and the round reports it.
Deadlines bound the rest: the parent kills the copy when the round's time is up or no
message came for ``stall_s`` seconds. A stop signal (Ctrl-C reaches the whole process
group, the copy included) ends the copy at once, whatever handler the program set: the
round is then ``interrupted`` and the parent reports it; the parent never waits for a
copy it stopped reading from. The copy's stdout and stderr (Python's and the C
level's) go to a file whose text is sent back: trace-time output never reaches the
user's terminal. It ends with ``os._exit``: no atexit handler, no flushed buffer of the
parent's, no partial profile written twice.

Linux and macOS only (``os.fork``); elsewhere ``fork_available()`` is False and the
probes are reported as not run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import signal
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Emit = Callable[[dict[str, Any]], None]

_FORKING = False
"""True while this module forks: fork hooks (the recorder's) leave the probe copy alone."""
MAX_OUTPUT = 4000


class EagerOpInProbe(RuntimeError):
    """The probe's trace tried to run an eager op (variable creation, an init_scope)."""


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals that end a probe copy at once (unless the program ignores them)."""


def fork_available() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


def forking_probe() -> bool:
    """For ``os.register_at_fork`` hooks: is this fork a probe copy's?"""
    return _FORKING


@dataclass
class ForkOutcome:
    messages: list[dict[str, Any]] = field(default_factory=list)
    status: str = "done"
    """done | timeout (the round's deadline) | stalled (no message for stall_s) |
    interrupted (a stop signal ended the copy: Ctrl-C) | crashed (the copy died
    without finishing) | unavailable"""
    detail: str = ""
    elapsed_s: float = 0.0


def guard_eager() -> None:
    """In the copy: any eager op raises ``EagerOpInProbe`` instead of hanging."""
    if "tensorflow" not in sys.modules:
        return  # no eager runtime was started before the fork
    from tensorflow.python import pywrap_tfe

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise EagerOpInProbe(
            "the trace runs an eager op (it creates variables or uses tf.init_scope)"
        )

    for name in ("TFE_Py_FastPathExecute", "TFE_Py_Execute", "TFE_Py_ExecuteCancelable"):
        if hasattr(pywrap_tfe, name):
            setattr(pywrap_tfe, name, refuse)


def run_forked(
    work: Callable[[Emit], None],
    *,
    deadline: float,
    stall_s: float,
    in_child: Callable[[], None] | None = None,
) -> ForkOutcome:
    """Run ``work(emit)`` in a forked copy until ``deadline`` (``time.monotonic()``).

    ``emit`` sends one JSON-able dict to the parent; ``in_child`` runs first in the copy
    (the recorder stops recording there). Returns the messages received, in order.
    """
    if not fork_available():
        return ForkOutcome(status="unavailable", detail="no os.fork on this platform")
    global _FORKING
    start = time.monotonic()
    read_fd, write_fd = os.pipe()
    _FORKING = True
    # stop signals wait while the copy is made: the copy sets its own dispositions first
    # (_child), the program gets a Ctrl-C that came meanwhile as soon as the fork returns
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    pid = -1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "multi-threaded fork"
            pid = os.fork()
    finally:
        _FORKING = False
        if pid != 0:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if pid == 0:  # pragma: no cover - runs in the copy, which ends with os._exit
        os.close(read_fd)
        _child(write_fd, work, in_child, mask)
    os.close(write_fd)
    outcome = ForkOutcome()
    status = 0
    try:
        _read(read_fd, pid, outcome, deadline, stall_s)
    except BaseException:  # Ctrl-C in the program: the copy must not outlive the round
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(read_fd)
        with contextlib.suppress(ChildProcessError):
            status = os.waitpid(pid, 0)[1]
    outcome.elapsed_s = time.monotonic() - start
    if outcome.status == "done" and not any(m.get("kind") == "done" for m in outcome.messages):
        stopped_by = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        crash = next((m for m in outcome.messages if m.get("kind") == "crash"), None)
        if stopped_by in STOP_SIGNALS:
            outcome.status = "interrupted"
            outcome.detail = f"the program was interrupted ({signal.Signals(stopped_by).name})"
        else:
            outcome.status = "crashed"
            outcome.detail = crash["text"] if crash else "the probe process ended early"
    return outcome


def _read(fd: int, pid: int, outcome: ForkOutcome, deadline: float, stall_s: float) -> None:
    buffer = b""
    last = time.monotonic()
    while True:
        now = time.monotonic()
        wait = min(deadline - now, last + stall_s - now)
        if wait <= 0:
            outcome.status = "timeout" if deadline <= now else "stalled"
            outcome.detail = (
                "the time budget ran out"
                if outcome.status == "timeout"
                else f"no progress for {stall_s:.0f} s"
            )
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            return
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        last = time.monotonic()
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            with contextlib.suppress(ValueError):
                outcome.messages.append(json.loads(line))


def _die_on_stop_signals() -> None:  # pragma: no cover - runs in the forked copy
    """In the copy: a stop signal ends it at once. It inherited the program's handlers:
    Python's KeyboardInterrupt (caught by the copy's own clean-up), a training script's
    "stop after this epoch" flag (the copy would trace on until its deadline) or the
    recorder's SIGTERM writer (it would write the program's partial profile). A signal
    the program ignores (``nohup``) stays ignored."""
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            with contextlib.suppress(ValueError):  # forked from a thread of another runtime
                signal.signal(signum, signal.SIG_DFL)


def _child(  # pragma: no cover - runs in the forked copy
    write_fd: int,
    work: Callable[[Emit], None],
    in_child: Callable[[], None] | None,
    mask: set[signal.Signals],
) -> None:
    def emit(message: dict[str, Any]) -> None:
        data = (json.dumps(message, default=str) + "\n").encode()
        while data:
            data = data[os.write(write_fd, data) :]

    capture = None
    try:
        _die_on_stop_signals()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C during the fork ends it
        capture = tempfile.TemporaryFile()
        os.dup2(capture.fileno(), 1)
        os.dup2(capture.fileno(), 2)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
        if in_child is not None:
            in_child()
        guard_eager()
        work(emit)
        capture.seek(0)
        text = capture.read(MAX_OUTPUT).decode("utf-8", "replace")
        emit({"kind": "output", "text": text})
        emit({"kind": "done"})
    except BaseException as exc:  # noqa: BLE001 - report anything, then leave
        with contextlib.suppress(BaseException):
            emit({"kind": "crash", "text": f"{type(exc).__name__}: {exc}"[:300]})
    finally:
        os._exit(0)
