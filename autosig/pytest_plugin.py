"""pytest plugin: record the test suite's tf.function calls, and hold them to a retrace budget.

``pytest --autosig-profile=FILE`` records every tf.function call made by the tests into
an autosig profile. ``pytest --autosig-max-traces=N``, or ``max-traces`` in the
project's ``[tool.autosig]`` (a number, or a table with ``default`` and
``"<path>::<qualname>" = N`` per function), fails the session when a tf.function of the
project traces more than its budget; the failure report names the cause of each trace
beyond it, as ``autosig explain`` does, and the test that made it
(``autosig.explain.budget``). A budget counts one tf.function object in one process (a
method's per-instance function is its own object; each xdist worker traces anew);
functions whose ``def`` line suppresses AS201 and library code have none.

Registered through the ``pytest11`` entry point, so it loads in every pytest run: it
imports nothing heavy unless an option or the config asks for it, and the recorder
never imports TensorFlow itself. Under pytest-xdist each worker records into
``FILE.parts/`` and writes its part at session finish (before it reports back: the
controller may stop workers before their unconfigure hooks run); the controller merges
the parts into FILE. Workers check their own budgets and leave what they found for the
controller, which reports it and fails the session.

A front end like the command line (it drives the recorder and explain), so it sits at
the top of the package, beside ``autosig/cli``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from autosig.errors import AutosigError

BUDGET_DIR = "autosig_budget_dir"
"""The key of ``workerinput`` naming where xdist workers leave their budget reports."""


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("autosig")
    group.addoption(
        "--autosig-profile",
        action="store",
        default=None,
        metavar="FILE",
        help="record every tf.function call made by the tests into this autosig profile",
    )
    group.addoption(
        "--autosig-max-traces",
        action="store",
        type=int,
        default=None,
        metavar="N",
        help="fail the session when a tf.function of the project traces more than N times "
        "(per tf.function object and process); the report names each extra trace's cause. "
        "[tool.autosig] max-traces sets it too, and budgets per function",
    )


def _parts_dir(path: Path) -> Path:
    return path.with_name(path.name + ".parts")


class _Budget:
    """The session's retrace budget: limits, the recorder it reads, who traced what."""

    def __init__(self, settings: Any, option: int | None, root: Path) -> None:
        self.root = root
        self.option = option
        self.settings = settings
        self.tests: dict[tuple[Any, int], str] = {}
        self.found: list[str] = []
        self.recorder: Any = None
        self.own_recorder = False

    @classmethod
    def of(cls, config: Any) -> _Budget | None:
        """The budget configured for this session, None when there is none."""
        option = config.getoption("--autosig-max-traces", default=None)
        if option is not None and option < 1:
            raise pytest.UsageError("--autosig-max-traces: expected a positive number of traces")
        from autosig.source.config import Config, load_config  # tomllib: cheap

        root = Path(config.rootpath)
        try:
            settings = load_config([root])
        except AutosigError as exc:
            if option is not None:
                raise pytest.UsageError(f"--autosig-max-traces: {exc}") from None
            # a session that asked for no budget still runs; the config error is said
            config.issue_config_time_warning(
                pytest.PytestConfigWarning(f"autosig: no trace budget: {exc}"), stacklevel=2
            )
            settings = Config(root=root)
        if option is None and settings.max_traces is None and not settings.max_traces_per_function:
            return None
        return cls(settings, option, root)

    def budget_for(self, record: Any) -> Any:
        from autosig.explain.budget import Budget

        if record.path is None:
            return None
        path = Path(record.path)
        absolute = path if path.is_absolute() else self.root / path
        settings = self.settings
        own = settings.max_traces_for(absolute, record.qualname)
        where = settings.source.name if settings.source is not None else "the config"
        if own is not None and own != settings.max_traces:
            key = f"{settings.relative(absolute)}::{record.qualname}"
            return Budget(own, f'max-traces."{key}" in {where}')
        if self.option is not None:
            return Budget(self.option, "--autosig-max-traces")
        if settings.max_traces is not None:
            return Budget(settings.max_traces, f"max-traces in {where}")
        return None

    def start(self, recorder: Any) -> None:
        from autosig.profile.recorder import Recorder

        if recorder is None:  # no --autosig-profile: record for the budget only, no samples
            recorder = Recorder(
                os.devnull,  # never written: the budget reads it in memory
                project_root=self.root,
                sample_calls=0,
                samples_per_signature=0,
            )
            try:
                recorder.start()
            except AutosigError as exc:
                raise pytest.UsageError(f"--autosig-max-traces: {exc}") from None
            self.own_recorder = True
        self.recorder = recorder

    def check(self, profile_hint: str | None) -> list[str]:
        """The report lines of every object over budget in this process ([] if none)."""
        from autosig.explain.budget import budget_report, over_budget

        found = over_budget(
            self.recorder.profile(),
            self.budget_for,
            root=self.root,
            tests=self.tests,
            profile_hint=profile_hint,
        )
        return budget_report(found, profile_hint) if found else []

    def stop(self) -> None:
        if self.own_recorder and self.recorder is not None:
            self.recorder.stop()
            self.own_recorder = False


