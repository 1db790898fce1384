"""Reading, finding and writing source files without changing what we did not mean to.

Encoding (PEP 263 cookie), UTF-8 BOM and newlines (CRLF, mixed) are kept exactly;
writes are atomic (temp file in the same directory + ``os.replace``, mode and owner
kept) so an interrupted run leaves every file wholly old or wholly new. The rename
would ignore a file's permission bits, so a read-only file is refused explicitly, and
the temp files a killed run leaves behind are removed by the next write of that file.
"""

from __future__ import annotations

import codecs
import contextlib
import fnmatch
import io
import os
import re
import stat
import threading
import time
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from autosig.errors import AutosigError

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "node_modules",
    "build",
    "dist",
    ".autosig",
    ".autosig_cache",
    "*.egg-info",
)

PREFILTER = re.compile(rb"\.\s*function\b|from\s+tensorflow[\w.]*\s+import\s*\(?[^)]*?\bfunction\b")
"""A tf.function site needs ``<alias>.function`` or ``from tensorflow... import function``.

Files matching neither are never parsed: on tf-models-official this leaves 57 of 1,250
files (24k of 263k lines) to parse, against 413 files that merely contain the word.
"""


TEMP_SUFFIX = ".autosig-tmp"
"""Temp files are ``.<name>.<pid>.<8 random chars>.autosig-tmp`` beside the file."""

STALE_TEMP_AGE = 600.0
"""Seconds after which any temp file of ours is stale: a write takes well under one."""

READ_ONLY_MESSAGE = "read-only file; not written (make it writable or exclude it)"

_TEMP_TAIL = re.compile(r"(?:([0-9]{1,10})\.)?[a-z0-9_]{8}")
"""What follows ``.<name>.`` in a temp name: our pid (absent before it was added) and
``tempfile.mkstemp``'s eight random characters."""

_IN_FLIGHT: set[str] = set()
"""Temp files this process is writing now (its own pid must not make them look stale)."""
_IN_FLIGHT_LOCK = threading.Lock()


@dataclass(frozen=True)
class SourceFile:
    """A Python source file as text, plus what is needed to write it back identically."""

    path: Path
    text: str
    encoding: str
    bom: bool
    mode: int | None = None

    def encode(self, text: str | None = None) -> bytes:
        """Bytes for ``text`` (default: the original text) in this file's encoding and BOM."""
        body = (self.text if text is None else text).encode(self.encoding)
        return (codecs.BOM_UTF8 if self.bom else b"") + body


def binary_error(data: bytes, path: Path | str) -> AutosigError | None:
    """The error for a file that is not Python source but binary data (a NUL byte, which
    Python itself refuses in source code), else None."""
    at = data.find(b"\x00")
    if at < 0:
        return None
    return AutosigError(
        f"skipped: binary data, not Python source (a NUL byte at byte {at})", str(path)
    )


def decode_source(data: bytes, path: Path | str) -> tuple[str, str, bool]:
    """Decode source bytes the way Python would: BOM, coding cookie, else UTF-8.

    Returns (text, encoding, bom). Raises AutosigError for undecodable bytes and for
    binary data (``binary_error``).
    """
    binary = binary_error(data, path)
    if binary is not None:
        raise binary
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "invalid or missing encoding declaration" not in str(exc.msg):
            raise AutosigError(f"bad encoding declaration: {exc.msg}", str(path)) from None
        encoding = "utf-8"  # no cookie and not UTF-8: decoding below names the byte
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8) :]
        encoding = "utf-8"
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        raise AutosigError(
            f"not valid {encoding} text{where} ({reason}); declare the file's encoding "
            "with a '# -*- coding: ... -*-' line or convert it to UTF-8",
            str(path),
        ) from None
    return text, encoding, bom


