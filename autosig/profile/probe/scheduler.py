"""When probes run, within what time, and the evidence kept per function (parent side).

A round runs right after a tf.function retraced (its second trace or later), in the
call that retraced, while the call's arguments and, for a method, the instance are
alive: most programs drop their model or module when ``main()`` returns, before exit,
so probing at exit would miss them (``ProbeStats.alive_at_exit`` measures it). A round
probes only what earlier rounds of the function did not: a dimension that started to
vary, a new argument. Nothing here runs per call: the recorder calls ``on_trace`` only
after a call that traced (and only for eager calls that returned normally).

Interrupts: Ctrl-C (any stop signal to the program's process group) ends a running
round's copy at once (``isolation``) and no round starts after it in that process, nor
after ``autosig profile`` relayed one (``STOP_MARKER``), so a program that handles Ctrl-C
itself (finish the step, save, exit) is never held up by probes; the rounds not run are
reported as skipped for the interrupt.

Time: the rounds of one process share a budget (``AUTOSIG_PROBE_BUDGET`` seconds, set
by ``autosig profile --probe-budget``; 0 disables probes). A round gets what is left;
its copy is killed when that runs out or when it makes no progress for a while; the
candidates it did not finish are reported as skipped for the budget.

No TensorFlow here (the copy imports it; this module only forks and reads).
"""

from __future__ import annotations

import copy
import os
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autosig.profile.evidence import (
    MAX_LISTED,
    MAX_TRACE_OUTPUT,
    DimEvidence,
    NumberEvidence,
    ProbeEvidence,
    ProbeStats,
    RandomEvidence,
    merge_evidence,
)
from autosig.profile.format import FunctionRecord
from autosig.profile.probe.candidates import NumberTracker, plan_round, python_numbers
from autosig.profile.probe.isolation import fork_available, run_forked
from autosig.profile.probe.tracing import ProbeJob, run_round

ENV_PROBE_BUDGET = "AUTOSIG_PROBE_BUDGET"
DEFAULT_BUDGET_S = 60.0
"""Seconds of probing per recorded process by default."""
MIN_ROUND_S = 0.5
"""A round is not started with less time than this left."""
STOP_MARKER = "stop-requested"
"""Created by ``autosig profile`` in the parts folder when it relays a stop signal: a
program that handles Ctrl-C itself (and so never raises KeyboardInterrupt) may still make
calls that trace before it stops; no probe round starts once this file exists."""
INTERRUPTED_NOTE = "stopped: the program was interrupted"
"""``ProbeStats.note`` once a stop signal reached the program: no round runs after it."""
MIN_STALL_S = 30.0
"""A copy that sends nothing for this long (or 20 traces' worth of the function's own
trace time, if longer) is killed."""


def budget_from_env() -> float | None:
    """The budget in seconds; 0 = probes off; ``none``/``inf`` = no limit."""
    text = os.environ.get(ENV_PROBE_BUDGET, "").strip().lower()
    if not text:
        return DEFAULT_BUDGET_S
    if text in ("off", "no", "false"):
        return 0.0
    if text in ("none", "inf", "unlimited"):
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        return DEFAULT_BUDGET_S


@dataclass
class _FunctionProbes:
    evidence: ProbeEvidence | None = None
    done: set[Any] = field(default_factory=set)
    numbers: dict[str, NumberTracker] = field(default_factory=dict)
    objects: list[weakref.ref[Any]] = field(default_factory=list)
    given_up: bool = False
    """A round could not run (an eager op at trace time, a crash, a stall): no more."""


