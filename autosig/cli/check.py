"""``autosig check PATH...``: static findings (AS1xx), no TensorFlow, no user code run."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autosig.cli.common_options import (
    cache_options,
    common_options,
    ignore_option,
    max_file_size_option,
    output_file_option,
    select_option,
)
from autosig.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, AutosigError
from autosig.report.findings import format_error, write_report
from autosig.rules.check_cache import ResultCache, open_cache
from autosig.rules.checker import (
    CheckResult,
    FileTask,
    check_paths,
    check_tasks,
    require_runnable_rules,
)
from autosig.source.collect import stdin_rules
from autosig.source.config import Config, load_config
from autosig.source.files import SizeNotice, mentions_function


@click.command(
    "check",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  autosig check                             # the current directory (.)
  autosig check src/                        # every .py file under src/
  autosig check train.py model.py           # just these files
  autosig check . --exclude 'tests/*' -j 4  # skip tests, 4 worker processes
  autosig check src/ --select AS101,AS105   # only these rules
  autosig check src/ --format sarif -o autosig.sarif   # for GitHub code scanning
  autosig check src/ --format github        # annotations in a GitHub Actions log
  autosig check - < model.py                # read the source from stdin (editors)
  autosig check src/ --no-cache             # parse every file, ignore stored results

\b
Exit codes: 0 no findings, 1 findings, 2 an error (bad path, bad config, a file
that does not parse or is not valid text). Errors win over findings; every other
file is still checked. A file skipped as over --max-file-size is a warning on
stderr (and in sarif and github output), is counted apart in the summary line, and
does not change the exit code. A --select (or config 'select') that leaves no
static rule, such as only verify (AS3xx) or profile (AS2xx) codes, is an error.
""",
)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@select_option
@ignore_option
@common_options
@output_file_option
@max_file_size_option
@cache_options
def command(
    paths: tuple[Path, ...],
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    output_format: str,
    jobs: int | None,
    quiet: bool,
    config_file: Path | None,
    exclude: tuple[str, ...],
    output_file: Path | None,
    max_file_size: int | None,
    cache_dir: Path | None,
    no_cache: bool,
) -> None:
    """Report static findings (AS101-AS107) in Python files and directories.

    Finds every tf.function however it is spelled and reports code inside it that
    misbehaves under tracing: print, Python RNG, Python state, list appends, .numpy(),
    tf.function created per call, functions with no input_signature. Never imports
    TensorFlow or your code; files that cannot contain a tf.function are not parsed.

    Settings come from [tool.autosig] in the nearest pyproject.toml (or autosig.toml)
    above the first PATH: select, ignore, exclude, per-path-ignores, jobs,
    max-file-size. Suppress one finding with '# autosig: ignore[AS101]' on its line or
    on the def line. Files over max-file-size (default 2 MB) are skipped with a warning
    on stderr; files over 500 kB get a note there, as they can take a while.

    Without PATH, checks the current directory. PATH '-' reads one file's source from
    stdin (reported as '-'), for editor integrations.

    Results are kept in a cache (.autosig_cache in the project, with a .gitignore
    inside), keyed by each file's bytes, the rules selected for it, autosig's own code
    and the project files its result read: a re-check of unchanged files parses
    nothing. --no-cache bypasses it, --cache-dir moves it.
    """
    paths = paths or (Path("."),)
    try:
        stdin = _wants_stdin(paths)
        config = load_config(paths, config_file)
        require_runnable_rules(select, ignore, config, command="check")
    except AutosigError as exc:
        click.echo(format_error(exc), err=True)
        sys.exit(EXIT_ERROR)
    cache = open_cache(cache_dir, config.cache_dir, config.root, enabled=not no_cache)
    if stdin:
        result = _check_stdin(config, select, ignore, cache)
    else:
        result = check_paths(
            paths,
            config,
            select=select,
            ignore=ignore,
            jobs=jobs,
            progress=not quiet,
            exclude=exclude,
            max_file_size=max_file_size,
            on_notice=lambda notice: _tell(notice, quiet),
            cache=cache,
        )
    if result.files_seen == 0 and not result.errors and not quiet:
        click.echo("warning: no Python files found under the given paths", err=True)
    write_report(
        result.findings,
        result.errors,
        output_format,
        quiet=quiet,
        output=output_file,
        files_checked=result.files_checked,
        unsafe_fixes=config.unsafe_fixes,
        skipped=result.skipped,
    )
    if result.errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if result.findings else EXIT_OK)


def _wants_stdin(paths: tuple[Path, ...]) -> bool:
    """True for the single path ``-``; ``-`` among other paths is a usage error."""
    if Path("-") not in paths:
        return False
    if len(paths) > 1:
        raise AutosigError("'-' (stdin) must be the only PATH")
    return True


def _check_stdin(
    config: Config,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    cache: ResultCache | None,
) -> CheckResult:
    """Check the source on stdin as one file named ``-``."""
    data = sys.stdin.buffer.read()
    result = CheckResult(files_seen=1)
    if not mentions_function(data):
        return result
    file_select, file_ignore = stdin_rules(config, select, ignore)
    (outcome,) = check_tasks([FileTask("-", data, file_select, file_ignore)], 1, cache=cache)
    result.files_parsed = 1
    result.findings.extend(outcome.findings)
    if outcome.error is not None:
        result.errors.append(outcome.error)
    return result


def _tell(notice: SizeNotice, quiet: bool) -> None:
    """A skipped file is always reported (it was not checked); a slow one unless --quiet."""
    if notice.skipped or not quiet:
        click.echo(str(notice), err=True)
