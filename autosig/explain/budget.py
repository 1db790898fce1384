"""Retrace budgets: which tf.functions traced more than allowed, and why, in explain's words.

The CI guard behind ``pytest --autosig-max-traces=N`` and ``[tool.autosig] max-traces``
(``autosig/pytest_plugin.py``) and behind ``with autosig.expect_traces(fn, at_most=N):``.
A budget counts the traces of one tf.function object in one process: a method's
per-instance function is its own object, and every process traces anew. Each trace
beyond the budget is given the cause ``autosig explain`` gives it (``explain_function``:
what changed since the nearest earlier trace of that object), with the test that made
it when the session knows, and explain's summary of the causes and their fix. A
function whose ``def``/decorator line suppresses AS201 (``# autosig: ignore``,
``ignore[AS201]`` or ``ignore[AS2]``) has no budget, as ``fix --profile`` leaves it
alone. Reads recorder state; imports no TensorFlow itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.explain.advice import fix_plans
from autosig.explain.retraces import Retrace, explain_function
from autosig.infer.findings import suppressing_line
from autosig.infer.plan import FunctionPlan
from autosig.profile.format import FunctionRecord, Profile
from autosig.source.files import read_source
from autosig.text import plural

Key = tuple[str | None, str, int]
"""A function: ``FunctionRecord.key``."""
SHOWN_TRACES = 20
"""Extra traces listed per function (the rest are counted), as explain lists 20."""


@dataclass(frozen=True)
class Budget:
    """A function's trace budget and where it was set (said in the failure report)."""

    traces: int
    origin: str


@dataclass
class OverBudget:
    """One tf.function object that traced more than its budget."""

    record: FunctionRecord
    budget: Budget
    traces: int
    """Traces of this object (in this process)."""
    extra: list[tuple[Retrace, str | None]] = field(default_factory=list)
    """Each trace beyond the budget, explained, with the test that made it (if known)."""
    summary: list[str] = field(default_factory=list)
    """explain's summary of the function's causes and their fix."""
    instance: int = 0
    instances: int = 1
    process: int = 0

    @property
    def where(self) -> str:
        r = self.record
        return f"{r.path}:{r.line}" if r.path else "<unknown>"

    def lines(self) -> list[str]:
        r = self.record
        which = f" (tf.function object #{self.instance + 1})" if self.instances > 1 else ""
        head = (
            f"{self.where}: {r.qualname}{which} traced {plural(self.traces, 'time')}, over its "
            f"budget of {self.budget.traces} ({self.budget.origin})"
        )
        out = [head]
        for retrace, test in self.extra[:SHOWN_TRACES]:
            by = f" in {test}" if test else ""
            out.append(f"  trace {retrace.trace} of {r.traces}{by}: {retrace.text}")
        hidden = len(self.extra) - SHOWN_TRACES
        if hidden > 0:
            out.append(f"  ... {plural(hidden, 'more extra trace')}")
        out.extend(f"  summary: {line}" for line in self.summary)
        return out


def suppressed(record: FunctionRecord, root: Path) -> bool:
    """Whether the function's def/decorator line suppresses its profile code (AS201)."""
    if record.path is None:
        return False
    path = Path(record.path)
    try:
        text = read_source(path if path.is_absolute() else root / path).text
    except AutosigError:
        return False
    return suppressing_line(text, record.path, record.qualname, record.line) is not None


def over_budget(
    profile: Profile,
    budget_for: Callable[[FunctionRecord], Budget | None],
    *,
    root: Path,
    tests: Mapping[tuple[Key, int], str] | None = None,
    profile_hint: str | None = None,
) -> list[OverBudget]:
    """Every tf.function object of the project that traced more than its budget.

    ``budget_for`` gives a function's budget (None: none). Library functions (Keras'
    ``train_function``) and suppressed functions have none. ``tests`` names the test
    that made each trace event (``(function key, event index)``). ``profile_hint``: the
    profile the advice's ``autosig fix --profile`` names.
    """
    over: list[tuple[FunctionRecord, Budget, int, int, int, list[int]]] = []
    for record in profile.functions:
        budget = budget_for(record) if record.editable else None
        if budget is None:
            continue
        groups: dict[tuple[int, int], list[int]] = {}
        for index, event in enumerate(record.trace_events):
            groups.setdefault((event.process, event.instance), []).append(index)
        exceeded = sorted((k, v) for k, v in groups.items() if len(v) > budget.traces)
        if not exceeded or suppressed(record, root):
            continue
        instances = len({instance for _, instance in groups})
        for (process, instance), indices in exceeded:
            over.append((record, budget, process, instance, instances, indices))
    plans = _plans([item[0] for item in over], profile, profile_hint)
    hint = profile_hint or ".autosig/profile.json"
    found: list[OverBudget] = []
    for record, budget, process, instance, instances, indices in over:
        beyond = indices[budget.traces :]
        explanation = explain_function(
            record, hint, plans.get(record.key), summarise=[i + 1 for i in beyond]
        )
        extra = [(explanation.retraces[i], (tests or {}).get((record.key, i))) for i in beyond]
        found.append(
            OverBudget(
                record,
                budget,
                len(indices),
                extra=extra,
                summary=list(explanation.summary),
                instance=instance,
                instances=instances,
                process=process,
            )
        )
    return found


