"""Run the static rules over a tree: walk, prefilter, parse in parallel, collect.

One bad file (missing, unreadable, not UTF-8, not Python) becomes one error and the
others are still checked. Files that cannot hold a tf.function (see
``files.mentions_function``) are read but never parsed, which is what makes ``check``
fast on large trees. Output order never depends on scheduling: findings are sorted by
(path, line, col, code) and errors by path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autosig.errors import AutosigError
from autosig.progress import Progress
from autosig.source.codes import code_kind, expand_codes, selected_codes
from autosig.source.config import Config
from autosig.source.files import (
    SizeNotice,
    binary_error,
    decode_source,
    iter_python_files,
    mentions_function,
    size_notice,
)
from autosig.source.sites import Finding

MIN_FILES_FOR_POOL = 4
"""Fewer files to parse than this are checked inline: starting workers would cost more."""


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[AutosigError] = field(default_factory=list)
    files_seen: int = 0
    """Python files found under the paths (after excludes)."""
    files_parsed: int = 0
    """Files that passed the text prefilter and were parsed."""
    notices: list[SizeNotice] = field(default_factory=list)
    """Files large enough to be slow, and files skipped as over ``max_file_size``."""

    @property
    def skipped(self) -> list[SizeNotice]:
        """Files found but not checked (over ``max_file_size``)."""
        return [notice for notice in self.notices if notice.skipped]

    @property
    def files_checked(self) -> int:
        """Python files really checked: those seen less those skipped."""
        return self.files_seen - len(self.skipped)


@dataclass(frozen=True)
class _Task:
    """One file to parse; plain data so it pickles cheaply to a worker process."""

    path: str
    data: bytes
    select: tuple[str, ...] | None
    ignore: tuple[str, ...]


def check_paths(
    paths: Sequence[Path | str],
    config: Config,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    jobs: int | None = None,
    progress: bool = False,
    exclude: Sequence[str] = (),
    max_file_size: int | None = None,
    on_notice: Callable[[SizeNotice], None] | None = None,
) -> CheckResult:
    """Check every Python file under ``paths`` with the selected static rules.

    ``select`` (from the command line) replaces the config's selection; ``ignore`` and
    ``exclude`` add to the config's. ``jobs``: worker processes (None: the config's
    value, else one per CPU; 1: inline). ``max_file_size`` (None: the config's; 0: no
    limit): larger files that may hold a site are skipped, not parsed. ``on_notice`` hears
    about each skipped or merely large file as soon as it is found, before parsing.
    """
    result = CheckResult()
    tasks: list[_Task] = []
    excludes = tuple(config.exclude) + tuple(exclude)
    limit = config.max_file_size if max_file_size is None else max_file_size
    for item in iter_python_files(paths, exclude=excludes):
        if isinstance(item, AutosigError):
            result.errors.append(item)
            continue
        if config.is_excluded(item):
            continue
        result.files_seen += 1
        try:
            data = item.read_bytes()
        except OSError as exc:
            result.errors.append(AutosigError(f"cannot read: {exc.strerror or exc}", str(item)))
            continue
        binary = binary_error(data, item)
        if binary is not None:  # never parsed: the prefilter alone would skip it silently
            result.errors.append(binary)
            continue
        if not mentions_function(data):
            continue
        notice = size_notice(item, len(data), limit)
        if notice is not None:
            result.notices.append(notice)
            if on_notice is not None:
                on_notice(notice)
            if notice.skipped:
                continue
        file_select, file_ignore = config.rules_for(item)
        if select is not None:
            file_select = tuple(select)
        file_ignore = tuple(file_ignore) + tuple(c for c in ignore or () if c not in file_ignore)
        tasks.append(_Task(str(item), data, file_select, file_ignore))

    result.files_parsed = len(tasks)
    workers = _worker_count(jobs if jobs is not None else config.jobs, len(tasks))
    with Progress(len(tasks), "autosig check", enabled=progress) as bar:
        for findings, error in _run(tasks, workers, bar):
            result.findings.extend(findings)
            if error is not None:
                result.errors.append(error)

    result.findings.sort(key=lambda f: (f.path, f.line, f.col, f.code, f.message))
    result.errors.sort(key=lambda e: (e.path or "", e.message))
    return result


def require_runnable_rules(
    select: Sequence[str] | None,
    ignore: Sequence[str] | None,
    config: Config,
    *,
    command: str = "check",
    profile: bool = False,
) -> None:
    """Refuse a selection that leaves ``command`` no rule to run (AutosigError naming why).

    ``--select AS301`` (a verify code) or ``AS2`` (profile codes, without a profile)
    would otherwise check nothing and report "No findings", passing a CI gate. The
    selection is ``select`` (the command line), else the config's, less every ignore;
    ``profile``: the command has a profile, so profile codes run too.
    """
    chosen = select if select is not None else config.select
    ignored = tuple(config.ignore) + tuple(ignore or ())
    runnable = {"static", "profile"} if profile else {"static"}
    if any(code_kind(code) in runnable for code in selected_codes(chosen, ignored)):
        return
    if chosen is None:
        if ignore:
            what, path = f"--ignore {','.join(ignore)}", None
        else:
            what, path = _config_list("ignore", config.ignore), _source(config)
        raise AutosigError(f"{what} ignores every rule autosig {command} runs", path)
    picked = sorted(expand_codes(chosen))
    reasons = []
    verify = [code for code in picked if code_kind(code) == "verify"]
    if verify:
        reasons.append(f"{_are(verify, 'a verify code')} (use autosig verify)")
    from_profile = [code for code in picked if code_kind(code) == "profile"]
    if from_profile and "profile" not in runnable:
        where = "add --profile FILE" if command == "fix" else "use autosig fix --profile FILE"
        reasons.append(f"{_are(from_profile, 'a profile code')} ({where})")
    left = [code for code in picked if code_kind(code) in runnable]
    if left:
        reasons.append(f"{_are(left, 'ignored', plural='ignored')}")
    if select is not None:
        what, path = f"--select {','.join(select)}", None
    else:
        what, path = _config_list("select", chosen), _source(config)
    raise AutosigError(
        f"{what} leaves no rule for autosig {command} to run: {'; '.join(reasons)}", path
    )


def _config_list(key: str, codes: Sequence[str]) -> str:
    return f"{key} = [" + ", ".join(f'"{code}"' for code in codes) + "]"


def _source(config: Config) -> str | None:
    return str(config.source) if config.source is not None else None


def _are(codes: Sequence[str], what: str, plural: str | None = None) -> str:
    """``AS301 is a verify code`` / ``AS301, AS302 are verify codes``."""
    if len(codes) == 1:
        return f"{codes[0]} is {what}"
    many = plural or what.removeprefix("a ") + "s"
    return f"{', '.join(codes)} are {many}"


def _worker_count(jobs: int | None, files: int) -> int:
    if jobs is None:
        jobs = _usable_cpus()
    if files < MIN_FILES_FOR_POOL:
        return 1
    return max(1, min(jobs, files))


def _usable_cpus() -> int:
    """CPUs this process may run on (a container's or taskset's limit, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _run(
    tasks: list[_Task], workers: int, bar: Progress
) -> Iterable[tuple[list[Finding], AutosigError | None]]:
    """Every task's result exactly once (order unspecified), from a pool when ``workers > 1``."""
    done = 0
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor  # ~20 ms: only with a pool
        from concurrent.futures.process import BrokenProcessPool

        # Biggest files first and small chunks: parse time grows with size (one 3,000-line
        # file takes seconds), so this keeps both workers busy until the end.
        tasks = sorted(tasks, key=lambda t: len(t.data), reverse=True)
        chunksize = max(1, len(tasks) // (workers * 16))
        try:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                for outcome in pool.map(check_one, tasks, chunksize=chunksize):
                    done += 1
                    bar.advance()
                    yield outcome
            return
        except (BrokenProcessPool, OSError, NotImplementedError):
            pass  # no usable process pool here (or a worker died): finish inline
    for task in tasks[done:]:
        yield check_one(task)
        bar.advance()


def check_one(task: _Task) -> tuple[list[Finding], AutosigError | None]:
    """Decode and check one file; every failure becomes an AutosigError naming it."""
    from autosig.rules.run import check_text

    try:
        text, _, _ = decode_source(task.data, task.path)
        return check_text(text, task.path, select=task.select, ignore=task.ignore), None
    except AutosigError as exc:
        return [], exc
    except RecursionError:
        return [], AutosigError("too deeply nested to analyse", task.path)
    except Exception as exc:  # noqa: BLE001 - a rule bug must not hide the other files
        return [], AutosigError(
            f"internal error while checking ({type(exc).__name__}: {exc}); "
            "please report this as an autosig bug",
            task.path,
        )
