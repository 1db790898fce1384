"""Other modules of the user's project, parsed (never imported) on demand.

The shape-use analysis follows a traced function into the project functions it calls,
including ones imported from other modules (``from .layers import pool``). This finds
such a module's file under the search roots (the traced file's folder and its parents,
or the profile's project root) and parses it once; modules outside those roots (NumPy,
Keras, ...) are not the project's and stay unknown.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from pathlib import Path

from libcst.metadata import MetadataWrapper

from autosig.errors import AutosigError
from autosig.source.discover import parse_module
from autosig.source.files import read_source

ModuleResolver = Callable[[str], "MetadataWrapper | None"]
"""Dotted module name -> the parsed module, None when it is not the project's."""

MAX_BYTES = 500_000
"""Larger modules are not parsed for this (libcst's scope analysis costs seconds)."""

PARENTS = 4
"""How many folders above a traced file may hold the package root."""


class ProjectModules:
    """Dotted module name -> parsed module (None: not in the project or not parseable)."""

    def __init__(self, roots: Iterable[Path], origin: Path | None = None) -> None:
        self.roots = list(dict.fromkeys(Path(r).resolve() for r in roots))
        self.origin = origin
        """The file whose imports these are (None: not known)."""
        self._cache: dict[str, MetadataWrapper | None] = {}
        self._paths: dict[str, Path] = {}

    @classmethod
    def around(cls, path: Path | str, root: Path | str | None = None) -> ProjectModules:
        """Search roots for a file: the profile's root (if any), its folder and parents."""
        resolved = Path(path).resolve()
        folder = resolved.parent
        roots = ([Path(root)] if root is not None else []) + [folder, *folder.parents][
            : PARENTS + 1
        ]
        return cls(roots, resolved)

    def path_of(self, dotted: str) -> Path | None:
        """The file a module was parsed from (None: not parsed or not the project's)."""
        return self._paths.get(dotted)

    def __call__(self, dotted: str) -> MetadataWrapper | None:
        if dotted not in self._cache:
            self._cache[dotted] = self._load(dotted)
        return self._cache[dotted]

    def _load(self, dotted: str) -> MetadataWrapper | None:
        parts = dotted.lstrip(".").split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        for root in self.roots:
            for candidate in (
                root.joinpath(*parts).with_suffix(".py"),
                root.joinpath(*parts, "__init__.py"),
            ):
                if candidate.is_file():
                    stat = candidate.stat()
                    if stat.st_size > MAX_BYTES:
                        return None
                    self._paths[dotted] = candidate
                    return _parse(str(candidate), stat.st_mtime_ns, stat.st_size)
        return None


@functools.lru_cache(maxsize=64)
def _parse(path: str, mtime_ns: int, size: int) -> MetadataWrapper | None:
    """One parse per file version, shared by every file and every fix pass that calls into
    it (``fix`` re-reads its own file after each pass; the modules it imports stay put)."""
    del mtime_ns, size  # the cache key: a changed file is parsed again
    try:
        return MetadataWrapper(parse_module(read_source(path).text, path), unsafe_skip_copy=True)
    except (AutosigError, OSError, UnicodeError):
        return None
