"""``autosig fix PATH...``: write static fixes and, with a profile, signatures.

Without ``--profile`` this is a pure source tool (no TensorFlow, no user code). With
one, inference plans each profiled function from its recorded calls and the current
source; a function changed since profiling is refused on its own and the rest is
still fixed. Only files reached from the PATH arguments are ever written, each
atomically, and a file that fails to read or parse is reported and left as it was.

One run (collecting the files, the profile's plan, fixing in worker processes, the
--verify gate, writing) is ``rewrite.session.FixSession.run``; this module reads the
options, hands them to the session and prints what it returns (the stages themselves
live in rewrite/ and verify/).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from autosig.cli.common_options import (
    common_options,
    ignore_option,
    max_file_size_option,
    select_option,
)
from autosig.cli.interrupt import interruptible
from autosig.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, AutosigError
from autosig.report.findings import finding_json, format_error, render_findings, skipped_phrase
from autosig.rewrite.call_site_report import outside_lines
from autosig.rewrite.patch import unified_diff
from autosig.rewrite.session import FixFile, FixOutcome, FixRequest, FixSession
from autosig.rewrite.summary import file_summary, problems_left, total_summary
from autosig.source.config import RELAX_CHOICES
from autosig.source.sites import Finding

if TYPE_CHECKING:
    from autosig.rewrite.engine import FixResult


@click.command(
    "fix",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  autosig fix src/                                   # static safe fixes, in place
  autosig fix src/ --diff                            # show them, write nothing
  autosig fix src/ --profile .autosig/profile.json --diff   # + signatures, review
  autosig fix src/ --profile .autosig/profile.json --patch-out fixes.patch
  autosig apply fixes.patch                          # after review
  autosig fix src/ --unsafe-fixes --select AS102,AS103
  autosig fix - < model.py > fixed.py                # stdin to stdout (editors)

\b
Exit codes: 0 everything fixed (with --diff: nothing would change; with
--patch-out: the patch was written, so 'fix --patch-out P && autosig apply P' works);
1 problems left unfixed (with --diff: changes to review, or with --verify a change
withheld; a print that logs tracing, left on purpose, is not a problem); 2 an error
(bad path, a file that does not parse, a read-only file, a bad profile, a function
changed since it was profiled, a patch that cannot be written). Other files are
still fixed. A file skipped as over --max-file-size is a warning (also in sarif and
github output, and counted in the summary), not an error. A --select that leaves no
rule to run (only verify codes, or profile codes without --profile) is an error.

\b
With --diff, stdout is the diff: --format json prints one object {"diff": ...,
"findings": [...], "errors": [...]} instead; github and sarif reports go to stderr.
Lines in reports of --diff and --patch-out are lines of the files on disk.
""",
)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True, path_type=Path))
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="A profile from 'autosig profile': add input_signatures (or reduce_retracing) "
    "inferred from the recorded calls. Without it only static fixes are made.",
)
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print a unified diff of every change on stdout and write nothing.",
)
@click.option(
    "--patch-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Write the diff to FILE (for review, then 'autosig apply FILE') and change no "
    "source file.",
)
@click.option(
    "--unsafe-fixes/--no-unsafe-fixes",
    default=None,
    help="Also apply fixes that change behaviour on purpose (AS102 random streams, AS103 "
    "Python state to tf.Variable) [default: config 'unsafe-fixes', else off].",
)
@click.option(
    "--verify/--no-verify",
    default=False,
    show_default=True,
    help="Run the profiled command on the original and the rewritten code and write only "
    "rewrites whose outputs match (needs --profile); changes to functions the command never "
    "calls are not verified, so they are withheld too ('not run'). With --unsafe-fixes it "
    "also tries as tensors the Python values the analysis cannot decide (evidence, not proof).",
)
@select_option
@ignore_option
@click.option(
    "--relax",
    type=click.Choice(RELAX_CHOICES, case_sensitive=False),
    default=None,
    help="Shape policy for inferred signatures: auto frees a dimension seen constant where "
    "no static read of it is found and keeps the rest (a kept one makes the signature an "
    "unsafe fix); none keeps dimensions seen constant, batch frees the first one, all frees "
    "every one [default: config 'relax', else auto]. batch and all ask for "
    "an input_signature: it is written as a safe fix although it rejects or casts other "
    "dtypes and ranks than the profiled ones; auto and none do not.",
)
@common_options
@max_file_size_option
def command(
    paths: tuple[Path, ...],
    profile_path: Path | None,
    show_diff: bool,
    patch_out: Path | None,
    unsafe_fixes: bool | None,
    verify: bool,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    relax: str | None,
    output_format: str,
    jobs: int | None,
    quiet: bool,
    config_file: Path | None,
    exclude: tuple[str, ...],
    max_file_size: int | None,
) -> None:
    """Fix tf.functions in place: signatures from a profile, and static fixes.

    Applies the safe fixes of the selected rules (AS101 print -> tf.print, AS107
    reduce_retracing, ...) and, with --profile, an input_signature for every function
    the profile shows retracing (reduce_retracing=True where no signature can be
    written, and the summary says why). Everything else in each file stays byte for
    byte. A summary per file goes to stderr; problems left go to stdout in --format.
    Files over max-file-size (default 2 MB) are skipped with a warning; read-only
    files are never written (an error; --diff still shows their changes).

    PATH '-' reads one file's source from stdin and writes it, fixed, to stdout
    (static fixes only; the report goes to stderr), for editor integrations.
    """
    try:
        session = FixSession.open(
            paths,
            config_file,
            select=select,
            ignore=ignore,
            profile=profile_path is not None,
            verify=verify,
            unsafe_fixes=unsafe_fixes,
            relax=relax,
            warn=lambda line: click.echo(line, err=True),
        )
    except AutosigError as exc:
        _fail(exc)
    if Path("-") in paths:
        _fix_stdin(session, paths, profile_path, patch_out, show_diff, verify, select, ignore)
    request = FixRequest(
        paths,
        profile_path,
        select,
        ignore,
        exclude,
        max_file_size,
        jobs,
        quiet,
        verify,
        dry_run=show_diff or patch_out is not None,
        patch_out=patch_out,
    )
    try:
        outcome = session.run(request, gate=_gate if verify else None)
    except AutosigError as exc:
        _fail(exc)
    _print_report(outcome, show_diff, output_format)
    if not quiet:
        _print_summary(session, outcome, request, static=show_diff)
    sys.exit(_exit_code(outcome, show_diff, patch_out))