class Prober:
    """Runs probe rounds for the recorder and keeps their evidence per function."""

    def __init__(
        self,
        budget_s: float | None,
        root: str,
        in_child: Callable[[], None] | None = None,
        stop_marker: Path | None = None,
    ) -> None:
        self.budget_s = budget_s
        self.root = root
        self.in_child = in_child
        self.stop_marker = stop_marker
        """``STOP_MARKER`` in the parts folder of ``autosig profile``, None outside it."""
        self.spent = 0.0
        self.interrupted = False
        """A stop signal reached the program during a round: no more rounds."""
        self.lock = threading.Lock()
        self.functions: dict[Any, _FunctionProbes] = {}
        self.stats = ProbeStats(budget_s=budget_s)
        if budget_s == 0:
            self.stats.enabled = False
            self.stats.note = "disabled (--no-probe or a budget of 0)"
        elif not fork_available():
            self.stats.enabled = False
            self.stats.note = "not run: they need os.fork (Linux, macOS)"

    @property
    def enabled(self) -> bool:
        return self.stats.enabled

    # -- called by the recorder after a call that traced ---------------------------------
    def on_trace(
        self,
        key: Any,
        record: FunctionRecord,
        binder: Any,
        function: Any,
        args: tuple[Any, ...],
        kwds: dict[str, Any],
        signature: int | None,
    ) -> None:
        with self.lock:
            probes = self.functions.get(key)
            if probes is None:
                probes = self.functions[key] = _FunctionProbes()
            self._track_numbers(probes, binder, args, kwds)
            if (
                not self.enabled
                or probes.given_up
                or record.traces < 2
                or signature is None
                or not record.editable
                or record.decorator_options.get("input_signature")
            ):
                return
            sig = record.signatures[signature]
            plan = plan_round(
                [s.args for s in record.signatures], sig.args, sig.passed, probes.done
            )
            first = probes.evidence is None or probes.evidence.random is None
            if not plan and not first:
                return
            if not self.interrupted and self.stop_marker is not None:
                if self.stop_marker.exists():  # one stat, only when a round would run
                    self._stop_for_interrupt()
            if self.interrupted:
                self._skip(probes, record, plan.labels(), why="interrupted")
                return
            left = None if self.budget_s is None else self.budget_s - self.spent
            if left is not None and left < MIN_ROUND_S:
                self._skip(probes, record, plan.labels())
                return
            try:
                self._round(probes, record, function, args, kwds, plan, first, left)
            except KeyboardInterrupt:  # Ctrl-C in the parent: the copy is gone, say so
                self._stop_for_interrupt()
                raise
            except Exception as exc:  # noqa: BLE001 - a probe must never break the program
                self.stats.failures += 1
                probes.given_up = True
                failure = ProbeEvidence(
                    failures=[f"probe round failed: {type(exc).__name__}: {exc}"[:200]]
                )
                probes.evidence = merge_evidence(probes.evidence, failure)

    def _track_numbers(self, probes: _FunctionProbes, binder: Any, args: tuple, kwds: dict) -> None:
        try:
            bound, _ = binder.bind(args, kwds)
        except TypeError:
            return
        for name, value in bound:
            for path, number in python_numbers(name, value):
                tracker = probes.numbers.get(path)
                if tracker is None:
                    kind = "float" if type(number) is float else "int"
                    tracker = probes.numbers[path] = NumberTracker(kind)
                tracker.add(number)

    def _skip(
        self,
        probes: _FunctionProbes,
        record: FunctionRecord,
        labels: list[str],
        why: str = "budget",
    ) -> None:
        if why == "budget":
            self.stats.skipped_rounds += 1
            if record.display_name not in self.stats.skipped_functions:
                self.stats.skipped_functions.append(record.display_name)
                del self.stats.skipped_functions[MAX_LISTED:]
        skipped = ProbeEvidence(skipped=[f"{label}: {why}" for label in labels][:MAX_LISTED])
        probes.evidence = merge_evidence(probes.evidence, skipped)

    def _stop_for_interrupt(self) -> None:
        self.interrupted = True
        self.stats.note = INTERRUPTED_NOTE

    def _round(
        self,
        probes: _FunctionProbes,
        record: FunctionRecord,
        function: Any,
        args: tuple,
        kwds: dict,
        plan: Any,
        first: bool,
        left: float | None,
    ) -> None:
        job = ProbeJob(function, args, kwds, plan, self.root, first_round=first)
        slowest = max((e.time_s for e in record.trace_events), default=0.0)
        stall = max(MIN_STALL_S, 20 * slowest)
        now = time.monotonic()
        deadline = now + (left if left is not None else 24 * 3600.0)
        outcome = run_forked(
            lambda emit: run_round(job, emit),
            deadline=deadline,
            stall_s=stall,
            in_child=self.in_child,
        )
        self.spent += outcome.elapsed_s
        evidence = ProbeEvidence(rounds=1, time_s=outcome.elapsed_s)
        finished: set[str] = set()
        for message in outcome.messages:
            kind = message.get("kind")
            if kind == "trace":
                evidence.probes += 1
            elif kind == "baseline":
                evidence.baseline_ops = int(message["ops"])
            elif kind == "random":
                evidence.random = RandomEvidence(**message["evidence"])
            elif kind == "dims":
                finished.add(message["group"])
                evidence.dims.extend(DimEvidence(**d) for d in message["items"])
            elif kind == "number":
                number = NumberEvidence(**message["evidence"])
                finished.add(number.param)
                evidence.numbers.append(number)
            elif kind == "failure":
                evidence.failures.append(str(message["text"]))
            elif kind == "output":
                evidence.trace_output = str(message["text"])[:MAX_TRACE_OUTPUT]
        for group in plan.groups:
            if group.label in finished:
                probes.done.update(m.key for m in group.members)
        probes.done.update(("number", n.param) for n in plan.numbers if n.param in finished)
        child_failed = bool(evidence.failures)
        if outcome.status == "interrupted":
            self._stop_for_interrupt()
        if outcome.status != "done":
            why = "budget" if outcome.status == "timeout" else outcome.status
            evidence.failures.append(f"round stopped: {outcome.detail}")
            unfinished = [
                m.label for g in plan.groups if g.label not in finished for m in g.members
            ]
            unfinished += [n.param for n in plan.numbers if n.param not in finished]
            evidence.skipped.extend(f"{label}: {why}" for label in unfinished[:MAX_LISTED])
            if outcome.status == "timeout":
                self.stats.skipped_rounds += 1
                if record.display_name not in self.stats.skipped_functions:
                    self.stats.skipped_functions.append(record.display_name)
        if child_failed or outcome.status in ("stalled", "crashed", "unavailable"):
            self.stats.failures += 1
            probes.given_up = True
        self.stats.rounds += 1
        self.stats.probes += evidence.probes
        self.stats.time_s += outcome.elapsed_s
        probes.evidence = merge_evidence(probes.evidence, evidence)
        instance = _instance_of(function)
        if instance is not None:
            try:
                probes.objects.append(weakref.ref(instance))
            except TypeError:
                pass

    # -- read when the profile is written ------------------------------------------------
    def evidence(self, key: Any) -> ProbeEvidence | None:
        """The function's evidence with its Python numbers' values, None if never probed."""
        with self.lock:
            probes = self.functions.get(key)
            if probes is None or probes.evidence is None:
                return None
            evidence = copy.deepcopy(probes.evidence)
            for path, tracker in probes.numbers.items():
                number = evidence.number(path)
                if number is None:
                    number = NumberEvidence(path, tracker.type, reason="not probed")
                    evidence.numbers.append(number)
                number.count = tracker.count
                number.min, number.max = tracker.min, tracker.max
                number.float32_exact = tracker.float32_exact
                number.float32_keeps_digits = tracker.float32_keeps_digits
                number.float32_max_abs_error = tracker.float32_max_abs_error
                number.exceeds_int32 = tracker.exceeds_int32 if tracker.type == "int" else None
            return evidence

    def final_stats(self) -> ProbeStats:
        with self.lock:
            stats = ProbeStats(**{**self.stats.__dict__})
            stats.skipped_functions = list(self.stats.skipped_functions)
            objects = [ref for p in self.functions.values() for ref in p.objects]
            stats.probed_objects = len(objects)
            stats.alive_at_exit = sum(1 for ref in objects if ref() is not None)
            return stats


def _instance_of(function: Any) -> Any:
    """The object a tf.function method is bound to (TensorFlow binds it through a
    ``TfMethodTarget`` holding a weak reference), None for a plain function."""
    fn = getattr(function, "python_function", None)
    for _ in range(8):
        if fn is None:
            return None
        owner = getattr(fn, "__self__", None)
        if owner is not None:
            return getattr(owner, "target", owner)
        fn = getattr(fn, "__wrapped__", None)
    return None