def pytest_configure(config: Any) -> None:
    option = config.getoption("--autosig-profile", default=None)
    recorder = None
    if option:
        # this plugin loads in every pytest run: the recorder only with --autosig-profile
        from autosig.profile.recorder import record

        path = Path(option)
        if not path.is_absolute():
            path = Path(config.invocation_params.dir) / path
        worker = getattr(config, "workerinput", None)
        if worker is not None:
            target = _parts_dir(path) / f"{worker['workerid']}.json"
        else:
            target = path
        recording = record(target)
        try:
            recorder = recording.__enter__()
        except AutosigError as exc:
            raise pytest.UsageError(f"--autosig-profile: {exc}") from None
        config._autosig_recorder = recording
        config._autosig_profile = path
    budget = _Budget.of(config)
    config._autosig_budget = budget
    if budget is not None:
        budget.start(recorder)
        if getattr(config, "workerinput", None) is None:
            import tempfile

            config._autosig_budget_dir = Path(tempfile.mkdtemp(prefix="autosig-budget-"))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: tell each worker where to leave what it found over budget."""
    directory = getattr(node.config, "_autosig_budget_dir", None)
    if directory is not None:
        node.workerinput[BUDGET_DIR] = str(directory)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Any:
    """Note which test made each trace, for the failure report."""
    budget = getattr(item.config, "_autosig_budget", None)
    if budget is None or budget.recorder is None:
        yield
        return
    before = budget.recorder.trace_event_counts()
    yield
    for key, count in budget.recorder.trace_event_counts().items():
        for index in range(before.get(key, 0), count):
            budget.tests[(key, index)] = item.nodeid


def _finish(config: Any) -> bool:
    """Stop recording and write the profile (once); False if nothing was recording."""
    recording = getattr(config, "_autosig_recorder", None)
    if recording is None:
        return False
    config._autosig_recorder = None
    recording.__exit__(None, None, None)
    return True


def _check_budget(session: Any) -> None:
    """Before the profile is written: hold this process's traces to their budget."""
    config = session.config
    budget = getattr(config, "_autosig_budget", None)
    if budget is None or budget.recorder is None:
        return
    profile = getattr(config, "_autosig_profile", None)
    found = budget.check(str(profile) if profile is not None else None)
    budget.stop()
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        directory = worker.get(BUDGET_DIR)
        if found and directory:
            out = Path(directory) / f"{worker['workerid']}.json"
            out.write_text(json.dumps({"worker": worker["workerid"], "lines": found}))
        return
    budget.found = list(found)
    directory = getattr(config, "_autosig_budget_dir", None)
    if directory is not None:
        for part in sorted(Path(directory).glob("*.json")):
            data = json.loads(part.read_text())
            budget.found.extend(f"[{data['worker']}] {line}" for line in data["lines"])
    if budget.found and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_sessionfinish(session: Any) -> None:
    _check_budget(session)
    if getattr(session.config, "workerinput", None) is not None:
        _finish(session.config)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: Any, config: Any) -> None:
    budget = getattr(config, "_autosig_budget", None)
    if budget is None or not budget.found:
        return
    terminalreporter.section("autosig: tf.functions over their trace budget", red=True)
    for line in budget.found:
        terminalreporter.line(line)


def pytest_unconfigure(config: Any) -> None:
    directory = getattr(config, "_autosig_budget_dir", None)
    if directory is not None:
        import shutil

        shutil.rmtree(directory, ignore_errors=True)
        config._autosig_budget_dir = None
    budget = getattr(config, "_autosig_budget", None)
    if budget is not None:
        budget.stop()
    if not _finish(config) or getattr(config, "workerinput", None) is not None:
        return
    parts = _parts_dir(config._autosig_profile)
    if parts.is_dir():
        import shutil

        from autosig.profile.merge import merge_files

        inputs = [config._autosig_profile, *sorted(parts.glob("*.json"))]
        merge_files(inputs, config._autosig_profile, one_run=True)
        shutil.rmtree(parts, ignore_errors=True)
