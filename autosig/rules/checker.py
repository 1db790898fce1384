"""Run the static rules over a tree: collect, prefilter, reuse cached results, parse the
rest in parallel.

One bad file (missing, unreadable, not UTF-8, not Python) becomes one error and the
others are still checked. Files that cannot hold a tf.function (see
``files.mentions_function``) are read but never parsed, which is what makes ``check``
fast on large trees; with a result cache (``source.cache``) an unchanged file is not
parsed either. Output order never depends on scheduling or the cache: findings are
sorted by (path, line, col, code) and errors by path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

from autosig.errors import AutosigError
from autosig.pool import run_tasks
from autosig.rules.check_cache import CheckOutcome, ResultCache
from autosig.source.codes import code_kind, expand_codes, selected_codes
from autosig.source.collect import collect
from autosig.source.config import Config
from autosig.source.dependencies import recording
from autosig.source.files import SizeNotice, decode_source
from autosig.source.sites import Finding


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[AutosigError] = field(default_factory=list)
    files_seen: int = 0
    """Python files found under the paths (after excludes)."""
    files_parsed: int = 0
    """Files that passed the text prefilter and were parsed (not taken from the cache)."""
    files_cached: int = 0
    """Files that passed the text prefilter whose result came from the cache."""
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
class FileTask:
    """One file to check; plain data so it pickles cheaply to a worker process."""

    path: str
    data: bytes
    select: tuple[str, ...] | None
    ignore: tuple[str, ...]
    record: bool = True
    """Record the other files the result reads (``dependencies.recording``): only a
    result cache asks, and answering means walking and hashing the project."""


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
    cache: ResultCache | None = None,
) -> CheckResult:
    """Check every Python file under ``paths`` with the selected static rules.

    ``select`` (from the command line) replaces the config's selection; ``ignore`` and
    ``exclude`` add to the config's. ``jobs``: worker processes (None: the config's
    value, else one per CPU this process may use; 1: inline). ``max_file_size`` (None:
    the config's; 0: no limit): larger files that may hold a site are skipped, not
    parsed. ``on_notice`` hears about each skipped or merely large file as soon as it is
    found, before parsing. ``cache``: reuse and store results (None: parse every file).
    """
    found = collect(
        paths,
        config,
        select=select,
        ignore=ignore,
        exclude=exclude,
        max_file_size=max_file_size,
        on_notice=on_notice,
    )
    result = CheckResult(errors=found.errors, files_seen=found.seen, notices=found.notices)
    tasks = [FileTask(str(f.path), f.data, f.select, f.ignore) for f in found.files]
    for outcome in check_tasks(
        tasks, jobs if jobs is not None else config.jobs, progress=progress, cache=cache
    ):
        result.findings.extend(outcome.findings)
        if outcome.error is not None:
            result.errors.append(outcome.error)
    if cache is not None:
        result.files_cached = cache.hits
    result.files_parsed = len(tasks) - result.files_cached
    result.findings.sort(key=lambda f: (f.path, f.line, f.col, f.code, f.message))
    result.errors.sort(key=lambda e: (e.path or "", e.message))
    return result


def check_tasks(
    tasks: Sequence[FileTask],
    jobs: int | None,
    *,
    progress: bool = False,
    cache: ResultCache | None = None,
) -> list[CheckOutcome]:
    """Each task's outcome, in order: from ``cache`` where it holds a valid one, else
    checked (in worker processes when there are enough files) and stored there."""
    outcomes: list[CheckOutcome | None] = [None] * len(tasks)
    if cache is None:
        tasks = [replace(task, record=False) for task in tasks]
    todo: list[int] = []
    for index, task in enumerate(tasks):
        cached = cache.get(task.path, task.data, task.select, task.ignore) if cache else None
        if cached is None:
            todo.append(index)
        else:
            outcomes[index] = cached
    checked = run_tasks(
        check_one,
        [tasks[i] for i in todo],
        jobs=jobs,
        cost=_check_cost,
        label="autosig check",
        progress=progress,
    )
    for index, outcome in zip(todo, checked, strict=True):
        outcomes[index] = outcome
        if cache is not None:
            task = tasks[index]
            cache.put(task.path, task.data, task.select, task.ignore, outcome)
    if cache is not None:
        cache.save_digests()
    return outcomes  # type: ignore[return-value]


def _check_cost(task: FileTask) -> int:
    """A file's expected work: its size (every task passed the text prefilter when it
    was collected, so each will be parsed), so the pool hands out the largest first and
    one by one."""
    return len(task.data)


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


def check_one(task: FileTask) -> CheckOutcome:
    """Decode and check one file, recording the other files its result read; every
    failure becomes an AutosigError naming it."""
    from autosig.rules.run import check_text

    with recording() if task.record else nullcontext([]) as dependencies:
        try:
            text, _, _ = decode_source(task.data, task.path)
            outcome = CheckOutcome(
                check_text(text, task.path, select=task.select, ignore=task.ignore)
            )
        except AutosigError as exc:
            outcome = CheckOutcome(error=exc)
        except RecursionError:
            error = AutosigError("too deeply nested to analyse", task.path)
            outcome = CheckOutcome(error=error, cacheable=False)
        except Exception as exc:  # noqa: BLE001 - a rule bug must not hide the other files
            error = AutosigError(
                f"internal error while checking ({type(exc).__name__}: {exc}); "
                "please report this as an autosig bug",
                task.path,
            )
            outcome = CheckOutcome(error=error, cacheable=False)
    outcome.dependencies = dependencies
    return outcome
