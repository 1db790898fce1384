"""What the profile shows about one function as a whole, read from its record once.

The planner's first stage (``observe``, asked for every function): whether some
tf.function object traced twice (``traced_once``), the parameters every call passed a
Python int, the retraces the first call's variables made
(``variable_creation_retraces``), the shapes, containers, NumPy float64 arrays and
tf.distribute values seen in each parameter (``value_tree.walk_calls``: one walk over
the recorded values), and each parameter's ``ParamResult`` (``observations``: what
each parameter allows) with the cause that varied most; AS201's ``retrace_message``.
The later stages take these facts (``Observed``) instead of going back to the record.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from autosig.infer.observations import InferOptions, ParamResult, analyze_param, main_cause
from autosig.profile.describe_distributed import distributed_params
from autosig.profile.format import FunctionRecord
from autosig.profile.value_tree import walk_calls
from autosig.text import plural

# -- what the calls and traces show about the whole function ------------------------


ONCE_REASON = "traced once; nothing to fix"


def traced_once(record: FunctionRecord) -> str | None:
    """Why no retrace happened, or None when some tf.function object traced twice.

    Traces add up over the instances of a class (each has its own tf.function) and over
    the processes of a merged profile (each traces afresh): a signature cannot bring
    those below one per instance and process.
    """
    if record.traces <= 1:
        return ONCE_REASON
    events = record.trace_events
    if events and len(events) == record.traces:
        per_owner = Counter((e.process, e.instance) for e in events)
        if max(per_owner.values()) > 1:
            return None
        owners = len(per_owner)
    elif record.traces <= max(record.instances, record.processes, 1):
        owners = record.traces
    else:
        return None
    processes = len({e.process for e in events}) if events else record.processes
    what = "per process" if processes > 1 and owners == processes else "per instance"
    if processes > 1 and owners > processes:
        what = "per instance and process"
    return f"traced once {what} ({owners} tf.function objects); nothing to fix"


def python_ints_only(record: FunctionRecord) -> frozenset[str]:
    """Parameters every recorded call passed a Python int (no tensor, no float)."""
    names: set[str] | None = None
    for signature in record.signatures:
        ints = {
            name
            for name, value in signature.args.items()
            if value.get("kind") == "python" and value.get("type") == "int"
        }
        names = ints if names is None else names & ints
    return frozenset(names or ())


# -- the stage: everything the profile shows about one function, read once ----------


@dataclass(frozen=True)
class Observed:
    """What the profile shows about one function, read from its record once.

    The first stage of the planner: the later ones (Python values, dimensions, action,
    findings) take these facts instead of going back to the record's values.
    """

    results: list[ParamResult]
    """One per parameter, in order; the later stages narrow them in place."""
    once: str | None
    """Why nothing retraced (``traced_once``), or None."""
    python_ints: frozenset[str]
    """Parameters every recorded call passed a Python int."""
    shapes: dict[str, dict[str, set[Any]]]
    """Parameter -> place inside it -> the shapes seen there (``value_tree.Recorded.shapes``)."""
    containers: frozenset[str]
    """Parameters that were a tuple, list or dict in every recorded call."""
    distributed: list[str]
    """Parameters that took tf.distribute values (``distributed_params``)."""
    numpy_float64: frozenset[str]
    """Parameters passed a NumPy float64 array (read for library functions only)."""
    main_cause: str | None
    """The cause that varied most (``main_cause``), None: no cause known."""
    first_call_variables: tuple[int, bool]
    """Traces that repeated a call because it created variables, and whether every
    retrace was one (``variable_creation_retraces``): read by the guarded trace and
    ``build_first``."""


def observe(record: FunctionRecord, options: InferOptions) -> Observed:
    """The observation stage: what the calls and traces show about the function, then
    each parameter's ``ParamResult`` (``observations.analyze_param``), from one walk over
    the recorded values (``value_tree.walk_calls``)."""
    once, ints = traced_once(record), python_ints_only(record)
    first_call = variable_creation_retraces(record)
    walked = walk_calls(record)
    shapes = {name: seen for name, recorded in walked.items() if (seen := recorded.shapes())}
    containers = frozenset(name for name in shapes if walked[name].always_container)
    float64 = frozenset()
    if not record.editable:  # NumPy float64 arrays anywhere in a parameter's values
        float64 = frozenset(
            name
            for name, recorded in walked.items()
            for leaf in recorded.leaves
            if not leaf.in_replica
            and leaf.value.get("kind") == "numpy"
            and leaf.value.get("dtype") == "float64"
        )
    results = [
        analyze_param(record, info, walked.get(info.name), options) for info in record.params
    ]
    cause = main_cause(results)
    distributed = distributed_params(record, walked)
    return Observed(
        results, once, ints, shapes, containers, distributed, float64, cause, first_call
    )


def variable_creation_retraces(record: FunctionRecord) -> tuple[int, bool]:
    """(traces that repeated a call because of variable creation, whether every retrace
    of the function is one of them)."""
    by_owner: dict[tuple[int, int], list] = defaultdict(list)
    for event in record.trace_events:
        by_owner[(event.process, event.instance)].append(event)
    repeated = others = 0
    for events in by_owner.values():
        for before, event in zip(events, events[1:], strict=False):
            if (
                event.call == before.call
                and event.signature is not None
                and event.signature == before.signature
                and not event.new_objects
            ):
                repeated += 1
            else:
                others += 1
    complete = len(record.trace_events) == record.traces
    return repeated, complete and others == 0


def retrace_message(record: FunctionRecord, cause: str) -> str:
    """AS201's message: ``5 traces for 12 calls; main cause: ...``."""
    return f"{record.traces} traces for {plural(record.calls, 'call')}; main cause: {cause}"
