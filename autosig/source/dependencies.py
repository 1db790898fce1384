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

import hashlib
import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

Dependency = tuple[str, str, str]
"""(answerer, question, answer): ``answerer`` is ``"module:function"``, a function that
takes ``question`` and returns the answer it gives now (e.g. a module's path and the hash
of its bytes). A stored result is valid while every answer is the same."""

_recording: list[dict[tuple[str, str], str]] = []


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


def file_digest(path: Path | str) -> str:
    """SHA-256 of a file's bytes ("" when it cannot be read)."""
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return ""
