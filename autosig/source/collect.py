"""The one file collector of ``check`` and ``fix``: which files a run reads, and with
which rules.

Walks the paths (``files.iter_python_files``: excludes, temp files, symlinks), applies
the config's excludes, reads each file's bytes once, and sorts them into files that may
hold a tf.function (the text prefilter, ``files.mentions_function``: only these are ever
parsed) and the rest; files over the size limit that may hold a site are skipped with a
notice. Bad paths and unreadable files become errors naming them, and the others are
still collected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autosig.errors import AutosigError
from autosig.source.config import Config
from autosig.source.dependencies import new_run
from autosig.source.files import (
    SizeNotice,
    binary_error,
    iter_python_files,
    mentions_function,
    read_bytes,
    size_notice,
)


@dataclass(frozen=True)
class CollectedFile:
    """A file's path and bytes, and the rules selected for it."""

    path: Path
    data: bytes
    select: tuple[str, ...] | None
    ignore: tuple[str, ...]


@dataclass
class Collection:
    """What a walk found: files to parse, the others, errors and size notices."""

    files: list[CollectedFile] = field(default_factory=list)
    """Files that may hold a tf.function, within the size limit, in walk order."""
    others: list[CollectedFile] = field(default_factory=list)
    """Files the prefilter left out (a profile's call-site plan may still edit them)."""
    errors: list[AutosigError] = field(default_factory=list)
    notices: list[SizeNotice] = field(default_factory=list)
    """Files large enough to be slow, and files skipped as over the size limit."""
    seen: int = 0
    """Python files found under the paths (after excludes)."""

    @property
    def skipped(self) -> list[SizeNotice]:
        """Files found but not checked (over the size limit)."""
        return [notice for notice in self.notices if notice.skipped]


def rules_for(
    config: Config,
    path: Path | str,
    select: Sequence[str] | None,
    ignore: Sequence[str] | None,
) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """The rules selected for one file: its config's (per-path ignores included), with
    ``--select`` replacing the selection and ``--ignore`` adding to the ignores."""
    file_select, file_ignore = config.rules_for(path)
    if select is not None:
        file_select = tuple(select)
    return file_select, _with_ignored(file_ignore, ignore)


def stdin_rules(
    config: Config, select: Sequence[str] | None, ignore: Sequence[str] | None
) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """The rules selected for source read from stdin (``check -``, ``fix -``): as
    ``rules_for``, but the text has no path, so no per-path ignore applies."""
    file_select = tuple(select) if select is not None else config.select
    return file_select, _with_ignored(config.ignore, ignore)


def _with_ignored(ignored: Sequence[str], more: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(ignored) + tuple(c for c in more or () if c not in ignored)


def collect(
    paths: Sequence[Path | str],
    config: Config,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    max_file_size: int | None = None,
    on_notice: Callable[[SizeNotice], None] | None = None,
    keep_others: bool = False,
    name: Callable[[Path], str] = str,
) -> Collection:
    """Every Python file under ``paths``, read and sorted (see the module docstring).

    ``exclude`` adds to the config's excludes; ``max_file_size`` (None: the config's; 0:
    no limit). ``on_notice`` hears about each skipped or merely large file as soon as it
    is found, before any parsing, under ``name(path)``. ``keep_others``: keep the files
    the prefilter leaves out (their bytes are dropped otherwise).
    """
    new_run()
    found = Collection()
    limit = config.max_file_size if max_file_size is None else max_file_size
    for item in iter_python_files(paths, exclude=tuple(config.exclude) + tuple(exclude)):
        if isinstance(item, AutosigError):
            found.errors.append(item)
            continue
        if config.is_excluded(item):
            continue
        found.seen += 1
        try:
            data = read_bytes(item)
        except AutosigError as exc:
            found.errors.append(exc)
            continue
        binary = binary_error(data, item)
        if binary is not None:  # never parsed: the prefilter alone would skip it silently
            found.errors.append(binary)
            continue
        if not mentions_function(data):
            if keep_others:
                found.others.append(
                    CollectedFile(item, data, *rules_for(config, item, select, ignore))
                )
            continue
        notice = size_notice(name(item), len(data), limit)
        if notice is not None:
            found.notices.append(notice)
            if on_notice is not None:
                on_notice(notice)
            if notice.skipped:
                continue
        found.files.append(CollectedFile(item, data, *rules_for(config, item, select, ignore)))
    return found
