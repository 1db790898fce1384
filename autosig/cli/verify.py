"""``autosig verify [OPTIONS] -- CMD...``: prove the rewrite, original vs rewritten.

Also ``autosig verify --replay``: no workload, recorded inputs replayed through the
original and rewritten module-level functions.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from autosig.cli.common_options import (
    format_option,
    output_file_option,
    parse_codes,
    quiet_option,
)
from autosig.cli.interrupt import interruptible
from autosig.errors import EXIT_ERROR, AutosigError
from autosig.report.findings import format_error

DEFAULT_PROFILE = Path(".autosig/profile.json")


@click.command(
    "verify",
    context_settings={
        "help_option_names": ["-h", "--help"],
        "ignore_unknown_options": True,
        "allow_interspersed_args": False,
    },
    epilog="""\b
Examples:
  autosig verify -- python train.py --steps 50
  autosig verify --no-xla --device cpu -- python -m mypkg.train
  autosig verify --rtol 1e-4 --format json -o verify.json -- pytest tests/test_model.py
  autosig verify --replay                  # no workload: replay recorded inputs
  autosig verify --ignore AS302 -- python train.py   # only outputs that differ fail

\b
Findings: AS301 not equivalent, AS302 could not run ('autosig rule AS301').
--select/--ignore, the project config's ignore and per-path-ignores (the config
found from the profile's root, as for the rewrite) and '# autosig: ignore[AS301]'
on a function's def line drop them: the report still shows the verdict, marked
as ignored. The config's select applies only if it names an AS3 code. They
change the report, not the rewrite under test.

\b
Verdicts: equivalent (every call's effects equal); not equivalent (the first
differing call and what differed); could not run; not compared (fails: nothing
unverified passes); different by design (random streams, AS101 prints: structure,
dtypes, shapes and exceptions still compared); not applicable (XLA cannot compile
the function: it is still compared without XLA).

