"""``autosig fix PATH...``: write static fixes and, with a profile, signatures.

Without ``--profile`` this is a pure source tool (no TensorFlow, no user code). With
one, inference plans each profiled function from its recorded calls and the current
source; a function changed since profiling is refused on its own and the rest is
still fixed. Only files reached from the PATH arguments are ever written, each
atomically, and a file that fails to read or parse is reported and left as it was.

What one run resolves once (the profile, its root, the inference options, the plan)
and fixing in worker processes is ``rewrite.session.FixSession``; this module reads the
options, collects the files, drives the session and the --verify gate, writes and
prints (the stages themselves live in rewrite/ and verify/).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from autosig.cli.common_options import (
    common_options,
    ignore_option,
    max_file_size_option,
    select_option,
)
from autosig.cli.interrupt import interruptible
from autosig.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, AutosigError
from autosig.infer.plan import Plan
from autosig.report.findings import finding_json, format_error, render_findings, skipped_phrase
from autosig.rewrite.batch import FixTask, fix_task, plan_for
from autosig.rewrite.call_site_report import mark_unhelped, outside_lines
from autosig.rewrite.patch import display_path, unified_diff, write_patch
from autosig.rewrite.session import FixFile, FixSession
from autosig.rewrite.summary import file_summary, patch_header, problems_left, total_summary
from autosig.rules.checker import require_runnable_rules
from autosig.rules.registry import select_rules
from autosig.source.collect import CollectedFile, collect
from autosig.source.config import RELAX_CHOICES, Config, load_config
from autosig.source.files import (
    SizeNotice,
    SourceFile,
    decode_source,
    read_source,
    write_source,
)
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
    help="Shape policy for inferred signatures: auto frees a dimension seen constant only "
    "where no static read of it is found (the batch dimension, methods' arguments, short "
    "profiles) and keeps the rest; none keeps dimensions seen constant, batch frees the first "
    "one, all frees every one [default: config 'relax', else auto].",
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
        config = load_config(paths, config_file)
        if verify and profile_path is None:
            raise AutosigError("--verify needs --profile (it replays the profiled command)")
        require_runnable_rules(
            select, ignore, config, command="fix", profile=profile_path is not None
        )
    except AutosigError as exc:
        _fail(exc)
    unsafe = config.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
    if Path("-") in paths:
        _fix_stdin(
            paths, profile_path, patch_out, show_diff, verify, select, ignore, config, unsafe
        )
    errors: list[AutosigError] = []
    limit = config.max_file_size if max_file_size is None else max_file_size
    others: list[FixFile] = []  # files without a tf.function: call sites of a profile's plan?
    files, seen, skipped = _collect(
        paths,
        config,
        select,
        ignore,
        exclude,
        errors,
        limit,
        quiet,
        others if profile_path is not None else None,
    )

    session = FixSession(config, unsafe, relax, warn=lambda line: click.echo(line, err=True))
    if profile_path is not None:
        try:
            files.extend(
                session.plan_profile(
                    profile_path,
                    files,
                    select,
                    ignore,
                    try_uncertain=verify and unsafe,  # an unsafe fix: evidence, not proof
                    others=others,
                )
            )
        except AutosigError as exc:
            _fail(exc)
    plan = session.plan

    if seen == 0 and not errors and not quiet:  # as check says it
        click.echo("warning: no Python files found under the given paths", err=True)
    results = session.fix(files, jobs if jobs is not None else config.jobs, progress=not quiet)
    by_file: list[tuple[FixFile, FixResult]] = []
    for file, outcome in zip(files, results, strict=True):
        if isinstance(outcome, AutosigError):
            errors.append(outcome)
        else:
            by_file.append((file, outcome))

    verification: tuple[int, int, int] | None = None
    if verify:
        with interruptible("stopped the workload; nothing was written"):
            try:
                verification = _gate(session, by_file, errors)
            except AutosigError as exc:
                _fail(exc)

    dry_run = show_diff or patch_out is not None
    diff = "".join(
        unified_diff(file.source.text, result.new_text, file.display)
        for file, result in by_file
        if result.changed
    )
    if show_diff and diff and output_format != "json":
        click.echo(diff, nl=False)
    patch_written = False
    if patch_out is not None:
        try:
            header = patch_header([result for _, result in by_file]) if diff else ""
            write_patch(patch_out, header + diff)
            patch_written = True
        except AutosigError as exc:
            errors.append(exc)
    if not dry_run:
        by_file = _write(by_file, errors)

    results_only = [result for _, result in by_file]
    mark_unhelped(plan, {file.profile_rel: result for file, result in by_file})
    errors.extend(_stale_errors(results_only, profile_path))
    _place_report_lines(by_file, dry_run)
    remaining = [finding for _, result in by_file for finding in result.findings]
    if show_diff and output_format == "json":
        click.echo(_diff_json(diff, remaining, errors), nl=False)
    elif show_diff:
        # stdout holds the diff (it must stay a patch): the report goes to stderr
        report = render_findings(remaining, [], output_format, skipped)
        if report and output_format != "text":
            click.echo(report, nl=False, err=True)
    else:
        report = render_findings(remaining, [], output_format, skipped)
        if report:
            click.echo(report, nl=False)
    for error in sorted(errors, key=lambda e: (e.path or "", e.message)):
        click.echo(format_error(error), err=True)
    if not quiet:
        for _, result in by_file:
            for line in file_summary(result, written=not dry_run, static=show_diff):
                click.echo(line, err=True)
        for line in session.library_notes():
            click.echo(line, err=True)
        for line in outside_lines(plan, (file.profile_rel for file in files)):
            click.echo(line, err=True)
        if patch_written and patch_out is not None:
            what = "the diff" if diff else "an empty patch (nothing to change)"
            click.echo(f"Wrote {what} to {patch_out}.", err=True)
        summary = total_summary(
            results_only,
            written=not dry_run,
            errors=len(errors),
            files_seen=seen - len(skipped),
            skipped=skipped_phrase(len(skipped)) if skipped else "",
            verification=verification,
        )
        click.echo(summary, err=True)
    if errors:
        sys.exit(EXIT_ERROR)
    withheld = verification is not None and any(verification[1:])
    if show_diff:  # a change withheld by --verify is a problem to look at, as is a diff
        sys.exit(EXIT_FINDINGS if diff or withheld else EXIT_OK)
    if patch_out is not None:
        sys.exit(EXIT_OK)  # the patch is written: 'fix --patch-out P && autosig apply P'
    sys.exit(EXIT_FINDINGS if any(problems_left(result) for result in results_only) else EXIT_OK)


def _write(
    by_file: list[tuple[FixFile, FixResult]], errors: list[AutosigError]
) -> list[tuple[FixFile, FixResult]]:
    """Write every changed file (atomically); the files written or unchanged."""
    written: list[tuple[FixFile, FixResult]] = []
    for file, result in by_file:
        if not result.changed:
            written.append((file, result))
            continue
        try:
            write_source(file.source, result.new_text)
            written.append((file, result))
        except AutosigError as exc:
            errors.append(exc)
    return written


def _place_report_lines(by_file: list[tuple[FixFile, FixResult]], dry_run: bool) -> None:
    """Report lines are lines of the files as they now are: on disk for a dry run,
    as written otherwise."""
    for file, result in by_file:
        if dry_run:
            result.findings = _on_disk(result.findings, file.source.text, result)
            result.left = _left_on_disk(result.left, file.source.text, result)
        else:
            result.findings = _in_written(result.findings, file.source.text, result)
            result.left = _left_in_written(result.left, file.source.text, result)


def _from_profile(finding: Finding) -> bool:
    """A profile finding (AS2xx) is placed at the profiled function's line in the file as
    read; a static finding at its line in the text the rules ran on, the rewrite."""
    return finding.code.startswith("AS2")


def _on_disk(findings: Sequence[Finding], old_text: str, result: FixResult) -> list[Finding]:
    """Findings of a dry run (or of a rewrite not written), with lines in the file on
    disk: static findings mapped back from the rewrite, profile findings already there."""
    if not result.changed or not findings:
        return list(findings)
    to_old = line_map(result.new_text, old_text)
    return [f if _from_profile(f) else replace(f, line=to_old(f.line)) for f in findings]


def _in_written(findings: Sequence[Finding], old_text: str, result: FixResult) -> list[Finding]:
    """Findings of a written file, with lines in the file as written: profile findings
    mapped forward from the file as read."""
    if not result.changed or not findings:
        return list(findings)
    to_new = line_map(old_text, result.new_text)
    return [replace(f, line=to_new(f.line)) if _from_profile(f) else f for f in findings]


def _left_on_disk(left: list[str], old_text: str, result: FixResult) -> list[str]:
    """The engine's "line N: CODE ..." items of a dry run, with lines of the file on disk."""
    import re

    if not result.changed:
        return left
    to_old = line_map(result.new_text, old_text)
    return [
        re.sub(r"^line (\d+):", lambda m: f"line {to_old(int(m.group(1)))}:", item) for item in left
    ]