def read_bytes(path: Path | str) -> bytes:
    """A source file's bytes; every failure becomes a one-line AutosigError naming it."""
    p = Path(path)
    try:
        return p.read_bytes()
    except IsADirectoryError:
        raise AutosigError("is a directory, not a Python file", str(p)) from None
    except OSError as exc:
        raise _read_error(exc, p) from None


def _read_error(exc: OSError, path: Path) -> AutosigError:
    if isinstance(exc, FileNotFoundError):
        return AutosigError("no such file (was it deleted during the run?)", str(path))
    if isinstance(exc, PermissionError):
        return AutosigError("permission denied while reading", str(path))
    return AutosigError(f"cannot read: {exc.strerror or exc}", str(path))


def read_source(path: Path | str, data: bytes | None = None) -> SourceFile:
    """Read (or, given its ``data``, decode) a source file; every failure becomes a
    one-line AutosigError naming it."""
    p = Path(path)
    if data is None:
        data = read_bytes(p)
    try:
        mode = stat.S_IMODE(p.stat().st_mode)
    except OSError as exc:
        raise _read_error(exc, p) from None
    text, encoding, bom = decode_source(data, p)
    return SourceFile(path=p, text=text, encoding=encoding, bom=bom, mode=mode)


def is_read_only(path: Path | str) -> bool:
    """Whether the user made ``path`` read-only: no write bit for anyone, its owner
    (us) without the write bit, or the OS says we may not write it.

    Checked explicitly because the atomic rename ignores the file's own bits, and
    ``os.access`` alone says "writable" to root (CI, containers). False when the file
    does not exist.
    """
    try:
        info = os.stat(path)
    except OSError:
        return False
    mode = stat.S_IMODE(info.st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return True
    if info.st_uid == os.geteuid() and not mode & stat.S_IWUSR:
        return True
    return not os.access(path, os.W_OK)


def is_temp_file(path: Path | str) -> bool:
    """Whether ``path`` is one of autosig's temp files (never a source to read or walk)."""
    name = Path(path).name
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    except (OverflowError, OSError):
        return False
    return True


def remove_stale_temp_files(path: Path | str, now: float | None = None) -> list[Path]:
    """Delete temp files a killed write of ``path`` left beside it; returns them.

    A temp file is stale when the process named in it is gone (or is this one, which
    is not writing it: pids are reused, in containers often exactly), or when it is
    older than ``STALE_TEMP_AGE`` whoever wrote it. Temp files of other files, and
    anything not named like ours, are never touched. Best effort: errors are ignored.
    """
    p = Path(path)
    prefix = f".{p.name}."
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(p.parent if str(p.parent) else "."))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        match = _TEMP_TAIL.fullmatch(name[len(prefix) : -len(TEMP_SUFFIX)])
        if match is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            age = now - entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        with _IN_FLIGHT_LOCK:
            if entry.path in _IN_FLIGHT or os.path.abspath(entry.path) in _IN_FLIGHT:
                continue
        if age < STALE_TEMP_AGE:
            pid = int(match.group(1)) if match.group(1) else None
            if pid is None:
                continue  # an older autosig's temp: only its age can tell
            if pid != os.getpid() and _pid_alive(pid):
                continue
        try:
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