\b
Exit codes: 0 every rewritten function is equivalent, different by design or not
applicable under XLA (or its finding is ignored), 1 any is not equivalent, could
not run or was not compared, 2 an error (bad profile, the original workload does
not run, --device gpu without a GPU, ...).
""",
)
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_PROFILE,
    show_default=True,
    help="Profile the rewrite is inferred from (as for 'autosig fix --profile').",
)
@click.option(
    "--xla/--no-xla",
    default=True,
    show_default=True,
    help="Also run original and rewritten with jit_compile=True forced on the changed "
    "files' functions, and count XLA compiles.",
)
@click.option(
    "--xla-baseline/--no-xla-baseline",
    default=False,
    show_default=True,
    help="With --xla, run the original under XLA too (fair XLA comparison and compile "
    "counts before); without it the XLA run is compared with the original graph run.",
)
@click.option(
    "--device",
    type=click.Choice(["auto", "cpu", "gpu"], case_sensitive=False),
    default="auto",
    show_default=True,
    help="auto: the GPU when TensorFlow sees one, else the CPU.",
)
@click.option(
    "--rtol",
    type=click.FloatRange(min=0),
    default=None,
    help="Relative tolerance for float outputs [default: per dtype: float16 1e-3, "
    "bfloat16 1e-2, float32 1e-5, float64 1e-9; 10x under XLA].",
)
@click.option(
    "--atol",
    type=click.FloatRange(min=0),
    default=None,
    help="Absolute tolerance for float outputs [default: per dtype: float16 1e-3, "
    "bfloat16 1e-2, float32 1e-6, float64 1e-12; 10x under XLA].",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="Include unsafe fixes in the rewrite (RNG changes are reported as 'different by design').",
)
@click.option(
    "--calls",
    "sample_calls",
    type=click.IntRange(min=1),
    default=64,
    show_default=True,
    help="Keep the full inputs and outputs of the first N calls of every function (for "
    "detailed mismatches). Every call is compared anyway, by a digest of its effects.",
)
@click.option(
    "--show-output",
    is_flag=True,
    help="Show the workload's own output (default: kept in a log; its tail explains failures).",
)
@click.option(
    "--keep",
    "keep_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Keep every run's profile, samples, status and log in DIR.",
)
@click.option(
    "--reuse/--no-reuse",
    default=True,
    show_default=True,
    help="Reuse the stored run of the original source (in .autosig/verify-runs) when the "
    "command, the profiled files, the files the command names and the settings are "
    "unchanged. --no-reuse runs it again (and stores that run): use it when the "
    "workload's data or other code changed.",
)
@click.option(
    "--before",
    "before",
    default=None,
    metavar="REV|PATCH",
    help="Verify a fix that is already written: the files as they are against their "
    "version at git revision REV (HEAD: the last commit) or before PATCH (the 'fix "
    "--patch-out' patch that was applied). Without it, when the rewrite changes nothing "
    "and git's HEAD differs from the profiled files, HEAD is used (and said so).",
)
@click.option(
    "--replay",
    is_flag=True,
    help="No workload: replay the profile's recorded inputs through the original and the "
    "rewritten module-level functions.",
)
@click.option(
    "--select",
    multiple=True,
    callback=parse_codes,
    metavar="CODES",
    help="Report only these verify codes, comma-separated (AS301, AS302, or AS3); "
    "replaces the config's 'select'.",
)
@click.option(
    "--ignore",
    multiple=True,
    callback=parse_codes,
    metavar="CODES",
    help="Do not report these codes (e.g. AS302) and do not fail on them; added to the "
    "config's 'ignore'.",
)
@format_option
@quiet_option
@output_file_option
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def command(
    profile_path: Path,
    xla: bool,
    xla_baseline: bool,
    device: str,
    rtol: float | None,
    atol: float | None,
    unsafe_fixes: bool,
    sample_calls: int,
    show_output: bool,
    keep_dir: Path | None,
    reuse: bool,
    before: str | None,
    replay: bool,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    output_format: str,
    quiet: bool,
    output_file: Path | None,
    cmd: tuple[str, ...],
) -> None:
    """Run CMD on the original and on the rewritten source and compare them.

    The rewrite is computed in memory from the profile and the current source,
    exactly as 'autosig fix --profile' would write it, and served to CMD's Python
    processes by an import hook: nothing is written. Every tf.function of the
    changed files is compared on every call: returned structure and values (Python
    types, dtypes and shapes exact, integers and strings exact, floats within
    tolerances), the tf.Variables it reads or writes, its tf.print output, whether it
    raised (and what), and how many calls completed; in graph mode and with --xla
    under jit_compile=True per function, on the GPU when there is one. Reported per
    function: equivalent / not equivalent (first differing call and what) / could
    not run / not compared (why) / different by design / not applicable (XLA),
    traces, XLA compiles, trace time and median step time before -> after. Without
    CMD the profile's own recorded command is run.
    """
    # verify's modules import numpy: imported as each step runs, so 'verify --help' and
    # a bad option answer at once
    from autosig.verify.runner import VerifySettings

    settings = VerifySettings(
        xla=xla,
        xla_baseline=xla_baseline,
        device=device.lower(),
        rtol=rtol,
        atol=atol,
        sample_calls=sample_calls,
        show_output=show_output,
        keep_dir=keep_dir,
        reuse=reuse,
    )
    args = list(cmd)
    if args and args[0] == "--":
        args = args[1:]
    output = _Output(output_format, quiet, output_file, select, ignore)
    with interruptible("stopped the workload; the interrupted run is not kept for reuse"):
        try:
            from autosig.verify.selection import check_select

            check_select(select)
            if replay:
                if args:
                    raise AutosigError("--replay runs no command; drop the command after '--'")
                if before is not None:
                    raise AutosigError("--replay compares the rewrite in memory; drop --before")
                code = _replay(profile_path, settings, unsafe_fixes, output)
            else:
                code = _verify(profile_path, args, settings, unsafe_fixes, output, before)
        except AutosigError as exc:
            click.echo(format_error(exc), err=True)
            sys.exit(EXIT_ERROR)
    sys.exit(code)


@dataclass(frozen=True)
class _Output:
    """How the report is filtered and written: the options that do not change the runs."""

    output_format: str
    quiet: bool
    output_file: Path | None
    select: tuple[str, ...] | None
    ignore: tuple[str, ...] | None


def _emit(text: str, output_file: Path | None) -> None:
    if output_file is None:
        click.echo(text, nl=False)
        return
    try:
        output_file.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise AutosigError(
            f"cannot write report: {exc.strerror or exc}", str(output_file)
        ) from None


def _verify(
    profile_path: Path,
    cmd: list[str],
    settings: object,
    unsafe_fixes: bool,
    output: _Output,
    before: str | None = None,
) -> int:
    from autosig.verify.runner import verify_candidate

    profile, root = _load(profile_path, settings)
    here = Path.cwd()
    if not cmd:
        if not profile.command:
            raise AutosigError(
                "no command given and the profile records none; "
                "usage: autosig verify -- python train.py",
                str(profile_path),
            )
        cmd = list(profile.command)
        if not output.quiet:
            click.echo(
                f"autosig: verifying with the profiled command, in {root}: {' '.join(cmd)}",
                err=True,
            )
        os.chdir(root)
    candidate, selection = _candidate(profile, root, unsafe_fixes, output)
    notes: list[str] = []
    if before is None:
        from autosig.verify.before import find_earlier

        before = find_earlier(root, candidate)
        if before is not None:
            notes.append(
                "the rewrite is already written (it changes nothing now) and the profiled "
                "files differ from git's HEAD: verifying them against HEAD (--before HEAD)"
            )
    if before is not None:
        from autosig.verify.before import written_candidate

        candidate, said = written_candidate(
            profile, root, before, unsafe_fixes=unsafe_fixes, patch_root=here
        )
        notes.extend(said)
        selection = _selection(candidate, output)
    report, _ = verify_candidate(cmd, candidate, settings)
    report.notes[:0] = notes
    if not candidate.texts:
        report.notes.append(
            "if autosig fix already wrote the rewrite, verify it against the version before: "
            "--before HEAD (git) or --before fixes.patch (the patch that was applied)"
        )
    return _report(report, selection, output)


def _replay(
    profile_path: Path,
    settings: object,
    unsafe_fixes: bool,
    output: _Output,
) -> int:
    from autosig.verify.replay import replay_candidate

    profile, root = _load(profile_path, settings)
    candidate, selection = _candidate(profile, root, unsafe_fixes, output)
    report = replay_candidate(profile, profile_path, candidate, settings)
    return _report(report, selection, output)


def _load(profile_path: Path, settings: object) -> tuple[Any, Path]:
    """The profile and its project root (the verify and replay paths start alike)."""
    from autosig.profile.format import load_profile, project_root_of
    from autosig.verify.runner import VerifySettings

    assert isinstance(settings, VerifySettings)
    try:
        profile = load_profile(profile_path)
    except AutosigError as exc:
        from autosig.profile.locate import missing_profile_hint

        raise AutosigError(exc.message + missing_profile_hint(profile_path), exc.path) from None
    return profile, project_root_of(profile, profile_path)


def _candidate(profile: Any, root: Path, unsafe_fixes: bool, output: _Output) -> tuple[Any, Any]:
    """The rewrite to verify (in memory) and which of its findings count."""
    from autosig.verify.candidate import build_candidate

    candidate = build_candidate(profile, root, unsafe_fixes=unsafe_fixes)
    return candidate, _selection(candidate, output)


def _selection(candidate: Any, output: _Output) -> Any:
    """Which findings count, checked before any workload runs (a bad --select fails fast)."""
    from autosig.verify.selection import verify_selection

    return verify_selection(candidate.root, candidate.originals, output.select, output.ignore)


def _report(report: Any, selection: Any, output: _Output) -> int:
    """Print (or write) the report and the summary line; the exit code follows it."""
    from autosig.report.verdicts import exit_code, render, summary_line

    _emit(render(report, output.output_format, selection), output.output_file)
    if not output.quiet:
        click.echo(summary_line(report, selection), err=True)
    return exit_code(report, selection)