def _left_in_written(left: list[str], old_text: str, result: FixResult) -> list[str]:
    """The engine's "name (line N): ..." items (lines of the file as read, where the plan
    placed the function), with lines of the file as written."""
    import re

    if not result.changed:
        return left
    to_new = line_map(old_text, result.new_text)
    return [
        re.sub(
            r"^(\S+) \(line (\d+)\):",
            lambda m: f"{m.group(1)} (line {to_new(int(m.group(2)))}):",
            item,
        )
        for item in left
    ]


def line_map(new: str, old: str) -> Callable[[int], int]:
    """Map a 1-based line of ``new`` to the line of ``old`` it came from.

    Unchanged lines map exactly; a line inside a rewritten block maps to the same
    offset into the block it replaced (its last line when the new block is longer).
    """
    import difflib

    blocks = difflib.SequenceMatcher(
        None, new.splitlines(), old.splitlines(), autojunk=False
    ).get_opcodes()

    def to_old(line: int) -> int:
        index = line - 1
        for _tag, i1, i2, j1, j2 in blocks:
            if i1 <= index < i2 or (i1 == i2 == index):
                if j2 <= j1:
                    return j1 + 1 if j1 > 0 else 1
                return min(j1 + (index - i1), j2 - 1) + 1
        return line

    return to_old


