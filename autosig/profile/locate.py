"""Where a profile the user wrote may be, when the default one is missing.

``autosig profile -o p.json`` writes ``p.json``; a later ``autosig verify`` or
``autosig explain`` without ``--profile`` reads ``.autosig/profile.json`` and would only
say that it is missing. This finds the profiles in the current directory and in
``.autosig/`` (a file is one when its first bytes hold the format key), newest first, so
the error can name the option to pass. No TensorFlow, no JSON parsing of large files.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from autosig.profile.format import FORMAT_KEY

_HEAD_BYTES = 64


def find_profiles(directory: Path, limit: int = 3) -> list[Path]:
    """Profiles in ``directory`` and its ``.autosig/``, newest first (at most ``limit``)."""
    found: list[tuple[float, Path]] = []
    for folder in (directory, directory / ".autosig"):
        with contextlib.suppress(OSError):
            for path in folder.glob("*.json"):
                if path.name.endswith(".partial.json"):
                    continue
                try:
                    with path.open("rb") as handle:
                        head = handle.read(_HEAD_BYTES)
                    mtime = path.stat().st_mtime
                except OSError:
                    continue
                if f'"{FORMAT_KEY}"'.encode() in head:
                    found.append((mtime, path))
    found.sort(key=lambda item: -item[0])
    return [path for _, path in found[:limit]]


def missing_profile_hint(
    path: Path, directory: Path | None = None, use: str = "pass --profile {}"
) -> str:
    """`` (found X: pass --profile X)`` when ``path`` is missing and other profiles exist
    (``use`` words the advice for the newest one)."""
    if path.exists():
        return ""
    here = directory or Path.cwd()
    others = [p for p in find_profiles(here) if p.resolve() != path.resolve()]
    if not others:
        return ""
    shown = []
    for other in others:
        try:
            shown.append(other.relative_to(here).as_posix())
        except ValueError:
            shown.append(str(other))
    return f" (found {', '.join(shown)}: {use.format(shown[0])})"