def _plans(
    records: list[FunctionRecord], profile: Profile, profile_hint: str | None
) -> Mapping[Key, FunctionPlan]:
    """The plan fix makes for each function (its source read and planned as ``autosig
    explain`` does), so the advice is fix's own; {} when none can be made."""
    unique = {record.key: record for record in records}
    if not unique:
        return {}
    subset = Profile(
        functions=list(unique.values()),
        project_root=profile.project_root,
        tensorflow_version=profile.tensorflow_version,
    )
    try:
        return fix_plans(subset, profile_hint or ".autosig/profile.json")
    except AutosigError:
        return {}


def budget_report(found: list[OverBudget], profile_hint: str | None = None) -> list[str]:
    """The failure report: one block per object over budget, and what to do next."""
    lines: list[str] = []
    for item in found:
        lines.extend(item.lines())
    hint = profile_hint or ".autosig/profile.json"
    record = (
        f"record the calls (pytest --autosig-profile={hint}), then `autosig explain {hint}`"
        if profile_hint is None
        else f"`autosig explain {hint}`"
    )
    lines.append(
        f"{plural(len(found), 'tf.function object')} over budget: {record} and "
        f"`autosig fix --profile {hint}`; raise a budget with [tool.autosig.max-traces] "
        'and "<path>::<qualname>" = N, or silence a function with # autosig: ignore[AS201]'
    )
    return lines


# -- one block of one test ----------------------------------------------------------------


class expect_traces:  # noqa: N801 - used like a function: ``with autosig.expect_traces(f):``
    """``with expect_traces(fn, at_most=1):`` fails (AssertionError) when the tf.function
    ``fn`` traces more than ``at_most`` times inside the block, naming the cause of each
    trace beyond it as ``autosig explain`` does.

    ``fn`` is a tf.function, or a tf.function method taken from its object
    (``model.train_step``: that object's function). The traces are TensorFlow's own count
    (``experimental_get_tracing_count``); the causes come from the recording running in
    the process (``pytest --autosig-max-traces``, ``--autosig-profile``, ``autosig
    profile``) or, without one, a recording of this block (no samples kept).
    """

    def __init__(self, fn: Any, *, at_most: int = 1) -> None:
        if not callable(getattr(fn, "experimental_get_tracing_count", None)):
            raise TypeError(f"expect_traces needs a tf.function, got {type(fn).__name__}")
        if isinstance(at_most, bool) or not isinstance(at_most, int) or at_most < 0:
            raise ValueError(f"at_most must be a number of traces >= 0, got {at_most!r}")
        self.fn = fn
        self.at_most = at_most
        self._own: Any = None
        self._recorder: Any = None
        self._before = 0
        self._events: dict[Key, int] = {}

    def __enter__(self) -> expect_traces:
        from autosig.profile.recorder import Recorder, active_recorder

        recorder = active_recorder()
        if recorder is None:
            recorder = self._own = Recorder(
                os.devnull, sample_calls=0, samples_per_signature=0, count_earlier_traces=False
            ).start()
        self._recorder = recorder
        self._before = self.fn.experimental_get_tracing_count()
        self._events = recorder.trace_event_counts()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        try:
            traced = self.fn.experimental_get_tracing_count() - self._before
            if exc_type is None and traced > self.at_most:
                raise AssertionError(self._message(traced))
        finally:
            if self._own is not None:
                self._own.stop()
        return False

    def _message(self, traced: int) -> str:
        found = self._recorder.function_of(self.fn)
        name = getattr(self.fn, "__name__", "the tf.function")
        if found is None:
            return (
                f"{name} traced {plural(traced, 'time')} in this block, at most {self.at_most} "
                "expected (its calls were not recorded, so no causes can be given)"
            )
        record, instance = found
        start = self._events.get(record.key, 0)
        mine = [
            i
            for i in range(start, len(record.trace_events))
            if record.trace_events[i].instance == instance
        ]
        explanation = explain_function(record, summarise=[i + 1 for i in mine[self.at_most :]])
        where = f"{record.path}:{record.line}" if record.path else "<unknown>"
        lines = [
            f"{record.qualname} ({where}) traced {plural(traced, 'time')} in this block, "
            f"at most {self.at_most} expected:"
        ]
        for i in mine[self.at_most :][:SHOWN_TRACES]:
            retrace = explanation.retraces[i]
            lines.append(f"  trace {retrace.trace} of {record.traces}: {retrace.text}")
        lines.extend(f"  summary: {line}" for line in explanation.summary)
        return "\n".join(lines)
