"""Serve rewritten source for changed modules from memory: nothing is written to disk.

The verifier runs the user's workload with this finder first on ``sys.meta_path``. When
a module whose file is one of the rewritten ones is imported, the normal finders
locate it as usual (same name, package, ``__file__``, ``sys.path`` rules) and only its
loader is swapped for one that compiles the rewritten text. The cached bytecode of
the original is neither read nor written, and ``linecache`` is primed with the new
lines under the real file name, so ``inspect.getsource`` (which the recorder hashes),
tracebacks and TensorFlow's AutoGraph all see the code that actually runs.

A script run as ``python script.py`` is not imported through ``sys.meta_path``; the
verifier starts such a script through ``run_main`` (``python -m autosig.verify.import_hook
script.py ARGS``) instead, which executes the rewritten text as ``__main__``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import linecache
import os
import sys
import threading
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENV_SOURCES = "AUTOSIG_VERIFY_SOURCES"
"""Path of a JSON file mapping absolute source paths to their rewritten text."""


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


def prime_linecache(filename: str, text: str) -> None:
    """Make ``linecache`` (hence ``inspect``) return ``text`` for the file on disk.

    The entry carries the disk file's size and mtime so ``linecache.checkcache`` keeps
    it instead of re-reading the original from disk.
    """
    try:
        st = os.stat(filename)
        size, mtime = st.st_size, st.st_mtime
    except OSError:
        size, mtime = len(text), None
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    linecache.cache[filename] = (size, mtime, lines, filename)


class RewrittenSourceLoader(importlib.machinery.SourceFileLoader):
    """A source loader whose source text is given; bytecode caches are bypassed."""

    def __init__(self, fullname: str, path: str, text: str) -> None:
        super().__init__(fullname, path)
        self.text = text

    def get_source(self, fullname: str) -> str:
        return self.text

    def get_code(self, fullname: str) -> types.CodeType:
        return compile(self.text, self.path, "exec", dont_inherit=True)

    def path_stats(self, path: str) -> Any:
        raise OSError("rewritten in memory: no bytecode cache")

    def set_data(self, path: str, data: bytes, *, _mode: int = 0o666) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        prime_linecache(self.path, self.text)
        super().exec_module(module)


class RewrittenSourceFinder(importlib.abc.MetaPathFinder):
    """Finds modules as the other finders do and swaps in the rewritten source."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self.sources = {_real(p): text for p, text in sources.items()}
        self.served: list[str] = []
        self._stems = {self._stem(p) for p in self.sources}
        self._busy = threading.local()

    @staticmethod
    def _stem(path: str) -> str:
        p = Path(path)
        return p.parent.name if p.stem == "__init__" else p.stem

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.rpartition(".")[2] not in self._stems:
            return None
        busy = getattr(self._busy, "names", None)
        if busy is None:
            busy = self._busy.names = set()
        if fullname in busy:
            return None
        busy.add(fullname)
        try:
            spec = self._find_elsewhere(fullname, path, target)
        finally:
            busy.discard(fullname)
        if spec is None or not spec.origin or not spec.has_location:
            return None
        origin = _real(spec.origin)
        text = self.sources.get(origin)
        if text is None:
            return None
        spec.loader = RewrittenSourceLoader(fullname, spec.origin, text)
        spec.cached = None
        self.served.append(origin)
        return spec

    def _find_elsewhere(self, fullname: str, path: Any, target: Any) -> Any:
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                return spec
        return None


_INSTALLED: RewrittenSourceFinder | None = None


_ORIGINAL_UPDATECACHE = linecache.updatecache


def _updatecache_keeping_rewritten(filename: str, module_globals: Any = None) -> list[str]:
    """``linecache.updatecache`` that serves the rewritten text for rewritten files.

    TensorFlow's autograph (inspect_utils._fix_linecache_record) calls
    ``linecache.updatecache(file)``, which re-reads the ORIGINAL file from disk and
    would make autograph convert the original function body instead of the rewritten one.
    """
    finder = _INSTALLED
    if finder is not None:
        text = finder.sources.get(_real(filename)) if filename else None
        if text is not None:
            prime_linecache(filename, text)
            return linecache.cache[filename][2]
    return _ORIGINAL_UPDATECACHE(filename, module_globals)


def install(sources: Mapping[str, str]) -> RewrittenSourceFinder:
    """Put the finder first on ``sys.meta_path`` (once per process)."""
    global _INSTALLED
    if _INSTALLED is not None:
        sys.meta_path[:] = [f for f in sys.meta_path if f is not _INSTALLED]
    _INSTALLED = RewrittenSourceFinder(sources)
    sys.meta_path.insert(0, _INSTALLED)
    for path, text in _INSTALLED.sources.items():
        prime_linecache(path, text)
    linecache.updatecache = _updatecache_keeping_rewritten
    return _INSTALLED


def installed() -> RewrittenSourceFinder | None:
    return _INSTALLED


def load_sources_file(path: str | os.PathLike[str]) -> dict[str, str]:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return {str(k): str(v) for k, v in data.items()}


def install_from_env() -> RewrittenSourceFinder | None:
    """Install the hook when ``$AUTOSIG_VERIFY_SOURCES`` names a sources file."""
    path = os.environ.get(ENV_SOURCES)
    if not path:
        return None
    return install(load_sources_file(path))


def run_main(script: str, argv: list[str]) -> None:
    """Run ``script`` as ``__main__`` the way ``python script.py`` would, rewritten if it is.

    ``sys.argv`` and ``sys.path[0]`` are set as Python sets them for a script.
    """
    path = os.path.abspath(script)
    finder = _INSTALLED or install_from_env()
    text = finder.sources.get(_real(path)) if finder is not None else None
    if text is None:
        with open(path, "rb") as handle:
            source: str | bytes = handle.read()
    else:
        source = text
        prime_linecache(path, text)
        finder.served.append(_real(path))
    sys.argv = [script, *argv]
    here = os.path.dirname(path)
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.getcwd():
        sys.path[0] = here
    else:
        sys.path.insert(0, here)
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = __builtins__  # type: ignore[attr-defined]
    main.__loader__ = None  # type: ignore[assignment]
    sys.modules["__main__"] = main
    code = compile(source, path, "exec", dont_inherit=True)
    exec(code, main.__dict__)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m autosig.verify.import_hook SCRIPT [ARGS...]")
    # Run through the imported module, not this ``__main__`` copy, so the finder the
    # bootstrap installed is the one used.
    from autosig.verify import import_hook

    import_hook.run_main(sys.argv[1], sys.argv[2:])
