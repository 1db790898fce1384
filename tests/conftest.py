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


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test gets a result cache of its own (``check`` keeps one by default), so no
    test reads another's results and none writes into the working tree."""
    monkeypatch.setenv("AUTOSIG_CACHE_DIR", str(tmp_path_factory.mktemp("autosig_cache")))