def _real(path: Path) -> Path:
    """Where a write to ``path`` must land: a symlink's target, so the link stays a link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _prepare(path: Path, data: bytes, mode: int | None) -> str:
    """Write ``data`` to a new temp file beside ``path`` (mode and owner of ``path``)."""
    path = _real(path)
    directory = path.parent if str(path.parent) else Path(".")
    owner: tuple[int, int] | None = None
    try:
        info = path.stat()
        owner = (info.st_uid, info.st_gid)
        if mode is None:
            mode = stat.S_IMODE(info.st_mode)
    except OSError:
        pass
    if mode is None:
        mode = 0o644
    remove_stale_temp_files(path)
    import tempfile  # here: a check that writes nothing never loads it (and shutil, random)

    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=directory
        )
    except OSError as exc:
        raise AutosigError(f"cannot write: {exc.strerror or exc}", str(path)) from None
    with _IN_FLIGHT_LOCK:
        _IN_FLIGHT.add(os.path.abspath(tmp))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if owner is not None:
            _keep_owner(tmp, owner)
    except OSError as exc:
        _discard(tmp)
        raise AutosigError(f"cannot write: {exc.strerror or exc}", str(path)) from None
    return tmp


def _keep_owner(tmp: str, owner: tuple[int, int]) -> None:
    """Give the new file the old one's owner and group (root fixing a user's checkout
    must not leave root-owned files). Only root may do it; others keep their own."""
    info = os.stat(tmp)
    if (info.st_uid, info.st_gid) == owner:
        return
    try:
        os.chown(tmp, *owner)
    except (PermissionError, NotImplementedError):
        pass


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass
    with _IN_FLIGHT_LOCK:
        _IN_FLIGHT.discard(os.path.abspath(tmp))


def _commit(tmp: str, path: Path) -> None:
    path = _real(path)
    try:
        os.replace(tmp, path)
    except OSError as exc:
        _discard(tmp)
        raise AutosigError(f"cannot write: {exc.strerror or exc}", str(path)) from None
    with _IN_FLIGHT_LOCK:
        _IN_FLIGHT.discard(os.path.abspath(tmp))


def atomic_write_bytes(path: Path | str, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically; the file's permission bits are kept.

    An existing read-only file is refused (AutosigError), never silently replaced;
    stale temp files of ``path`` from a killed run are removed first.
    """
    p = Path(path)
    if is_read_only(p):
        raise AutosigError("read-only file; not overwritten (make it writable first)", str(p))
    _commit(_prepare(p, data, mode), p)


def _check_writable(source: SourceFile) -> None:
    """Refuse (AutosigError) a source deleted, edited or made read-only since it was read:
    a fix must never recreate a removed file, overwrite an edit saved meanwhile, or
    change a file its owner made read-only (vendored or generated code)."""
    try:
        current = source.path.read_bytes()
    except FileNotFoundError:
        raise AutosigError(
            "was deleted while autosig ran; not recreated", str(source.path)
        ) from None
    except OSError as exc:
        raise AutosigError(
            f"cannot read before writing: {exc.strerror or exc}", str(source.path)
        ) from None
    if current != source.encode():
        raise AutosigError(
            "changed on disk while autosig ran; not overwritten (run autosig fix again)",
            str(source.path),
        )
    if is_read_only(source.path):
        raise AutosigError(READ_ONLY_MESSAGE, str(source.path))


def write_source(source: SourceFile, new_text: str) -> None:
    """Write ``new_text`` back with the original encoding, BOM and mode, atomically.

    Refuses (AutosigError) when the file was deleted, changed on disk since it was
    read, or is read-only.
    """
    _check_writable(source)
    _commit(_prepare(source.path, source.encode(new_text), source.mode), source.path)


def write_sources(changes: Sequence[tuple[SourceFile, str]]) -> None:
    """Write several files all or nothing, as far as a file system allows.

    Every file is checked (see ``write_source``) and its new content written to a temp
    file first; only when all of that worked are the files renamed into place. Any
    refusal or failure before that removes the temp files and changes nothing.
    """
    for source, _ in changes:
        _check_writable(source)
    prepared: list[tuple[str, Path]] = []
    try:
        for source, new_text in changes:
            prepared.append(
                (_prepare(source.path, source.encode(new_text), source.mode), source.path)
            )
    except AutosigError:
        for tmp, _ in prepared:
            _discard(tmp)
        raise
    for index, (tmp, path) in enumerate(prepared):
        try:
            _commit(tmp, path)
        except AutosigError as exc:
            for later, _ in prepared[index + 1 :]:
                _discard(later)
            done = [str(p) for _, p in prepared[:index]]
            already = f" (already written: {', '.join(done)})" if done else ""
            raise AutosigError(f"{exc.message}{already}", exc.path) from None


