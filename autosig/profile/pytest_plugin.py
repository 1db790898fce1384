"""pytest plugin: ``pytest --autosig-profile=FILE`` records the test suite's tf.function calls.

Registered through the ``pytest11`` entry point; imports TensorFlow only when the
option is given.
"""

from __future__ import annotations

from typing import Any


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("autosig")
    group.addoption(
        "--autosig-profile",
        action="store",
        default=None,
        metavar="FILE",
        help="record every tf.function call made by the tests into this autosig profile",
    )


def pytest_configure(config: Any) -> None:
    path = config.getoption("--autosig-profile", default=None)
    if not path:
        return
    from autosig.profile.recorder import record

    recorder = record(path)
    recorder.__enter__()
    config._autosig_recorder = recorder


def pytest_unconfigure(config: Any) -> None:
    recorder = getattr(config, "_autosig_recorder", None)
    if recorder is not None:
        recorder.__exit__(None, None, None)