def _gate(
    session: FixSession, by_file: list[tuple[FixFile, FixResult]], errors: list[AutosigError]
) -> tuple[int, int, int]:
    """``--verify``: the gate the session runs between fixing and writing."""
    from autosig.verify.fix_gate import gate

    with interruptible("stopped the workload; nothing was written"):
        return gate(session, by_file, errors)


def _print_report(outcome: FixOutcome, show_diff: bool, output_format: str) -> None:
    """The diff (--diff), the findings left and the errors."""
    if show_diff and outcome.diff and output_format != "json":
        click.echo(outcome.diff, nl=False)
    if show_diff and output_format == "json":
        click.echo(_diff_json(outcome.diff, outcome.remaining, outcome.errors), nl=False)
    else:
        report = render_findings(outcome.remaining, [], output_format, outcome.skipped)
        if report and not show_diff:
            click.echo(report, nl=False)
        elif report and output_format != "text":
            # stdout holds the diff (it must stay a patch): the report goes to stderr
            click.echo(report, nl=False, err=True)
    for error in sorted(outcome.errors, key=lambda e: (e.path or "", e.message)):
        click.echo(format_error(error), err=True)


def _print_summary(
    session: FixSession, outcome: FixOutcome, request: FixRequest, static: bool
) -> None:
    """Each file's summary, the library notes, call sites outside the files, the patch
    written and the closing line, on stderr."""
    written = not request.dry_run
    lines = [
        line
        for _, result in outcome.by_file
        for line in file_summary(result, written=written, static=static)
    ]
    lines += session.library_notes()
    lines += outside_lines(session.plan, (file.profile_rel for file in outcome.files))
    if outcome.patch_written:
        what = "the diff" if outcome.diff else "an empty patch (nothing to change)"
        lines.append(f"Wrote {what} to {request.patch_out}.")
    skipped = outcome.skipped
    lines.append(
        total_summary(
            outcome.results,
            written=written,
            errors=len(outcome.errors),
            files_seen=outcome.seen - len(skipped),
            skipped=skipped_phrase(len(skipped)) if skipped else "",
            verification=outcome.verification,
        )
    )
    for line in lines:
        click.echo(line, err=True)