class _Patterns:
    """Exclude globs, matched as one regular expression (a walk asks it for every entry)."""

    def __init__(self, patterns: Iterable[str]) -> None:
        globs = [pattern.rstrip("/") for pattern in patterns]
        self._regex = (
            re.compile("|".join(fnmatch.translate(glob) for glob in globs)) if globs else None
        )

    def matches(self, text: str) -> bool:
        return self._regex is not None and self._regex.match(text) is not None

    def excludes(self, path: Path) -> bool:
        """A glob matches the whole path (POSIX form) or any part of it."""
        return self.matches(path.as_posix()) or any(self.matches(part) for part in path.parts)


def iter_python_files(
    paths: Iterable[Path | str], exclude: Iterable[str] = ()
) -> Iterator[Path | AutosigError]:
    """Yield every ``.py`` file under ``paths`` (files named directly are always yielded).

    Bad paths are yielded as AutosigError so the caller reports them and goes on (an
    autosig temp file named directly is one). Symlinked directories are not followed
    (no loops); each file is yielded once. A glob of ``exclude`` (or of the defaults)
    excludes a walked file or folder when it matches its whole path or any part of it.
    """
    patterns = _Patterns((*DEFAULT_EXCLUDES, *exclude))
    user_patterns = _Patterns(exclude)
    seen: set[str] = set()
    for raw in paths:
        root = Path(raw)
        if not root.exists() and not root.is_symlink():
            yield AutosigError("no such file or directory", str(root))
            continue
        if root.is_file():
            if user_patterns.excludes(root):
                continue
            if is_temp_file(root):
                yield AutosigError(
                    "an autosig temp file left by an interrupted write, not a source; "
                    "delete it (the next fix of its file also does)",
                    str(root),
                )
                continue
            resolved = os.path.realpath(root)
            if resolved not in seen:
                seen.add(resolved)
                yield root
            continue
        if not root.is_dir():
            yield AutosigError("not a file or directory", str(root))
            continue
        if any(patterns.matches(part) for part in root.parts):
            continue  # every path under it has that part
        yield from _walk(root, os.path.realpath(root), patterns, seen)


def _walk(folder: Path, real: str, patterns: _Patterns, seen: set[str]) -> Iterator[Path]:
    """The ``.py`` files under ``folder`` (already let through; ``real`` is its resolved
    path): its own files in name order, then each subfolder's, as ``os.walk`` orders
    them. A subfolder or file is excluded when a glob matches its path or its name (its
    folders' names passed already). Files are told apart by their resolved paths."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return
    posix = folder.as_posix()
    prefix = "" if posix == "." else posix.rstrip("/") + "/"
    folders: list[str] = []
    for entry in entries:
        name = entry.name
        is_source = name.endswith(".py")  # autosig's temp files end otherwise
        try:
            is_folder = entry.is_dir()
        except OSError:
            continue
        if is_folder:
            if not entry.is_symlink() and not _excluded(prefix + name, name, patterns):
                folders.append(name)
            continue
        if not is_source or _excluded(prefix + name, name, patterns):
            continue
        path = folder / name
        if entry.is_symlink():
            if not path.exists():
                continue  # a dangling link
            resolved = os.path.realpath(path)
        else:
            resolved = os.path.join(real, name)
        if resolved in seen:
            continue
        seen.add(resolved)
        yield path
    for name in folders:
        yield from _walk(folder / name, os.path.join(real, name), patterns, seen)


def _excluded(posix: str, name: str, patterns: _Patterns) -> bool:
    return patterns.matches(name) or patterns.matches(posix)


LARGE_FILE_SIZE = 500_000
"""Files at least this big get a note on stderr before they are parsed: parsing time
grows faster than size (measured: 0.5 MB 3-10 s to check, 1.5 MB 16-63 s to check and
30-230 s to fix, up to 2 GB of memory), so a user should know why the run stalls."""

DEFAULT_MAX_FILE_SIZE = 2_000_000
"""Larger files are skipped with a warning (``max-file-size``; 0: no limit). Hand-written
code is never near it; past it one file can take many minutes and gigabytes."""

_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(?:([kmg])(i?)b?|b|bytes?)?\s*", re.IGNORECASE)
_UNIT_POWER = {"k": 1, "m": 2, "g": 3}


def parse_size(value: str | int) -> int:
    """Bytes in ``value``: a number of bytes, or ``"2MB"``, ``"500 kB"``, ``"1.5M"``,
    ``"4MiB"`` (kB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024). ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size like '2MB' or a number of bytes, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a size cannot be negative, got {value}")
        return value
    match = _SIZE.fullmatch(str(value))
    if match is None:
        raise ValueError(f"expected a size like '2MB', '500kB' or a number of bytes, got {value!r}")
    number, unit, binary = match.groups()
    base = 1024 if binary else 1000
    return int(float(number) * base ** _UNIT_POWER.get((unit or "").lower(), 0))


