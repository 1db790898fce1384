"""Results of checking a file, kept between runs (as ruff, black and mypy keep theirs).

A re-check of an unchanged file reads its findings from here instead of parsing it.
An entry is used only when all of these are what they were when it was written:

- the file's bytes (SHA-256) and its path (findings name it; the analyses look beside it);
- the rules selected for it (the effective ``select`` and ``ignore``: config,
  per-path ignores and command line);
- autosig itself: the directory an entry lives in is named by the hash of every
  source file of the installed ``autosig`` package (so an editable install's edit
  counts, not only a new version), the Python version and libcst's version;
- every other file the result read: a module of the project the shape-use analysis
  followed an import into, the project's files the AS106 per-instance cache asked about
  attribute writes (``note_dependency``: each such read is recorded with a function that
  answers the same question again, and the entry is used only if the answers agree).

Entries are JSON files written atomically (temp file + rename), so concurrent runs
never see half an entry; two runs writing the same entry write the same thing. Any
damage (an unreadable, truncated or foreign file) is a cache miss, never an error.
The default folder is ``.autosig_cache`` in the project (the config file's folder, else
the current directory), with a ``.gitignore`` inside so it is never committed;
``--cache-dir`` or ``AUTOSIG_CACHE_DIR`` put it elsewhere, ``--no-cache`` bypasses it.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.source.dependencies import (
    Dependency,
    answer,
    file_digest,
    known_digests,
    remember_digests,
)
from autosig.source.sites import Finding

CACHE_DIR_NAME = ".autosig_cache"
ENV_CACHE_DIR = "AUTOSIG_CACHE_DIR"
FORMAT = 1
"""Bumped when an entry's layout changes (the code hash would change too; this says why)."""

DIGESTS = "file-digests"
"""Beside the entries: path -> inode, size, mtime and SHA-256 of the other files results
read (``source.dependencies.file_digest``), so a warm run need not read them again."""

FACTS = "project-facts"
"""Beside the entries: path -> inode, size, mtime and what each project file the
per-instance cache questions read may do (``analysis/project_writes``), so a check of
one changed file in a large project need not read every other file again."""

GITIGNORE = "# Created by autosig: its result cache, never to be committed.\n*\n"


@dataclass
class CheckOutcome:
    """What checking one file gave: findings, or the error naming the file, and what
    else it read."""

    findings: list[Finding] = field(default_factory=list)
    error: AutosigError | None = None
    dependencies: list[Dependency] = field(default_factory=list)
    cacheable: bool = True
    """False for results that depend on more than the inputs (an internal error, a
    recursion limit)."""


# -- which autosig wrote an entry ---------------------------------------------------------


@cache
def code_fingerprint() -> str:
    """Hash of everything an entry's meaning depends on besides its inputs (see
    ``package_fingerprint``) for the running autosig; once per process (milliseconds)."""
    return package_fingerprint(Path(__file__).resolve().parent.parent)


def package_fingerprint(package: Path) -> str:
    """Hash of every ``.py`` file of ``package`` (path and bytes), the Python version and
    the installed libcst's version file."""
    import hashlib  # here and below: a run with --no-cache never loads it

    digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0".encode())
    for path in _python_files(package):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(file_digest(path).encode())
    libcst_version = _libcst_version_file()
    if libcst_version is not None:
        digest.update(file_digest(libcst_version).encode())
    return digest.hexdigest()


def _python_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    stack = [folder]
    while stack:
        current = stack.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                    stack.append(Path(entry.path))
                elif entry.name.endswith(".py"):
                    found.append(Path(entry.path))
    return sorted(found)


def _libcst_version_file() -> Path | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec("libcst")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "_version.py"


def _package_version() -> str:
    """autosig's version as its ``__init__.py`` states it (read, not imported)."""
    init = Path(__file__).resolve().parent.parent / "__init__.py"
    try:
        for line in init.read_text(encoding="utf-8").splitlines():
            if line.startswith("__version__"):
                return line.split("=", 1)[1].strip().strip("\"'")
    except OSError:
        pass
    return "unknown"


# -- the cache ---------------------------------------------------------------------------


