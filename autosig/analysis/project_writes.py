"""The project's other Python files, asked which of them may change an attribute.

AS106's per-instance cache is safe only if nothing rebinds an attribute its trace reads:
``predictor.threshold = 0.9`` in a training script made the old per-call function trace
with 0.9, while the cached one keeps the value of its first trace. The fixed file's own
writes are judged from its syntax tree; this looks at the rest of the project: every
``.py`` file under the nearest folder above the file holding ``pyproject.toml``,
``setup.py``, ``setup.cfg`` or ``.git``, hidden folders, virtualenvs,
``__pycache__``/``site-packages``/``node_modules`` and the root's ``build``/``dist``
left out, and linked folders not followed. When no folder above holds a marker (a
script in ``~/Downloads`` or ``/tmp``), the project is what a script there can import:
the file's own folder and the packages (folders with ``__init__.py``) below it, never
a folder holding a marker of its own (another project); walking every folder under a
home or temp directory would take seconds and blame unrelated code. Files are never
imported: ``analysis/attribute_writes`` reads their tokens, and only files whose text
names the attribute (or may set any attribute) are tokenized.

A project that cannot be read whole (a folder or file unreadable, too many files, a file
too large) is *incomplete*: the cache fix then says so instead of being safe. The files
are read once per run (``autosig check``/``fix``: ``dependencies.new_run``), not
watched. Their text is kept (up to ``KEPT_TEXT_BYTES`` in all, then read again when
asked) with what each may do whatever the question (set any attribute, copy), so a
tree check asking about many attributes filters each file by a substring search, not
by reading it and running regular expressions over it again (that cost a cold check
of tf-models-official a quarter of its CPU time). With a result cache, what each file
may do, its whole words and its scan are also kept between runs, by inode, size and
modification time (``remember_facts``, ``known_facts``: ``rules/check_cache`` stores
them beside its entries), so the next run reads only files that changed or that a
question concerns.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autosig.analysis.attribute_writes import ANY, FileWrites, scan_writes
from autosig.source.dependencies import file_digest, note_dependency, run_number

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
"""Files or folders that mark a project's root."""

MAX_FILES = 20_000
MAX_ENTRIES = 200_000
MAX_FILE_BYTES = 2_000_000
"""Beyond these the project is not read whole: it is incomplete."""

SKIPPED_FOLDERS = frozenset({"__pycache__", "site-packages", "node_modules"})
SKIPPED_AT_ROOT = frozenset({"build", "dist"})
"""Folders that hold no project source (hidden folders and virtualenvs are left out too)."""

VARS_CALL = re.compile(r"vars\s*\(")
"""``vars(`` (a whole word: the character before is checked apart, as a pattern that
starts with a literal is searched for many times faster than one starting with ``\b``)."""
RUNS_INIT_AGAIN = re.compile(r"\.__init__\s*\(")
"""Text a file holds if it may set attributes without naming them: ``X.__init__(obj)``
counts, ``super().__init__(...)`` does not. ``Base.__init__(self, ...)`` counts too: it
is set-up only inside the ``__init__`` of ``self``, which the token scan tells apart (a
``Base.__init__(self)`` in another method re-sets the object's attributes)."""

MAY_COPY = ("deepcopy", "dump", "Pickler")
"""Text a file holds if it may deep-copy or pickle objects."""

KEPT_TEXT_BYTES = 64_000_000
"""How much of the project's text a process keeps between questions."""

_WORD = re.compile(r"\w+")

Facts = tuple[int, int, int, bool, bool, bool, str | None, list[Any] | None]
"""A file's inode, size and modification time (ns) when read, what it may do
(``_FileText``'s ``sets_any``, ``copies``, ``spells_names``, ``words``) and its scan
(``FileWrites``' attributes and copies; None: not scanned)."""

_FACTS: dict[str, Facts] = {}
"""Path -> facts of files read in this process or stored by an earlier run."""
_facts_changed = False
_keeping_facts = False
"""Whether facts are listed and kept (a result cache asked for them: ``remember_facts``)."""
_facts_file: Path | None = None
"""Where an earlier run's facts are, not read yet."""


def remember_facts(stored: Path) -> None:
    """Keep the facts of the files this run reads, for the next, and take those an
    earlier run stored in file ``stored`` (``known_facts``; read when a scan first asks,
    bad entries skipped). The result cache calls this; without one nothing is kept."""
    global _keeping_facts, _facts_file
    _keeping_facts = True
    _facts_file = stored