def _exit_code(outcome: FixOutcome, show_diff: bool, patch_out: Path | None) -> int:
    """The README's exit codes (see the command's epilog)."""
    if outcome.errors:
        return EXIT_ERROR
    verification = outcome.verification
    withheld = verification is not None and any(verification[1:])
    if show_diff:  # a change withheld by --verify is a problem to look at, as is a diff
        return EXIT_FINDINGS if outcome.diff or withheld else EXIT_OK
    if patch_out is not None:
        return EXIT_OK  # the patch is written: 'fix --patch-out P && autosig apply P'
    return EXIT_FINDINGS if any(problems_left(r) for r in outcome.results) else EXIT_OK


def _diff_json(diff: str, findings: Sequence[Finding], errors: Sequence[AutosigError]) -> str:
    """``fix --diff --format json``: one object holding the diff and the report."""
    import json

    data = {
        "diff": diff,
        "findings": [finding_json(f) for f in findings],
        "errors": [{"path": e.path, "message": e.message} for e in errors],
    }
    return json.dumps(data, indent=2) + "\n"


def _fix_stdin(
    session: FixSession,
    paths: tuple[Path, ...],
    profile_path: Path | None,
    patch_out: Path | None,
    show_diff: bool,
    verify: bool,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
) -> None:
    """``fix -``: the source on stdin, fixed, to stdout (as black and ruff do); exits.

    The report and the summary go to stderr; with --diff only the diff is printed.
    Static fixes only: a profile names files by path.
    """
    if len(paths) > 1:
        _fail(AutosigError("'-' (stdin) must be the only PATH"))
    if profile_path is not None or patch_out is not None or verify:
        _fail(AutosigError("'fix -' makes static fixes only (no --profile, --patch-out, --verify)"))
    data = sys.stdin.buffer.read()
    try:
        fixed = session.fix_text(data, select, ignore, dry_run=show_diff)
    except AutosigError as exc:
        _fail(exc)
    outcome = fixed.result
    if isinstance(outcome, AutosigError):
        if not show_diff:
            sys.stdout.buffer.write(data)  # an editor must never lose the buffer
            sys.stdout.buffer.flush()
        _fail(outcome)
    if show_diff:
        diff = unified_diff(fixed.source.text, outcome.new_text, "-") if outcome.changed else ""
        click.echo(diff, nl=False)
    else:
        sys.stdout.buffer.write(fixed.source.encode(outcome.new_text))
        sys.stdout.buffer.flush()
    report = render_findings(fixed.findings, [], "text")
    if report:
        click.echo(report, nl=False, err=True)
    if show_diff:
        sys.exit(EXIT_FINDINGS if outcome.changed else EXIT_OK)
    sys.exit(EXIT_FINDINGS if problems_left(outcome) else EXIT_OK)


def _fail(exc: AutosigError) -> None:
    click.echo(format_error(exc), err=True)
    sys.exit(EXIT_ERROR)