class ResultCache:
    """One folder of entries, for the running autosig (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._ready = False
        self._answers: dict[tuple[str, str], str] = {}
        self.hits = 0
        self.misses = 0

    @functools.cached_property
    def version_dir(self) -> Path:
        """This autosig's folder (hashing autosig's source: only once an entry is asked);
        the file digests an earlier run stored are taken from there too."""
        folder = self.directory / f"{_package_version()}-{code_fingerprint()[:16]}"
        try:
            with open(folder / DIGESTS, encoding="utf-8") as handle:
                stored = json.load(handle)
            if isinstance(stored, dict):
                remember_digests(stored)
        except (OSError, ValueError):
            pass
        from autosig.analysis.project_writes import remember_facts

        remember_facts(folder / FACTS)  # read when a project scan first asks
        return folder

    def save_digests(self) -> None:
        """Store the file digests this run computed (the other files results read) and the
        project files' facts it listed (``project_writes.known_facts``)."""
        from autosig.analysis.project_writes import known_facts

        for name, known in ((DIGESTS, known_digests()), (FACTS, known_facts())):
            if known is not None and self._prepare():
                _write_text_atomic(
                    self.version_dir / name, json.dumps(known, separators=(",", ":"))
                )

    # -- keys ------------------------------------------------------------------------
    @staticmethod
    def key(path: str, select: Sequence[str] | None, ignore: Sequence[str]) -> str:
        """The entry's name: the file (as named, and where it is) and its rules."""
        import hashlib

        where = os.path.realpath(path) if path != "-" else "-"
        chosen = "*" if select is None else ",".join(select)
        text = "\0".join([path, where, chosen, ",".join(ignore)])
        return hashlib.sha256(text.encode()).hexdigest()[:40]

    # -- reading ---------------------------------------------------------------------
    def get(
        self, path: str, data: bytes, select: Sequence[str] | None, ignore: Sequence[str]
    ) -> CheckOutcome | None:
        """The stored outcome for this file, its bytes and rules; None when there is no
        valid one."""
        import hashlib

        entry = self._read(self.key(path, select, ignore))
        outcome = None
        if entry is not None and entry.get("source") == hashlib.sha256(data).hexdigest():
            outcome = _decode(entry, path)
            if outcome is not None and not self._still_valid(outcome.dependencies):
                outcome = None
        if outcome is None:
            self.misses += 1
        else:
            self.hits += 1
        return outcome

    def _read(self, key: str) -> dict[str, Any] | None:
        try:
            with open(self.version_dir / f"{key}.json", encoding="utf-8") as handle:
                entry = json.load(handle)
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) and entry.get("format") == FORMAT else None

    def _still_valid(self, dependencies: Sequence[Dependency]) -> bool:
        for answerer, question, expected in dependencies:
            known = self._answers.get((answerer, question))
            if known is None:
                try:
                    known = answer(answerer, question)
                except Exception:  # noqa: BLE001 - an answerer that fails: not valid
                    return False
                self._answers[answerer, question] = known
            if known != expected:
                return False
        return True

    # -- writing ---------------------------------------------------------------------
    def put(
        self,
        path: str,
        data: bytes,
        select: Sequence[str] | None,
        ignore: Sequence[str],
        outcome: CheckOutcome,
    ) -> None:
        """Store ``outcome`` (best effort: a cache that cannot be written is no cache)."""
        import hashlib

        if not outcome.cacheable or not self._prepare():
            return
        entry = {
            "format": FORMAT,
            "path": path,
            "source": hashlib.sha256(data).hexdigest(),
            "findings": [finding.to_json() for finding in outcome.findings],
            "error": None if outcome.error is None else [outcome.error.message, outcome.error.path],
            "dependencies": [list(dependency) for dependency in outcome.dependencies],
        }
        _write_atomic(self.version_dir / f"{self.key(path, select, ignore)}.json", entry)

    def _prepare(self) -> bool:
        """Make the folders (with the ``.gitignore``) and drop other versions' entries."""
        if self._ready:
            return True
        try:
            self.version_dir.mkdir(parents=True, exist_ok=True)
            ignore_file = self.directory / ".gitignore"
            if not ignore_file.exists():
                _write_text_atomic(ignore_file, GITIGNORE)
        except OSError:
            return False
        self._ready = True
        self._remove_other_versions()
        return True

    def _remove_other_versions(self) -> None:
        """Entries of another autosig are never read again: remove them (best effort)."""
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and entry.path != str(self.version_dir):
                import shutil  # only when another autosig's entries are there

                shutil.rmtree(entry.path, ignore_errors=True)


def _decode(entry: dict[str, Any], path: str) -> CheckOutcome | None:
    try:
        findings = [Finding(**{**item, "path": path}) for item in entry["findings"]]
        error = entry["error"]
        dependencies = [(str(a), str(q), str(v)) for a, q, v in entry["dependencies"]]
    except (KeyError, TypeError, ValueError):
        return None
    return CheckOutcome(
        findings=findings,
        error=None if error is None else AutosigError(str(error[0]), error[1]),
        dependencies=dependencies,
    )


def _write_atomic(target: Path, entry: dict[str, Any]) -> None:
    _write_text_atomic(target, json.dumps(entry, separators=(",", ":")))


def _write_text_atomic(target: Path, text: str) -> None:
    import tempfile  # only when writing (a warm re-check writes nothing)

    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def open_cache(
    directory: Path | None, config_directory: Path | None, root: Path, enabled: bool = True
) -> ResultCache | None:
    """The cache for a run (None when not ``enabled``): ``directory`` (``--cache-dir``),
    else ``AUTOSIG_CACHE_DIR``, else ``config_directory`` (the config's ``cache-dir``),
    else ``.autosig_cache`` in ``root``."""
    if not enabled:
        return None
    if directory is None:
        configured = os.environ.get(ENV_CACHE_DIR)
        directory = Path(configured) if configured else config_directory
    return ResultCache(directory if directory is not None else root / CACHE_DIR_NAME)
