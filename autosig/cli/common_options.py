"""Click options shared by check, fix, explain and verify, so they read the same everywhere.

Use the single decorators (``format_option``, ``jobs_option``, ...) or the bundle
``common_options`` (format, jobs, quiet, config, exclude). Rule-code options accept
comma-separated lists and may be repeated: ``--select AS101,AS102 --select AS2``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from autosig.errors import AutosigError
from autosig.report.findings import FORMATS
from autosig.source.codes import expand_codes
from autosig.source.config import CODE_PATTERN
from autosig.source.files import parse_size

F = TypeVar("F", bound=Callable[..., Any])


def parse_codes(
    ctx: click.Context | None, param: click.Parameter | None, value: tuple[str, ...]
) -> tuple[str, ...] | None:
    """Click callback: ``("AS101,as102", "AS2")`` -> ``("AS101", "AS102", "AS2")``.

    None when the option was not given, so callers can tell "not given" from "empty".
    """
    if not value:
        return None
    codes: list[str] = []
    for chunk in value:
        for raw in chunk.split(","):
            code = raw.strip().upper()
            if not code:
                continue
            if not CODE_PATTERN.match(code):
                raise click.BadParameter(
                    f"{raw.strip()!r} is not a rule code (like AS101) or a prefix (like AS1)"
                )
            try:
                expand_codes([code])
            except AutosigError as exc:
                raise click.BadParameter(exc.message) from None
            if code not in codes:
                codes.append(code)
    return tuple(codes)


def _positive(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    if value is not None and value < 1:
        raise click.BadParameter(f"{value} is not a positive number of processes")
    return value


def format_option(func: F) -> F:
    return click.option(
        "--format",
        "--output-format",
        "output_format",
        type=click.Choice(FORMATS, case_sensitive=False),
        default="text",
        show_default=True,
        help="Report format: text (path:line:col: CODE message), json, sarif "
        "(GitHub code scanning) or github (workflow annotations).",
    )(func)


def jobs_option(func: F) -> F:
    return click.option(
        "-j",
        "--jobs",
        type=int,
        callback=_positive,
        default=None,
        metavar="N",
        help="Parse files in N worker processes [default: config 'jobs', else one per CPU; "
        "1 runs in this process].",
    )(func)


def quiet_option(func: F) -> F:
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        help="Print only the report: no summary line and no progress bar.",
    )(func)


def config_option(func: F) -> F:
    return click.option(
        "--config",
        "config_file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        metavar="FILE",
        help="Read settings from FILE (a pyproject.toml with [tool.autosig], or an "
        "autosig.toml) instead of the nearest one above the first PATH.",
    )(func)


def exclude_option(func: F) -> F:
    return click.option(
        "--exclude",
        multiple=True,
        metavar="GLOB",
        help="Skip files and directories matching GLOB (repeatable), in addition to the "
        "config's 'exclude' and the defaults (.git, .venv, build, ...).",
    )(func)


def select_option(func: F) -> F:
    return click.option(
        "--select",
        multiple=True,
        callback=parse_codes,
        metavar="CODES",
        help="Only these rule codes or prefixes, comma-separated (e.g. AS101,AS2); "
        "replaces the config's 'select'.",
    )(func)


def ignore_option(func: F) -> F:
    return click.option(
        "--ignore",
        multiple=True,
        callback=parse_codes,
        metavar="CODES",
        help="Skip these rule codes or prefixes, comma-separated; added to the config's 'ignore'.",
    )(func)


def output_file_option(func: F) -> F:
    return click.option(
        "-o",
        "--output-file",
        type=click.Path(dir_okay=False, writable=True, path_type=Path),
        default=None,
        metavar="FILE",
        help="Write the report to FILE instead of stdout (errors and the summary still "
        "go to stderr).",
    )(func)


class SizeParam(click.ParamType):
    """A file size: bytes, or with a unit (``2MB``, ``500kB``, ``4MiB``); 0 = no limit."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return parse_size(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def max_file_size_option(func: F) -> F:
    return click.option(
        "--max-file-size",
        type=SizeParam(),
        default=None,
        metavar="SIZE",
        help="Skip files larger than SIZE (e.g. 2MB, 500kB; 0 = no limit) with a warning "
        "naming them: parse time grows faster than size, and one huge generated file "
        "can take many minutes [default: config 'max-file-size', else 2MB].",
    )(func)


def cache_options(func: F) -> F:
    """``--cache-dir DIR`` and ``--no-cache``: where the result cache lives, or none."""
    func = click.option(
        "--no-cache",
        is_flag=True,
        help="Parse every file: neither read nor write the result cache.",
    )(func)
    return click.option(
        "--cache-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        metavar="DIR",
        help="Keep the result cache in DIR [default: $AUTOSIG_CACHE_DIR, else config "
        "'cache-dir', else .autosig_cache in the project: the config file's folder, else "
        "the current directory].",
    )(func)


def common_options(func: F) -> F:
    """format, jobs, quiet, config and exclude, in the order --help lists them."""
    for decorator in (exclude_option, config_option, quiet_option, jobs_option, format_option):
        func = decorator(func)
    return func
