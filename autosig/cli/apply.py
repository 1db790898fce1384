"""``autosig apply PATCH``: apply a reviewed (possibly hand-edited) patch, all or nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autosig.errors import EXIT_ERROR, EXIT_OK, AutosigError
from autosig.report.findings import format_error
from autosig.rewrite.patch import apply_patch, read_patch


@click.command(
    "apply",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  autosig fix src/ --profile .autosig/profile.json --patch-out fixes.patch
  $EDITOR fixes.patch                  # review; drop or edit hunks
  autosig apply fixes.patch --recount  # if you added or deleted lines in it
  autosig apply fixes.patch --dry-run  # check that every hunk still applies
  autosig apply fixes.patch

\b
Exit codes: 0 applied (or, with --dry-run, would apply); 2 nothing was changed: the
patch is malformed, a file is missing or read-only, or a hunk no longer matches.
""",
)
@click.argument("patch", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=Path("."),
    show_default=True,
    metavar="DIR",
    help="Directory the patch's paths are relative to (where 'autosig fix' ran).",
)
@click.option("--dry-run", is_flag=True, help="Check every hunk, list the files, write nothing.")
@click.option(
    "--recount",
    is_flag=True,
    help="Recompute each hunk's line counts from its lines (after adding or deleting "
    "lines in the patch by hand), like 'git apply --recount'.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on success.")
def command(patch: Path, root: Path, dry_run: bool, recount: bool, quiet: bool) -> None:
    """Apply PATCH (a unified diff from 'autosig fix --diff' or '--patch-out').

    Every hunk of every file is checked against the current files first; if any no
    longer matches (the code changed since the patch was made), nothing is written and
    the file and hunk are named. A hunk whose lines moved (code added above it) still
    applies if it matches exactly. Files keep their encoding, BOM, line endings,
    permissions and owner; every new file is written beside its original first and
    only then are they all renamed into place. A read-only file is never changed.
    """
    try:
        text = sys.stdin.buffer.read().decode("utf-8") if str(patch) == "-" else read_patch(patch)
        written = apply_patch(text, root, dry_run=dry_run, recount=recount)
    except UnicodeDecodeError as exc:
        error = AutosigError(f"patch is not UTF-8 text: {exc}", _name(patch))
        click.echo(format_error(error), err=True)
        sys.exit(EXIT_ERROR)
    except AutosigError as exc:
        if exc.path is None:  # about the patch as a whole: name it
            exc = AutosigError(exc.message, _name(patch))
        click.echo(format_error(exc), err=True)
        sys.exit(EXIT_ERROR)
    if not quiet:
        verb = "Would patch" if dry_run else "Patched"
        for path in written:
            click.echo(f"{verb} {path}", err=True)
        count = len(written)
        click.echo(f"{verb} {count} file{'s' if count != 1 else ''}.", err=True)
    sys.exit(EXIT_OK)


def _name(patch: Path) -> str:
    return "<stdin>" if str(patch) == "-" else str(patch)