def _load_facts() -> None:
    global _facts_file
    if _facts_file is None:
        return
    import json

    path, _facts_file = _facts_file, None
    try:
        with open(path, encoding="utf-8") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return
    if not isinstance(stored, dict):
        return
    for name, entry in stored.items():
        if (
            isinstance(name, str)
            and isinstance(entry, list)
            and len(entry) == 8
            and all(type(n) is int for n in entry[:3])
            and all(type(flag) is bool for flag in entry[3:6])
            and (entry[6] is None or isinstance(entry[6], str))
            and (entry[7] is None or _is_scan(entry[7]))
        ):
            _FACTS.setdefault(name, tuple(entry))  # type: ignore[arg-type]


def _is_scan(scan: object) -> bool:
    return (
        isinstance(scan, list)
        and len(scan) == 2
        and isinstance(scan[0], dict)
        and all(
            isinstance(name, str)
            and isinstance(lines, list)
            and all(type(line) is int for line in lines)
            for name, lines in scan[0].items()
        )
        and isinstance(scan[1], list)
        and all(type(line) is int for line in scan[1])
    )


def known_facts() -> dict[str, list[object]] | None:
    """Every file's facts known, to store for the next run; None when none is new."""
    if not _facts_changed:
        return None
    _load_facts()  # an earlier run's facts this run did not need are kept too
    return {path: list(entry) for path, entry in _FACTS.items()}


@dataclass(frozen=True)
class Place:
    """A line of another file of the project."""

    path: Path
    line: int

    def describe(self, root: Path) -> str:
        try:
            shown = self.path.relative_to(root)
        except ValueError:
            shown = self.path
        return f"{shown.as_posix()}:{self.line}"


