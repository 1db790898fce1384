"""The command group itself: help, version, `python -m autosig`, unknown commands."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from autosig import __version__
from autosig.cli import COMMANDS, cli


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output
    assert "Exit codes" in result.output


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_unknown_command_is_usage_error() -> None:
    result = CliRunner().invoke(cli, ["frobnicate"])
    assert result.exit_code == 2
    assert "No such command" in result.output


def test_python_dash_m_works_like_the_script() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "autosig", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and __version__ in proc.stdout
