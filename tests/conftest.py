"""Shared pytest options. Kept minimal and TensorFlow-free."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden/*/expected/ from the current autosig output (review the git diff)",
    )