@dataclass
class ProjectWrites:
    """The Python files under one project root; each tokenized at most once."""

    root: Path
    paths: list[Path] = field(default_factory=list)
    complete: bool = True
    """False when part of the project could not be read: nothing is known of it."""
    _read: dict[Path, _FileText] = field(default_factory=dict)
    """Each file's text, read once (kept while under the budget) and what it may do."""
    _scanned: dict[Path, FileWrites] = field(default_factory=dict)
    """A scanned file's writes."""
    _kept: int = 0
    """Bytes of text kept in ``_read``."""
    _stamps: dict[Path, tuple[int, int, int]] = field(default_factory=dict)
    """Inode, size and modification time (ns) of each file when its text was read."""

    @classmethod
    def around(cls, path: Path | str) -> tuple[ProjectWrites, Path]:
        """The project holding ``path`` (read once per root), and ``path`` resolved."""
        resolved = Path(path).resolve()
        note_dependency(f"{__name__}:project_digest", str(resolved))
        return _project(project_root(resolved), run_number()), resolved

    @classmethod
    def read(cls, root: Path) -> ProjectWrites:
        project = cls(root)
        project.paths, project.complete = _python_files(root)
        return project

    def writes(self, attribute: str, exclude: Path) -> list[Place]:
        """Places in files other than ``exclude`` that may change ``attribute`` (and
        writes that may set any attribute)."""
        word = re.compile(rf"\b{re.escape(attribute)}\b")
        by_words = _WORD.fullmatch(attribute) is not None

        def concerns(read: _FileText, text: Callable[[], str | None]) -> bool:
            if read.sets_any:
                return True
            if by_words and read.words is not None:
                # a whole word of the file (what ``word`` finds), else a substring that
                # counts only where the file may spell names with escapes
                if f" {attribute} " in read.words:
                    return True
                return read.spells_names and attribute in (text() or "")
            found = text()
            if found is None or attribute not in found:
                return False
            return read.spells_names or word.search(found) is not None

        places = [
            Place(path, line)
            for path, scanned in self._files(exclude, concerns)
            for name in (attribute, ANY)
            for line in scanned.attributes.get(name, [])
        ]
        return sorted(places, key=lambda place: (str(place.path), place.line))

    def copies(self, exclude: Path) -> list[Place]:
        """Places in files other than ``exclude`` that deep-copy or pickle objects."""
        places = [
            Place(path, line)
            for path, scanned in self._files(exclude, lambda read, _: read.copies)
            for line in scanned.copies
        ]
        return sorted(places, key=lambda place: (str(place.path), place.line))

    def _files(
        self, exclude: Path, concerns: Callable[[_FileText, Callable[[], str | None]], bool]
    ) -> Iterator[tuple[Path, FileWrites]]:
        """The scan of every other file whose facts (and text, when they do not tell)
        ``concerns`` the question (asked the same way every time, scanned before or not).
        A file whose facts an earlier run stored (``remember_facts``) and that has not
        changed since is read only if it concerns the question."""
        for path in self.paths:
            if path == exclude:
                continue
            read = self._read.get(path)
            if read is None:
                read = self._stored(path)
            text = read.text if read is not None else None
            if read is None or (text is None and read.readable and read.words is None):
                text = self._text(path)
                if text is None:
                    continue
                read = self._keep(path, text)
            if not read.readable:
                continue
            known_text = text

            def text_of(path: Path = path) -> str | None:
                nonlocal known_text
                if known_text is None:
                    known_text = self._text(path)
                return known_text

            if not concerns(read, text_of):
                continue
            known = self._scanned.get(path)
            if known is None:
                found = text_of()
                if found is None:
                    continue
                known = self._scanned[path] = scan_writes(found)
                self._keep_scan(path, known)
            yield path, known

    def _keep_scan(self, path: Path, scanned: FileWrites) -> None:
        """Keep a file's scan with its facts, for the next run (when facts are kept)."""
        global _facts_changed
        entry = _FACTS.get(str(path))
        if _keeping_facts and entry is not None and entry[:3] == self._stamps.get(path):
            _FACTS[str(path)] = (*entry[:7], [scanned.attributes, scanned.copies])
            _facts_changed = True

    def _stored(self, path: Path) -> _FileText | None:
        """The facts an earlier run stored for this file, if it is unchanged since."""
        _load_facts()
        stored = _FACTS.get(str(path))
        if stored is None:
            return None
        try:
            info = path.stat()
        except OSError:
            return None
        stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
        if tuple(stored[:3]) != stamp:
            return None
        self._stamps[path] = stamp
        sets_any, copies, spells_names, words, scan = stored[3:]
        if scan is not None:
            self._scanned[path] = FileWrites(dict(scan[0]), list(scan[1]))
        read = self._read[path] = _FileText(None, True, sets_any, copies, spells_names, words)
        return read

    def _text(self, path: Path) -> str | None:
        """The file's text; None if unreadable (kept as such: never read again)."""
        try:
            info = path.stat()
            if info.st_size > MAX_FILE_BYTES:
                self.complete = False
                self._read[path] = _FileText.unreadable()
                return None
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            self.complete = False  # unread: it might write anything
            self._read[path] = _FileText.unreadable()
            return None
        self._stamps[path] = (info.st_ino, info.st_size, info.st_mtime_ns)
        return text

    def _keep(self, path: Path, text: str) -> _FileText:
        global _facts_changed
        known = self._read.get(path)
        if known is not None:
            return known  # read again past the budget: its flags are known
        keep = self._kept + len(text) <= KEPT_TEXT_BYTES
        self._kept += len(text) if keep else 0
        read = self._read[path] = _FileText.of(text, keep, words=_keeping_facts)
        stamp = self._stamps.get(path)
        if _keeping_facts and stamp is not None:
            _FACTS[str(path)] = (
                *stamp,
                read.sets_any,
                read.copies,
                read.spells_names,
                read.words,
                None,
            )
            _facts_changed = True
        return read


def project_digest(question: str) -> str:
    """For the result cache: the project around file ``question`` (its root) and a hash
    of the paths and bytes of every file in it, as ``ProjectWrites`` reads them."""
    return _project_digest(project_root(Path(question)), run_number())


@functools.lru_cache(maxsize=8)
def _project_digest(root: Path, run: int) -> str:
    """Once per root and run: ``check`` writes no file, and every file it checks in a
    project records the same digest."""
    import hashlib  # only when hashing (a cold check with no cache hashes nothing)

    paths, complete = _walk(root, run)
    digest = hashlib.sha256(f"{complete}".encode())
    for path in paths:
        digest.update(f"\0{path}\0{file_digest(path)}".encode())
    return f"{root}\0{digest.hexdigest()}"


@dataclass(frozen=True)
class _FileText:
    """A file's text (None: not kept, or unreadable) and what it may do to any object."""

    text: str | None
    readable: bool
    sets_any: bool = False
    """It may set attributes without naming them (``setattr``, ``__dict__``, ...)."""
    copies: bool = False
    """It may deep-copy or pickle objects."""
    spells_names: bool = False
    """It may name an attribute in a string with escapes (``getattr(x, "w\\x31")``):
    a question's name is then not searched for as a word."""
    words: str | None = None
    """Every whole word of the text (``\\w+``), each once, space-separated and with a
    space at both ends (None: not listed): what a question's word search finds, kept
    between runs so an unchanged file need not be read again."""

    @classmethod
    def of(cls, text: str, keep: bool, words: bool = False) -> _FileText:
        return cls(
            text if keep else None,
            True,
            _may_set_any(text),
            any(word in text for word in MAY_COPY),
            "getattr" in text and "\\" in text,
            f" {' '.join(set(_WORD.findall(text)))} " if words else None,
        )

    @classmethod
    def unreadable(cls) -> _FileText:
        return cls(None, False)


