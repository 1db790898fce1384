"""``autosig profile [-o FILE] -- CMD...`` and ``autosig profile merge A B ... -o C``.

A click group whose default subcommand is ``run``: anything that does not start with
a known subcommand name (``merge``, ``run``) is the command to record, so
``autosig profile -- merge.py`` still runs ``merge.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from autosig.cli.interrupt import interruptible
from autosig.errors import EXIT_ERROR, AutosigError
from autosig.profile.format import check_writable
from autosig.profile.launch import record_command
from autosig.profile.merge import merge_files
from autosig.profile.probe.scheduler import DEFAULT_BUDGET_S

DEFAULT_OUTPUT = Path(".autosig/profile.json")
SUBCOMMANDS = ("run", "merge")


class DefaultToRun(click.Group):
    """``autosig profile ARGS`` means ``autosig profile run ARGS`` unless ARGS names a subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in ("-h", "--help"):
            return super().parse_args(ctx, args)
        if not args or args[0] not in SUBCOMMANDS:
            args = ["run", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(
            ctx.command_path,
            "[-o FILE] [--capture-outputs] [--probe-budget SECONDS | --no-probe] -- CMD...",
        )
        formatter.write_usage(ctx.command_path, "merge PROFILE... -o FILE", prefix="   or: ")


@click.group(
    "profile",
    cls=DefaultToRun,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  autosig profile -- python train.py --epochs 1
  autosig profile -o runs/p.json -- python -m mypkg.train
  autosig profile -- pytest tests/
  autosig profile merge worker0.json worker1.json -o all.json
  autosig explain                       # read the default .autosig/profile.json
""",
)
def command() -> None:
    """Run a command and record every tf.function call.

    'autosig profile [-o FILE] -- CMD...' is short for 'autosig profile run ...':
    CMD runs with the recorder active in its Python processes (and their Python
    children); every tf.function call is recorded: argument shapes and dtypes, Python
    values, new objects, trace counts and tracing time as TensorFlow reports them, and
    a few real input samples (FILE with .npz). CMD's output and exit code pass through.
    """


@command.command(
    "run",
    context_settings={
        "help_option_names": ["-h", "--help"],
        "ignore_unknown_options": True,
        "allow_interspersed_args": False,
    },
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=DEFAULT_OUTPUT,
    show_default=True,
    help="Profile to write (samples go next to it, .npz).",
)
@click.option(
    "--capture-outputs",
    is_flag=True,
    help="Also store the outputs of the first calls of every function (for 'autosig verify').",
)
@click.option(
    "--probe-budget",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="Time for probe traces per recorded process (default: $AUTOSIG_PROBE_BUDGET "
    f"or {DEFAULT_BUDGET_S:g}; 0 = none).",
)
@click.option(
    "--no-probe",
    is_flag=True,
    help="No probe traces (same as --probe-budget 0).",
)
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def run(
    ctx: click.Context,
    output: Path,
    capture_outputs: bool,
    probe_budget: float | None,
    no_probe: bool,
    cmd: tuple[str, ...],
) -> None:
    """Record CMD (python script, python -m module, pytest, any command running Python).

    Exit code: CMD's own (128+N if a signal N killed it, 130 for Ctrl-C); 2 if the
    profile cannot be written (checked before CMD runs) or CMD cannot be started.
    Ctrl-C reaches CMD and its children, which write what they recorded (a partial
    profile); a second Ctrl-C kills them at once.

    A CMD that exits non-zero or is interrupted gives a partial profile (marked so,
    with the exit status inside; explain and fix say it is partial). It never
    replaces an existing FILE: it goes beside it (p.json -> p.partial.json).

    Probe traces: when a tf.function retraces, its original code is traced again
    (never run) in a forked copy of the process, with each dimension relaxed to None
    or set to other sizes and each Python number as a scalar tensor, to see which
    dimensions are free, fixed by the code or read, and which dtype TensorFlow gives
    each number; nothing they do reaches the program. 'autosig explain' shows the
    evidence. They take at most --probe-budget seconds per process.
    """
    if not cmd:  # 'autosig profile -o p.json': the usage the user typed, not 'profile run'
        raise click.UsageError("no command to record after '--'", ctx=ctx.parent)
    budget = 0.0 if no_probe else probe_budget
    # a Ctrl-C while the command runs goes to the command (it writes what it recorded;
    # a second one kills it) and comes back as its exit status; one while autosig itself
    # works (starting, merging, writing) stops autosig: exit 130, no profile written
    with interruptible("stopped before the profile was written"):
        run = record_command(
            list(cmd), output, capture_outputs=capture_outputs, probe_budget=budget
        )
    click.echo(_outcome_line(run), err=True)
    sys.exit(run.code)


def _outcome_line(run: Any) -> str:
    """One line: what was recorded, where it went, and whether it is partial."""
    profile = run.profile
    n = len(profile.functions)
    calls = sum(f.calls for f in profile.functions)
    traces = sum(f.traces for f in profile.functions)
    what = (
        f"{n} tf.function{'s' if n != 1 else ''}, {calls} calls, {traces} traces"
        if n
        else "no tf.function calls"
    )
    if run.partial:
        code = run.code
        how = (
            f"was interrupted (signal {code - 128}, exit status {code})"
            if code > 128
            else f"exited with status {code}"
        )
        kept = f"; {run.kept} kept unchanged" if run.kept is not None else ""
        return f"autosig: the command {how}: partial profile ({what}) -> {run.path}{kept}"
    if n:
        probes = profile.probes
        note = (
            f"; {probes.summary()}"
            if probes is not None and (probes.rounds or not probes.enabled)
            else ""
        )
        return f"autosig: recorded {what}{note} -> {run.path} (next: autosig explain {run.path})"
    return f"autosig: no tf.function was called (does the command use TensorFlow?) -> {run.path}"


@command.command("merge", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("profiles", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Merged profile to write (samples are merged too).",
)
def merge(profiles: tuple[Path, ...], output: Path) -> None:
    """Merge profiles of several runs or workers into one.

    Functions are matched by file, qualified name and line; counts and times add up.
    Refuses (exit 2) profiles of another format version and profiles in which the same
    function has different source code.
    """
    try:
        check_writable(output)
        merged = merge_files(profiles, output)
    except AutosigError as exc:
        click.echo(f"autosig: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(
        f"autosig: merged {len(profiles)} profiles ({len(merged.functions)} functions) -> {output}",
        err=True,
    )
