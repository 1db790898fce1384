"""Other modules of the user's project, parsed (never imported) on demand.

The shape-use analysis follows a traced function into the project functions it calls,
including ones imported from other modules (``from .layers import pool``). This finds
such a module's file under the search roots (the traced file's folder and its parents,
or the profile's project root) and parses it once; modules outside those roots (NumPy,
Keras, ...) are not the project's and stay unknown.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from autosig.errors import AutosigError
from autosig.source.dependencies import file_digest, note_dependency
from autosig.source.files import read_source

if TYPE_CHECKING:  # libcst: imported when a module is parsed, not to answer the cache
    from libcst.metadata import MetadataWrapper


class ModuleResolver(Protocol):
    """Dotted module name -> the parsed module, None when it is not the project's.

    With ``reach``, the module may be cut down to what its top-level function ``reach``
    can reach (``skeleton.reached_skeleton``: same line numbers, same answers about
    that function): an analysis following one call need not pay for the whole module.
    """

    def __call__(self, dotted: str, reach: str | None = None) -> MetadataWrapper | None: ...


MAX_BYTES = 500_000
"""Larger modules are not parsed for this (libcst's scope analysis costs seconds)."""

PARENTS = 4
"""How many folders above a traced file may hold the package root."""

WHOLE_AFTER = 2
"""A module followed for more than this many different functions in one process is
parsed whole once (a cut-down module answers about its function as the whole one does,
so any later ``reach`` is answered by the whole module) instead of once per function:
tf-models-official's ``preprocess_ops_3d`` was parsed ten times, cut ten ways. A module
already parsed whole (asked without ``reach``) answers every later ``reach`` too: one
parse per file version (golden 19's helper module: 3 parses -> 1)."""

_REACHES: dict[tuple[str, int, int], set[str | None]] = {}
"""File version -> the functions it was asked to be cut down to so far (None: asked
whole)."""


class ProjectModules:
    """Dotted module name -> parsed module (None: not in the project or not parseable)."""

    def __init__(self, roots: Iterable[Path], origin: Path | None = None) -> None:
        self.roots = list(dict.fromkeys(Path(r).resolve() for r in roots))
        self.origin = origin
        """The file whose imports these are (None: not known)."""
        self._cache: dict[tuple[str, str | None], MetadataWrapper | None] = {}
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

    @classmethod
    def of_profiled(cls, root: Path | None, path: str | None) -> ProjectModules | None:
        """Where a profiled file's imported project modules are found (``path`` relative to
        the profile's ``root``): beside it, above it, the root; None without either."""
        if root is None or not path:
            return None
        return cls.around(root / path, root)

    def __call__(self, dotted: str, reach: str | None = None) -> MetadataWrapper | None:
        """Module ``dotted`` parsed (cut down to what function ``reach`` reaches, if given;
        see ``ModuleResolver``)."""
        key = (dotted, reach)
        if key not in self._cache:
            note_dependency(f"{__name__}:module_digest", _question(self.roots, dotted))
            self._cache[key] = self._load(dotted, reach)
        return self._cache[key]

    def locate(self, dotted: str) -> Path | None:
        """The file of module ``dotted`` under the roots (the first found), if any."""
        parts = dotted.lstrip(".").split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        for root in self.roots:
            for candidate in (
                root.joinpath(*parts).with_suffix(".py"),
                root.joinpath(*parts, "__init__.py"),
            ):
                if candidate.is_file():
                    return candidate
        return None

    def _load(self, dotted: str, reach: str | None) -> MetadataWrapper | None:
        candidate = self.locate(dotted)
        if candidate is None:
            return None
        stat = candidate.stat()
        if stat.st_size > MAX_BYTES:
            return None
        self._paths[dotted] = candidate
        version = (str(candidate), stat.st_mtime_ns, stat.st_size)
        reaches = _REACHES.setdefault(version, set())
        reaches.add(reach)
        if None in reaches or len(reaches) > WHOLE_AFTER:
            reach = None  # the whole module (parsed already, or now) answers every reach
        return _parse(*version, reach)


def _question(roots: list[Path], dotted: str) -> str:
    return json.dumps([dotted, *map(str, roots)])


def module_digest(question: str) -> str:
    """For the result cache: which file module ``dotted`` is under ``roots`` (the
    question, as ``_question`` writes it), and the hash of its bytes ("" when none)."""
    dotted, *roots = json.loads(question)
    found = ProjectModules(Path(root) for root in roots).locate(dotted)
    return "" if found is None else f"{found}\0{file_digest(found)}"


@functools.lru_cache(maxsize=64)
def _parse(path: str, mtime_ns: int, size: int, reach: str | None) -> MetadataWrapper | None:
    """One parse per file version (and ``reach``), shared by every file and every fix pass
    that calls into it (``fix`` re-reads its own file after each pass; the modules it
    imports stay put)."""
    del mtime_ns, size  # the cache key: a changed file is parsed again
    from autosig.source.discover import parse_module
    from autosig.source.metadata import Wrapper
    from autosig.source.skeleton import reached_skeleton

    try:
        text = read_source(path).text
        if reach is not None:
            text = reached_skeleton(text, (reach,))
        return Wrapper(parse_module(text, path), unsafe_skip_copy=True)
    except (AutosigError, OSError, UnicodeError):
        return None