def _may_set_any(text: str) -> bool:
    if "setattr" in text or "__dict__" in text:
        return True
    if "vars" in text and _found(VARS_CALL, text, lambda before: not _is_word(before)):
        return True
    return "__init__" in text and _found(RUNS_INIT_AGAIN, text, lambda before: before != ")")


def _found(pattern: re.Pattern[str], text: str, preceded: Callable[[str], bool]) -> bool:
    """Whether ``pattern`` occurs in ``text`` after a character ``preceded`` accepts
    ("" at the start)."""
    return any(
        preceded(text[match.start() - 1] if match.start() else "")
        for match in pattern.finditer(text)
    )


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"


@dataclass(frozen=True)
class Elsewhere:
    """What the project's other files may do: the first place that does it
    (``train.py:3``), and whether part of the project could not be read."""

    place: str | None
    unchecked: bool


@dataclass(frozen=True)
class OtherFiles:
    """The project's files other than one (the file a rule or a fix looks at), asked
    what they may do; ``path`` None for text from stdin (no project to look in: every
    answer is None). ``RuleContext.project_writes`` holds one per parsed file."""

    path: str | None

    def changes(self, attribute: str) -> Elsewhere | None:
        """Whether a file of the project other than this one may change ``attribute``
        (None for text from stdin)."""
        if self.path is None:
            return None
        project, own = ProjectWrites.around(self.path)
        places = project.writes(attribute, own)
        place = places[0].describe(project.root) if places else None
        return Elsewhere(place, not project.complete)

    def copies(self) -> str | None:
        """The first place in a file of the project other than this one that deep-copies
        or pickles objects (None for none, or for text from stdin)."""
        if self.path is None:
            return None
        project, own = ProjectWrites.around(self.path)
        places = project.copies(own)
        return places[0].describe(project.root) if places else None


@functools.lru_cache(maxsize=8)
def _project(root: Path, run: int) -> ProjectWrites:
    """One read per root and run (``dependencies.new_run``)."""
    del run  # the cache key: a new run reads the project again
    return ProjectWrites.read(root)


@functools.lru_cache(maxsize=8)
def _walk(root: Path, run: int) -> tuple[tuple[Path, ...], bool]:
    """``_python_files``, once per root and run: every file a check asks about the
    project (its result cache entry records the project's digest) shares one walk."""
    del run  # the cache key
    paths, complete = _python_files(root)
    return tuple(paths), complete


def project_root(path: Path) -> Path:
    """The nearest folder above ``path`` holding a project marker; the file's own folder
    when none does."""
    folder = path.parent
    for candidate in (folder, *folder.parents):
        if _marked(candidate):
            return candidate
    return folder


def _marked(folder: Path) -> bool:
    try:
        return any((folder / marker).exists() for marker in MARKERS)
    except OSError:
        return False


def _python_files(root: Path) -> tuple[list[Path], bool]:
    """The project's ``.py`` files, and whether every folder could be read.

    Under a folder with no marker, only the packages below it (see the module docstring).
    """
    packages_only = not _marked(root)
    files: list[Path] = []
    complete, entries = True, 0
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            listing = sorted(folder.iterdir())
        except OSError:
            complete = False
            continue
        for entry in listing:
            entries += 1
            if entries > MAX_ENTRIES or len(files) >= MAX_FILES:
                return files, False
            try:
                if entry.is_symlink() and entry.is_dir():
                    continue  # a linked folder may lead out of the project, or in a circle
                if entry.is_dir():
                    if not _skipped(entry, root) and (not packages_only or _package(entry)):
                        folders.append(entry)
                elif entry.suffix == ".py" and entry.is_file():
                    files.append(entry)
            except OSError:
                complete = False
    return files, complete


def _skipped(folder: Path, root: Path) -> bool:
    name = folder.name
    return (
        name.startswith(".")
        or name in SKIPPED_FOLDERS
        or (name in SKIPPED_AT_ROOT and folder.parent == root)
        or (folder / "pyvenv.cfg").exists()
    )


def _package(folder: Path) -> bool:
    """A package a script beside it can import, not another project's root."""
    return (folder / "__init__.py").is_file() and not _marked(folder)
