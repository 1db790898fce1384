"""The ``autosig`` command line: parse options, call the stages, set the exit code.

Subcommands live in ``autosig.cli.<name>`` and are imported only when used, so
``autosig check`` never imports the profiler, the verifier or TensorFlow.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from autosig import __version__
from autosig.errors import EXIT_ERROR, AutosigError

EXIT_INTERRUPTED = 128 + 2
"""Ctrl-C (SIGINT), as a shell reports a command it stopped."""

COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("autosig.cli.check", "Report static findings (AS1xx) in Python files."),
    "fix": ("autosig.cli.fix", "Rewrite tf.functions: signatures and side-effect fixes."),
    "apply": ("autosig.cli.apply", "Apply a reviewed patch, refusing if any hunk is stale."),
    "profile": ("autosig.cli.profile", "Run a command and record every tf.function call."),
    "explain": ("autosig.cli.explain", "Explain from a profile why each function retraced."),
    "verify": ("autosig.cli.verify", "Run original and rewritten code side by side."),
    "rule": ("autosig.cli.rule", "Print a rule's documentation."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        try:
            module = importlib.import_module(entry[0])
        except ModuleNotFoundError as exc:
            if exc.name != entry[0]:
                raise
            return None
        return module.command

    def invoke(self, ctx: click.Context) -> Any:
        """Run the subcommand; a Ctrl-C that no command handles itself (while its module
        loads, or in a command without its own interrupt handling) exits 130 with one
        line, not click's "Aborted!" and 1."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("autosig: interrupted (SIGINT)", err=True)
            sys.exit(EXIT_INTERRUPTED)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="autosig")
def cli() -> None:
    """autosig: find TensorFlow tf.functions that retrace and fix them.

    \b
    Typical workflow:
      autosig check src/                       # static findings, no TensorFlow needed
      autosig profile -- python train.py       # record real calls
      autosig explain                          # why each function retraced
      autosig fix src/ --profile .autosig/profile.json --diff   # review
      autosig fix src/ --profile .autosig/profile.json          # write
      autosig verify -- python train.py        # prove equivalence, traces, time

    Exit codes: 0 nothing found / nothing to change, 1 findings / would change,
    2 error (bad path, unparsable file, corrupt profile, ...).
    """


def main(argv: list[str] | None = None) -> Any:
    """Entry point: user errors become one line on stderr and exit code 2."""
    try:
        return cli.main(args=argv, prog_name="autosig", standalone_mode=True)
    except AutosigError as exc:
        click.echo(f"autosig: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