def _diff_json(diff: str, findings: Sequence[Finding], errors: Sequence[AutosigError]) -> str:
    """``fix --diff --format json``: one object holding the diff and the report."""
    import json

    data = {
        "diff": diff,
        "findings": [finding_json(f) for f in findings],
        "errors": [{"path": e.path, "message": e.message} for e in errors],
    }
    return json.dumps(data, indent=2) + "\n"


def _stale_errors(results: Sequence[FixResult], profile_path: Path | None) -> list[AutosigError]:
    """One error per function changed since profiling (the README's exit 2), said once.

    The engine's own "not fixed: changed since ..." line is dropped from the file's
    summary so the function is named once, as an error.
    """
    out: list[AutosigError] = []
    for result in results:
        for qualname in dict.fromkeys(result.stale):
            out.append(
                AutosigError(
                    f"{qualname} changed since {profile_path} was recorded: not fixed from "
                    "the profile (re-run autosig profile)",
                    result.path,
                )
            )
            result.left = [
                item
                for item in result.left
                if not (item.startswith(f"{qualname} (line ") and "since it was profiled" in item)
            ]
    return out


def _fix_stdin(
    paths: tuple[Path, ...],
    profile_path: Path | None,
    patch_out: Path | None,
    show_diff: bool,
    verify: bool,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    config: Config,
    unsafe: bool,
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
        text, encoding, bom = decode_source(data, "-")
    except AutosigError as exc:
        _fail(exc)
    source = SourceFile(Path("-"), text, encoding, bom)
    file_ignore = tuple(config.ignore) + tuple(c for c in ignore or () if c not in config.ignore)
    outcome = fix_task(
        FixTask(
            display="-",
            text=text,
            profile_rel="-",
            select=tuple(select) if select is not None else config.select,
            ignore=file_ignore,
            unsafe_fixes=unsafe,
            plan=None,
        )
    )
    if isinstance(outcome, AutosigError):
        if not show_diff:
            sys.stdout.buffer.write(data)  # an editor must never lose the buffer
            sys.stdout.buffer.flush()
        _fail(outcome)
    if show_diff:
        diff = unified_diff(text, outcome.new_text, "-") if outcome.changed else ""
        click.echo(diff, nl=False)
    else:
        sys.stdout.buffer.write(source.encode(outcome.new_text))
        sys.stdout.buffer.flush()
    findings = outcome.findings if not show_diff else _on_disk(outcome.findings, text, outcome)
    report = render_findings(findings, [], "text")
    if report:
        click.echo(report, nl=False, err=True)
    if show_diff:
        sys.exit(EXIT_FINDINGS if outcome.changed else EXIT_OK)
    sys.exit(EXIT_FINDINGS if problems_left(outcome) else EXIT_OK)


def _fail(exc: AutosigError) -> None:
    click.echo(format_error(exc), err=True)
    sys.exit(EXIT_ERROR)


# -- files -----------------------------------------------------------------------------


def _collect(
    paths: Sequence[Path],
    config: Config,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    exclude: tuple[str, ...],
    errors: list[AutosigError],
    max_file_size: int,
    quiet: bool,
    others: list[FixFile] | None = None,
) -> tuple[list[FixFile], int, list[SizeNotice]]:
    """Every Python file under ``paths`` that may hold a tf.function, read (the collector
    ``check`` uses too: ``source.collect``); how many Python files there were in all; and
    those skipped.

    Files over ``max_file_size`` (0: no limit) are left out with a warning on stderr,
    and large ones get a note there (unless ``quiet``) before the slow work starts.
    The files the text prefilter leaves out go to ``others``: a profile's call-site
    plan may still rewrite calls in them.
    """

    def tell(notice: SizeNotice) -> None:
        if notice.skipped or not quiet:
            click.echo(str(notice), err=True)

    found = collect(
        paths,
        config,
        select=select,
        ignore=ignore,
        exclude=exclude,
        max_file_size=max_file_size,
        on_notice=tell,
        keep_others=others is not None,
        name=display_path,
    )
    errors.extend(found.errors)
    files = _read(found.files, errors)
    if others is not None:
        others.extend(_read(found.others, errors))
    return files, found.seen, found.skipped


def _read(collected: Sequence[CollectedFile], errors: list[AutosigError]) -> list[FixFile]:
    """The collected files as sources to fix (decoding errors go to ``errors``)."""
    files: list[FixFile] = []
    for item in collected:
        try:
            source = read_source(item.path, item.data)
        except AutosigError as exc:
            errors.append(exc)
            continue
        files.append(FixFile(source, display_path(item.path), "", item.select, item.ignore))
    return files


# -- verification ----------------------------------------------------------------------


def _gate(
    session: FixSession, by_file: list[tuple[FixFile, FixResult]], errors: list[AutosigError]
) -> tuple[int, int, int]:
    """Replace each result by what verified (``autosig.verify.gate``); withhold the rest.

    Returns (functions verified, functions or files withheld, functions not run). A
    withheld file's report lines are mapped back to the file on disk (they were lines
    of the rewrite that is not written).
    """
    try:
        from autosig.verify.gate import gate_fixes
    except ImportError:
        raise AutosigError(
            "verification is not available in this installation (autosig.verify.gate is "
            "missing); run without --verify"
        ) from None

    files = {file.profile_rel: (file, result) for file, result in by_file}
    rules = {rel: select_rules(file.select, file.ignore) for rel, (file, _) in files.items()}
    unsafe = session.unsafe
    gated = gate_fixes(
        session.profile,
        session.root,
        unsafe_fixes=unsafe,
        infer_options=session.options,  # try_uncertain: --verify and --unsafe-fixes
        rules_for=lambda rel: rules.get(rel, []),
        plan=session.plan if session.plan is not None else Plan(),  # no profile codes: none
        sources={rel: file.source.text for rel, (file, _) in files.items()},
    )
    report = gated.report
    for verdict in report.functions if report is not None else []:
        click.echo(
            f"verify: {verdict.path}:{verdict.line}: {verdict.qualname}: {verdict.status}", err=True
        )
    for line in gated.messages():
        click.echo(f"verify: {line}", err=True)
    errors.extend(report.errors if report is not None else [])
    withheld_sites = gated.withheld_sites()
    for rel, (file, result) in files.items():
        # until reset below, result.new_text is the unverified rewrite: the findings'
        # lines are its lines (``_on_disk`` maps them back to the file on disk)
        not_run = [
            f"not written: {qualname or 'changes outside any tf.function'} "
            f"[{', '.join(changes)}]: the workload never called it, so nothing verified "
            "the change"
            for (path, qualname), changes in sorted(gated.not_run.items())
            if path == rel
        ]
        if rel in gated.withheld:
            result.withheld.append(f"verification failed: {gated.withheld[rel]}")
            result.left.append(f"not written: verification failed: {gated.withheld[rel]}")
            if result.changed:
                result.findings = _on_disk(result.findings, file.source.text, result)
                result.left = _left_on_disk(result.left, file.source.text, result)
            result.new_text, result.changed, result.applied = file.source.text, False, []
        elif rel in gated.texts:
            result.new_text = gated.texts[rel]
            result.changed = result.new_text != file.source.text
            if gated.candidate is not None and rel in gated.candidate.applied:
                result.applied = list(gated.candidate.applied[rel])
        elif result.changed:
            if not not_run:
                result.left.append("not written: the verified rewrite leaves this file unchanged")
            result.findings = _on_disk(result.findings, file.source.text, result)
            result.left = _left_on_disk(result.left, file.source.text, result)
            result.new_text, result.changed, result.applied = file.source.text, False, []
        result.left.extend(not_run)
        if gated.candidate is not None and rel not in gated.withheld:
            untouched = frozenset(q or None for p, q in withheld_sites if p == rel)
            _report_kept(file, result, gated.candidate.plan, rules[rel], unsafe, untouched)  # type: ignore[arg-type]
    return gated.counts()


def _report_kept(
    file: FixFile,
    result: FixResult,
    plan: Plan,
    rules: Sequence[Any],
    unsafe: bool,
    untouched: frozenset[str],
) -> None:
    """Findings and notes for the rewrite verification kept, from the plan it ended with.

    The first pass reported on the plan before verification (which may have tried
    tensors or signatures that fell back); the summary and exit code must speak of
    what is written. Only when the kept plan gives exactly the kept text.
    """
    # libcst: only --verify needs it here
    from autosig.rewrite.engine import fix_text

    try:
        kept = fix_text(
            file.source.text,
            file.display,
            plan=plan_for(plan, file.profile_rel),
            rules=rules,
            unsafe_fixes=unsafe,
            profile_path_of=file.profile_rel,
            untouched=untouched,
        )
    except AutosigError:
        return
    if kept.new_text != result.new_text:
        return
    notes = [item for item in result.left if item.startswith("not written")]
    result.findings, result.left = kept.findings, kept.left + notes
    result.applied, result.stale = kept.applied, kept.stale
