"""What a result read besides its own file, so a cache can tell when it is stale.

An analysis that reads another file of the project (a module the shape-use analysis
follows an import into; the project's files AS106's per-instance cache asks about
attribute writes) calls ``note_dependency`` with a *question* and the function that
answers it (``"module:function"``, imported by name when a cache asks, so this low layer
imports nothing above it). While a ``recording()`` block is open, the answer it gives
now is recorded; the result cache (``rules/check_cache``) asks again before it trusts a
stored result, and uses it only if every answer is the same.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

Dependency = tuple[str, str, str]
"""(answerer, question, answer): ``answerer`` is ``"module:function"``, a function that
takes ``question`` and returns the answer it gives now (e.g. a module's path and the hash
of its bytes). A stored result is valid while every answer is the same."""

_recording: list[dict[tuple[str, str], str]] = []
_run = 0


def new_run() -> None:
    """A ``check`` or ``fix`` run starts (the file collector says so): what a process
    kept of other files in an earlier run in it (``analysis/project_writes``) is read
    again, as a new process would."""
    global _run
    _run += 1


def run_number() -> int:
    """Which run of this process is going on (see ``new_run``)."""
    return _run


@contextmanager
def recording() -> Iterator[list[Dependency]]:
    """Collect, into the list yielded, every ``note_dependency`` made inside the block."""
    found: dict[tuple[str, str], str] = {}
    out: list[Dependency] = []
    _recording.append(found)
    try:
        yield out
    finally:
        _recording.pop()
        out.extend((answerer, question, answer) for (answerer, question), answer in found.items())


def note_dependency(answerer: str, question: str) -> None:
    """Record that the result being computed read what ``answerer(question)`` describes.

    Does nothing (not even answering) unless a ``recording()`` block is open.
    """
    if not _recording:
        return
    found = _recording[-1]
    if (answerer, question) not in found:
        found[answerer, question] = answer(answerer, question)


def answer(answerer: str, question: str) -> str:
    """What ``answerer`` says about ``question`` now."""
    module, _, function = answerer.partition(":")
    return str(getattr(importlib.import_module(module), function)(question))


_DIGESTS: dict[str, tuple[int, int, int, str]] = {}
"""Path -> (inode, size, modification time in ns, SHA-256) of files hashed before."""
_digests_changed = False


def file_digest(path: Path | str) -> str:
    """SHA-256 of a file's bytes ("" when it cannot be read).

    A file whose inode, size and modification time (in nanoseconds) are those it had when
    it was hashed before (in this process, or in an earlier run: ``remember_digests``) is
    not read again, as make, mypy and black trust them: a warm re-check of a file that
    asked about the whole project then stats its files instead of reading them.
    """
    import hashlib  # only when hashing (a cold check with no cache hashes nothing)

    global _digests_changed
    key = str(path)
    try:
        info = os.stat(key)
    except OSError:
        return ""
    stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
    known = _DIGESTS.get(key)
    if known is not None and known[:3] == stamp:
        return known[3]
    try:
        with open(key, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return ""
    _DIGESTS[key] = (*stamp, digest)
    _digests_changed = True
    return digest


def remember_digests(known: dict[str, list[object]]) -> None:
    """Take the digests an earlier run stored (``known_digests``); bad entries are skipped."""
    for path, entry in known.items():
        if (
            isinstance(entry, list)
            and len(entry) == 4
            and all(isinstance(n, int) for n in entry[:3])
            and isinstance(entry[3], str)
        ):
            _DIGESTS.setdefault(path, (entry[0], entry[1], entry[2], entry[3]))  # type: ignore[arg-type]


def known_digests() -> dict[str, list[object]] | None:
    """Every digest known, for an earlier-run store; None when nothing new was hashed."""
    if not _digests_changed:
        return None
    return {path: list(entry) for path, entry in _DIGESTS.items()}
