"""Shared pytest options and fixtures. Kept TensorFlow-free: TensorFlow is imported only
in the processes the ``tf`` tests start.

Scheduling (with ``-n``, pytest-xdist runs the suite with ``--dist loadgroup`` unless
``--dist`` is given; ``pytest_configure``):
the tests of a module that share a module- or session-scoped fixture of that module (one
TensorFlow script run that many tests read) go to one worker together, so the fixture is
computed once, not once per worker or again after another module's tests interleaved;
and the costly tests are handed out first (``cost_rank``), so the run does not end on
one worker with a golden case or a script run while the other has nothing left.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    """With xdist's default ``--dist load`` (``-n`` without ``--dist``): ``loadgroup``,
    in the order ``pytest_collection_modifyitems`` gives (not xdist's by group size)."""
    args = config.invocation_params.args
    given = any(str(a) in ("-d", "--dist") or str(a).startswith("--dist=") for a in args)
    if getattr(config.option, "dist", "no") == "load" and not given:
        config.option.dist = "loadgroup"
        if not any("loadscope-reorder" in str(a) for a in args):
            config.option.loadscopereorder = False
    if not hasattr(config, "workerinput"):  # once, in the process that starts the run
        compile_bytecode()


def compile_bytecode() -> None:
    """Compile autosig's modules and the tests' helper scripts, as ``scripts/setup.sh``
    does: the suite starts hundreds of Python processes that import autosig (its commands,
    the recorder in every profiled program), and with ``PYTHONDONTWRITEBYTECODE`` set (or
    in a checkout ``setup.sh`` never compiled) each compiled every module again, about
    0.3 s of CPU a process. Quick when nothing changed; never fails the run."""
    import compileall

    with contextlib.suppress(Exception):
        compileall.compile_dir(TESTS.parent / "autosig", quiet=2)
        compileall.compile_dir(TESTS, maxlevels=0, quiet=2)


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


@pytest.fixture
def forked_python(tf_forks: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A ``python`` (argv) for the workload autosig profiles or verifies in this test:
    its program runs as a fork of ``tf_forks`` (``tests/tf_fork_python.py``), with
    autosig's bootstrap started in it from the environment autosig gives it, instead of
    a new process importing TensorFlow (about 3.5 s of CPU each). For tests of what
    autosig finds in a run, not of how a user's command starts (``test_golden``'s
    ``REAL_START`` cases, ``test_profile_runner`` and ``test_readme`` start ``python``)."""
    monkeypatch.setenv("AUTOSIG_TEST_FORK_SOCKET", str(tf_forks.socket))
    return tf_forks.launcher()


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test gets a result cache of its own (``check`` keeps one by default), so no
    test reads another's results and none writes into the working tree."""
    monkeypatch.setenv("AUTOSIG_CACHE_DIR", str(tmp_path_factory.mktemp("autosig_cache")))


SHARED_SCOPES = frozenset({"session", "package", "module", "class"})


def shared_fixture_group(item: pytest.Item) -> str | None:
    """The module's node id when ``item`` uses a fixture that module defines with a wider
    scope than a function (computed once and read by several tests), else None."""
    module = item.nodeid.split("::", 1)[0]
    info: Any = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        if defs and defs[-1].scope in SHARED_SCOPES and defs[-1].baseid == module:
            return module
    return None


def cost_rank(item: pytest.Item) -> int:
    """0: a golden case or another ``tf`` and ``slow`` test (tens of seconds of
    TensorFlow subprocesses); 1: other ``tf`` tests; 2: the rest (milliseconds)."""
    if item.get_closest_marker("tf") is None:
        return 2
    return 0 if item.get_closest_marker("slow") is not None else 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the tests sharing a module's fixture (``xdist_group``, for
    ``--dist loadgroup``) and put the costly tests first, groups before single tests. The
    sort is stable and keeps a group's tests together, so a module fixture is still set
    up once per worker."""
    groups: dict[str, int] = {}
    for item in items:
        group = shared_fixture_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
        if group is not None:
            groups[group] = min(groups.get(group, 2), cost_rank(item))
    order = {id(item): index for index, item in enumerate(items)}

    def key(item: pytest.Item) -> tuple[int, bool, int]:
        # within a rank, the groups first: each is one script run its worker cannot share
        group = shared_fixture_group(item)
        rank = groups[group] if group is not None else cost_rank(item)
        return (rank, group is None, order[id(item)])

    items.sort(key=key)
