"""Shared pytest options and fixtures. Kept TensorFlow-free: TensorFlow is imported only
in the processes the ``tf`` tests start."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden/*/expected/ from the current autosig output (review the git diff)",
    )


@pytest.fixture(scope="session")
def tf_forks() -> Iterator[object]:
    """One process per test worker that imported TensorFlow; plain programs run as its
    forks (``fork_runs.ForkServer``), skipping the import each would pay."""
    sys.path.insert(0, str(TESTS))
    from fork_runs import ForkServer, tf_program_env

    server = ForkServer(tf_program_env())
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test gets a result cache of its own (``check`` keeps one by default), so no
    test reads another's results and none writes into the working tree."""
    monkeypatch.setenv("AUTOSIG_CACHE_DIR", str(tmp_path_factory.mktemp("autosig_cache")))