def format_size(size: int) -> str:
    """``1_500_000`` -> ``"1.5 MB"`` (decimal units, like ``parse_size`` reads them)."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


@dataclass(frozen=True)
class SizeNotice:
    """A file large enough to be slow (a note), or over the limit and skipped (a warning)."""

    path: str
    size: int
    limit: int
    skipped: bool

    def __str__(self) -> str:
        size = format_size(self.size)
        if self.skipped:
            return (
                f"{self.path}: warning: skipped: {size} is over the max-file-size of "
                f"{format_size(self.limit)} (raise it with --max-file-size or the config's "
                "'max-file-size'; 0 = no limit)"
            )
        return (
            f"{self.path}: note: large file ({size}); it may take a while (parse time grows "
            "faster than size)"
        )


def size_notice(path: Path | str, size: int, limit: int) -> SizeNotice | None:
    """What to say about a file of ``size`` bytes under ``limit`` (0: none), if anything."""
    if limit and size > limit:
        return SizeNotice(str(path), size, limit, skipped=True)
    if size >= LARGE_FILE_SIZE:
        return SizeNotice(str(path), size, limit, skipped=False)
    return None


_DOT_FUNCTION = re.compile(rb"\.\s*function\b")
_IMPORTED_FUNCTION = re.compile(rb"from\s+tensorflow[\w.]*\s+import\s*\(?[^)]*?\bfunction\b")
"""PREFILTER's two alternatives apart: each starts with a literal the regular expression
engine scans for quickly, where the alternation tries both at every byte (6x slower)."""


def mentions_function(data: bytes) -> bool:
    """Cheap text prefilter (see PREFILTER): only files that may hold a site are parsed.

    About 10 ms for the 10 MB of tf-models-official: a warm re-check reads every file.
    """
    return b"function" in data and (
        _DOT_FUNCTION.search(data) is not None or _IMPORTED_FUNCTION.search(data) is not None
    )


STATE_DIR = ".autosig"
"""The folder autosig keeps its profiles and stored verify runs in (default locations)."""
STATE_DIR_GITIGNORE = (
    "# Created by autosig automatically: profiles and stored runs, not source.\n*\n"
)


def mark_state_dir(path: Path | str) -> None:
    """Give the ``.autosig`` folder holding ``path`` (or being it) a ``.gitignore`` that
    ignores everything in it, as pytest does for its cache, so its profiles, samples and
    stored runs never show up in ``git status``. Paths outside such a folder are left
    alone; a folder that cannot be written is too (the write it holds will say so)."""
    p = Path(path).absolute()
    for folder in (p, *p.parents):
        if folder.name != STATE_DIR:
            continue
        ignore = folder / ".gitignore"
        if folder.is_dir() and not ignore.exists():
            with contextlib.suppress(OSError):
                ignore.write_text(STATE_DIR_GITIGNORE, encoding="utf-8")
        return
