"""One probe round, inside the forked copy: trace, compare, send verdicts back.

The round gets the tf.function that retraced (``function``), the arguments of the call
that retraced and the candidates (``candidates.RoundPlan``). Every probe is a fresh
``tf.function`` over the same Python function (bound to the same live instance for a
method) with the function's own options, and ``get_concrete_function`` on the call's
arguments with tensors replaced by ``tf.TensorSpec``s: only traced, never run. The
steady-state graph (the baseline) is the trace at the call's own shapes.

Messages sent (``emit``): ``trace`` after every trace, ``baseline``, ``random``, one
``dims`` per group of dimensions, one ``number`` per Python number; the parent keeps
what arrived before a deadline. TensorFlow is imported here, in the copy only.
"""

from __future__ import annotations

import inspect
import re
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from autosig.profile.evidence import DimEvidence, RandomEvidence
from autosig.profile.probe.candidates import Group, RoundPlan, alternate_sizes
from autosig.profile.probe.graphs import (
    canonical,
    cast_target,
    changed_constants,
    constants_holding,
    differences,
    number_difference,
    number_ops,
)
from autosig.profile.probe.isolation import EagerOpInProbe, Emit
from autosig.profile.probe.verdicts import (
    CONSTANT_DTYPES,
    FLOAT_DTYPES,
    NUMBER_DTYPES,
    OTHER_DTYPES,
    Finding,
    TraceResult,
    cast_only_verdict,
    dim_verdict,
    number_verdict,
)

MAX_ERROR = 240
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in ')


@dataclass
class ProbeJob:
    function: Any
    """The tf.function object that retraced (a method's: the instance's)."""
    args: tuple[Any, ...]
    kwds: dict[str, Any]
    plan: RoundPlan
    root: str
    """The project root: frames in files under it (not in installed packages) are the user's."""
    first_round: bool = True


class UserFiles:
    """Which source files are the user's project (for ``file:line`` evidence)."""

    def __init__(self, root: str, outer: set[tuple[str, int]] | None = None) -> None:
        self.root = Path(root).resolve()
        here = Path(__file__).resolve().parents[2]  # the autosig package
        self.excluded = (str(here) + "/",)
        self.cache: dict[str, str | None] = {}
        self.outer = outer or set()
        """Frames of the program around the probe (its ``main()`` calling the function):
        an op's traceback starts with them, but they are not where the graph comes from."""

    def relative(self, filename: str) -> str | None:
        """The project-relative path of a user file, None for anything else."""
        if filename in self.cache:
            return self.cache[filename]
        out = None
        if filename and not filename.startswith("<") and "__autograph_generated" not in filename:
            path = Path(filename).resolve()
            text = str(path)
            if not text.startswith(self.excluded) and not any(
                part in ("site-packages", "dist-packages") for part in path.parts
            ):
                try:
                    out = path.relative_to(self.root).as_posix()
                except ValueError:
                    out = None
        self.cache[filename] = out
        return out

    def innermost(self, frames: Any) -> str | None:
        if not frames:
            return None
        for frame in reversed(list(frames)):
            if (frame.filename, frame.lineno) in self.outer:
                return None
            rel = self.relative(frame.filename)
            if rel is not None:
                return f"{rel}:{frame.lineno}"
        return None

    def of_error(self, exc: BaseException) -> str | None:
        """The user's innermost ``file:line`` in an error: AutoGraph's "in user code"
        frames (mapped back to the source), else the Python traceback's."""
        found = None
        for match in _FRAME.finditer(str(exc)):
            rel = self.relative(match["file"])
            if rel is not None:
                found = f"{rel}:{match['line']}"
        if found:
            return found
        tb = exc.__traceback__
        frames = []
        while tb is not None:
            frames.append(tb.tb_frame.f_code.co_filename)
            frames.append(tb.tb_lineno)
            tb = tb.tb_next
        for filename, line in reversed(list(zip(frames[::2], frames[1::2], strict=True))):
            rel = self.relative(filename)
            if rel is not None:
                return f"{rel}:{line}"
        return None


NOISE_LINES = (
    "in user code:",
    "\u2022",
    "Arguments received",
    "Call arguments received",
    "Exception encountered when calling",
)
"""Lines of AutoGraph's and Keras' error framing, not the error itself."""


def error_line(exc: BaseException) -> str:
    """The message of a TensorFlow error without AutoGraph's frame listing, Keras' call
    arguments or the failing op's whole NodeDef."""
    lines: list[str] = []
    skip_next = False
    for raw in _ANSI.sub("", str(exc)).splitlines():
        text = raw.strip()
        if skip_next:
            skip_next = False
            continue
        if text.startswith('File "'):
            skip_next = True  # the source line AutoGraph prints under a frame
            continue
        if text and not text.startswith(NOISE_LINES):
            lines.append(text)
    text = lines[-1] if lines else type(exc).__name__
    text = text.split(" for '{{node ", 1)[0]  # the op's whole NodeDef follows
    if not text.startswith(type(exc).__name__):
        text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 3] + "..."


class Arguments:
    """The probed call's arguments, rebuilt with some leaves replaced (by path)."""

    def __init__(self, python_function: Any, args: tuple[Any, ...], kwds: dict[str, Any]) -> None:
        import numpy as np
        import tensorflow as tf

        self.tf = tf
        self.np = np
        self.bound = inspect.signature(python_function).bind(*args, **kwds)

    def build(self, overrides: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        arguments = {
            name: self._map(name, value, overrides) for name, value in self.bound.arguments.items()
        }
        ba = self.bound.signature.bind_partial()
        ba.arguments.update(arguments)
        return ba.args, ba.kwargs

    def _map(self, path: str, value: Any, overrides: dict[str, Any]) -> Any:
        if path in overrides:
            return overrides[path]
        tf = self.tf
        if isinstance(value, (tf.Tensor, self.np.ndarray)):
            return tf.TensorSpec(value.shape, tf.as_dtype(value.dtype))
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            items = [
                self._map(f"{path}.{name}", item, overrides)
                for name, item in zip(value._fields, value, strict=True)
            ]
            return type(value)(*items)
        if type(value) in (tuple, list):
            return type(value)(self._map(f"{path}[{i}]", v, overrides) for i, v in enumerate(value))
        if type(value) is dict:
            return {k: self._map(f"{path}[{str(k)!r}]", v, overrides) for k, v in value.items()}
        return value

    def tensors(self) -> Iterator[tuple[str, Any]]:
        """``(path, value)`` of every tensor and NumPy array among the arguments."""
        for path, value in self._leaves():
            if isinstance(value, (self.tf.Tensor, self.np.ndarray)):
                yield path, value

    def leaf(self, path: str) -> Any:
        for candidate_path, value in self._leaves():
            if candidate_path == path:
                return value
        return None

    def _leaves(self) -> Iterator[tuple[str, Any]]:
        stack = list(self.bound.arguments.items())
        while stack:
            path, value = stack.pop()
            if isinstance(value, tuple) and hasattr(value, "_fields"):
                stack.extend((f"{path}.{n}", v) for n, v in zip(value._fields, value, strict=True))
            elif type(value) in (tuple, list):
                stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
            elif type(value) is dict:
                stack.extend((f"{path}[{str(k)!r}]", v) for k, v in value.items())
            else:
                yield path, value


class Round:
    """The probes of one round, traced one by one."""

    def __init__(self, job: ProbeJob, emit: Emit) -> None:
        import tensorflow as tf

        self.tf = tf
        self.job = job
        self.emit = emit
        fn = job.function
        self.python_function = fn.python_function
        self.options = {
            "autograph": getattr(fn, "_autograph", True),
            "jit_compile": getattr(fn, "_jit_compile", None),
            "experimental_autograph_options": getattr(fn, "_experimental_autograph_options", None),
        }
        self.arguments = Arguments(self.python_function, job.args, job.kwds)
        outer = {(f.filename, f.lineno) for f in traceback.extract_stack()}
        self.files = UserFiles(job.root, outer)
        self.traces = 0
        self.baseline: TraceResult | None = None
        self._noise: frozenset[str] | None = None
        self._moved: dict[tuple[str, str], TraceResult] = {}
        """Traces with one tensor argument at another dtype (``dtype_coupling``)."""

    def trace(self, overrides: dict[str, Any], with_numbers: bool = False) -> TraceResult:
        tf = self.tf
        args, kwargs = self.arguments.build(overrides)
        fresh = tf.function(self.python_function, **self.options)
        start = time.perf_counter()
        try:
            concrete = fresh.get_concrete_function(*args, **kwargs)
        except EagerOpInProbe:
            raise
        except Exception as exc:  # noqa: BLE001 - TensorFlow's verdict on the candidate
            return TraceResult(error=error_line(exc), where=self.files.of_error(exc))
        finally:
            self.traces += 1
            self.emit({"kind": "trace", "s": time.perf_counter() - start})
        graph_def = concrete.graph.as_graph_def()
        graph = canonical(graph_def)
        result = TraceResult(graph=graph, line_of=self._lines(concrete.graph))
        result.number_ops = number_ops(graph) if with_numbers else None
        result._concrete = concrete  # type: ignore[attr-defined]
        result._graph_def = graph_def  # type: ignore[attr-defined]
        return result

    def _lines(self, graph: Any) -> dict[str, str]:
        """Node key (as in ``graphs.canonical``) -> the user's innermost line creating it."""
        out: dict[str, str] = {}
        ids: dict[str, str] = {}
        library = {f.signature.name for f in graph.as_graph_def().library.function}
        queue: list[tuple[str, Any]] = [("", graph)]
        while queue:
            prefix, g = queue.pop(0)
            for op in g.get_operations():
                line = self.files.innermost(op.traceback)
                if line is not None:
                    out[prefix + op.name] = line
                for name in _function_names(op, library):
                    if name not in ids:
                        ids[name] = f"fn{len(ids)}"
                        holder = g._functions.get(name) or graph._functions.get(name)  # noqa: SLF001
                        nested = getattr(holder, "graph", None)
                        if nested is None:
                            nested = _nested_graph(g, name)
                        if nested is not None:
                            queue.append((f"{ids[name]}/", nested))
        return out

    # -- the round ----------------------------------------------------------------------
    def run(self) -> None:
        self.baseline = self.trace({}, with_numbers=bool(self.job.plan.numbers))
        if not self.baseline.ok:
            self.emit(
                {
                    "kind": "failure",
                    "text": f"the call's own shapes do not trace again: {self.baseline.error}",
                }
            )
            return
        assert self.baseline.graph is not None
        self.emit({"kind": "baseline", "ops": len(self.baseline.graph)})
        self.emit({"kind": "random", "evidence": asdict(self.random_evidence())})
        for group in self.job.plan.groups:
            self.emit({"kind": "dims", "group": group.label, "items": self.probe_group(group)})
        for number in self.job.plan.numbers:
            evidence = self.probe_number(number.param, number.type, number.value)
            if evidence["spec_matches"] and evidence["dtype"] in OTHER_DTYPES:
                evidence.update(self.dtype_coupling(number.param, evidence["dtype"]))
            self.emit({"kind": "number", "evidence": evidence})

    def noise(self) -> frozenset[str]:
        """Nodes that differ between two traces at the baseline's own shapes (counters in
        names or attributes), and constants whose value does (``random.random()`` or a
        clock read while tracing: nondeterministic, not a size): traced once per round,
        and only when a graph difference or a changed constant is about to make a
        verdict."""
        if self._noise is None:
            assert self.baseline is not None and self.baseline.graph is not None
            again = self.trace({})
            self._noise = (
                frozenset(differences(self.baseline.graph, again.graph))
                | frozenset(changed_constants([self.baseline.graph, again.graph]))
                if again.graph
                else frozenset()
            )
        return self._noise

    def verdict(self, size: int, varied: bool, results: dict[int | None, TraceResult]) -> Finding:
        assert self.baseline is not None
        finding = dim_verdict(size, varied, self.baseline, results)
        if finding.verdict == "read" and finding.reason.startswith(("the graph for", "constant")):
            finding = dim_verdict(size, varied, self.baseline, results, self.noise())
        return finding

    def probe_group(self, group: Group) -> list[dict[str, Any]]:
        sizes = alternate_sizes(group.size)
        results = self._probe_sizes(group, sizes)
        finding = self.verdict(group.size, group.varied, results)
        relaxed_ok = results[None].ok
        if finding.verdict == "free" or len(group.members) == 1:
            return [self._dim(m, group, sizes, finding, relaxed_ok) for m in group.members]
        out = []
        for member in group.members:
            alone_results = self._probe_sizes(Group([member]), sizes)
            alone = self.verdict(member.size, member.varied, alone_results)
            finding_alone = _alone(alone, finding, group)
            out.append(
                self._dim(
                    member, group, sizes, finding_alone, alone_results[None].ok, joint=finding
                )
            )
        return out

    def _probe_sizes(self, group: Group, sizes: list[int]) -> dict[int | None, TraceResult]:
        results: dict[int | None, TraceResult] = {}
        for size in (*sizes, None):
            results[size] = self.trace(self._resized(group, size))
        return results

    def _resized(self, group: Group, size: int | None) -> dict[str, Any]:
        tf = self.tf
        overrides: dict[str, Any] = {}
        for member in group.members:
            spec = overrides.get(member.param)
            if spec is None:
                leaf = self.arguments.leaf(member.param)
                shape, dtype = list(leaf.shape), tf.as_dtype(leaf.dtype)
            else:
                shape, dtype = list(spec.shape), spec.dtype
            shape[member.dim] = size
            overrides[member.param] = tf.TensorSpec(shape, dtype)
        return overrides

    def _dim(
        self,
        member: Any,
        group: Group,
        sizes: list[int],
        finding: Finding,
        relaxed_ok: bool,
        joint: Finding | None = None,
    ) -> dict[str, Any]:
        tied = [m.label for m in group.members if m != member]
        reason = finding.reason
        if joint is not None:
            reason += f" (probed alone; with {', '.join(tied)}: {joint.verdict}, {joint.reason})"
        evidence = DimEvidence(
            param=member.param,
            dim=member.dim,
            verdict=finding.verdict,
            size=member.size,
            varied=member.varied,
            probed=[*sizes, None],
            tied=tied,
            reason=reason,
            error=finding.error,
            where=finding.where,
            relaxed_builds=relaxed_ok,
        )
        return asdict(evidence)

    def probe_number(self, param: str, kind: str, value: int | float) -> dict[str, Any]:
        """Scalar specs tried until the graph is explained: the dtype of a constant that
        holds the value first, then the others in order until one reproduces the graph
        and another was tried too (two that both reproduce it: the graph does not use
        the number; a value that merely equals another constant is not mistaken)."""
        tf = self.tf
        assert self.baseline is not None and self.baseline.number_ops is not None
        graph_def = self.baseline._graph_def  # type: ignore[attr-defined]
        in_constants = constants_holding(graph_def, value, tf.make_ndarray)
        dtypes = NUMBER_DTYPES[kind]
        order = [d for d in in_constants if d in dtypes or d in CONSTANT_DTYPES] + [
            d for d in dtypes if d not in in_constants
        ]
        results: dict[str, TraceResult] = {}
        matches = []
        for dtype in order:
            result = self.trace({param: tf.TensorSpec([], dtype)}, with_numbers=True)
            results[dtype] = result
            if result.ok and result.number_ops == self.baseline.number_ops:
                matches.append(dtype)
            if matches and len(results) >= 2:
                break  # one dtype reproduces the graph and another was tried: decided
        evidence = number_verdict(param, kind, self.baseline, results, in_constants)
        if kind == "int" and evidence.spec_matches and evidence.dtype in ("int32", "int64"):
            target = cast_target(graph_def, value, tf.make_ndarray, lambda e: tf.as_dtype(e).name)
            if target is not None and target in FLOAT_DTYPES:
                candidate = results.get(target) or self.trace(
                    {param: tf.TensorSpec([], target)}, with_numbers=True
                )
                evidence = cast_only_verdict(evidence, target, self.baseline, candidate)
        return asdict(evidence)

    def dtype_coupling(self, param: str, dtype: str) -> dict[str, Any]:
        """Whether Python number ``param`` (a ``dtype`` constant in the original graph)
        follows the dtype of a tensor argument of that dtype: each such argument is traced
        at the other dtypes of ``OTHER_DTYPES`` (the number left a Python value), then
        again with the number a ``dtype`` scalar spec. Weakly typed, a number meeting the
        argument takes its new dtype, and the spec then fails to trace or changes the
        graph; one that meets something else (a variable, a Keras output) keeps
        ``dtype`` here, which shows only that it does not follow the argument: what it
        meets may have another dtype in another instance or under a Keras dtype policy.
        A dtype the original itself does not trace proves nothing either way (the
        variable it meets may be another instance's, created on the first call) and is
        not counted."""
        tf = self.tf
        follows: list[str] = []
        kept: list[str] = []
        lines: list[str] = []
        for path, value in sorted(self.arguments.tensors(), key=lambda item: item[0]):
            if path == param or tf.as_dtype(value.dtype).name != dtype:
                continue
            traced = False
            for other in OTHER_DTYPES[dtype]:
                moved = {path: tf.TensorSpec(value.shape, other)}
                key = (path, other)  # shared by every number of the round
                if key not in self._moved:
                    self._moved[key] = self.trace(moved, with_numbers=True)
                base = self._moved[key]
                if not base.ok:
                    lines.append(f"`{path}` as {other}: the original does not trace it")
                    continue
                traced = True
                spec = self.trace({**moved, param: tf.TensorSpec([], dtype)}, with_numbers=True)
                assert base.number_ops is not None
                same = spec.number_ops is not None and not number_difference(
                    base.number_ops, spec.number_ops
                )
                if same:
                    lines.append(f"`{path}` as {other}: `{param}` stays {dtype}")
                else:
                    lines.append(f"`{path}` as {other}: `{param}` follows it to {other}")
                    follows.append(path)
                    break
            else:
                if traced:  # a dtype the original rejects here may be another instance's
                    kept.append(path)
        return {"follows": follows, "kept_with": kept, "dtype_probes": lines}

    def random_evidence(self) -> RandomEvidence:
        from autosig.profile.random_ops import random_ops_in

        assert self.baseline is not None
        steady = self.baseline._concrete.graph  # type: ignore[attr-defined]
        hidden = sorted(random_ops_in(steady, ("hidden",)))
        generator = sorted(random_ops_in(steady, ("variable",)))
        first_only: list[str] = []
        if self.job.first_round:
            try:
                traced = list(self.job.function._list_all_concrete_functions())  # noqa: SLF001
            except Exception:  # noqa: BLE001 - private API: no first-call evidence then
                traced = []
            if traced:
                first = random_ops_in(traced[0].graph)
                later = set().union(*(random_ops_in(cf.graph) for cf in traced[1:]))
                first_only = sorted(first - later - set(hidden) - set(generator))
        return RandomEvidence(hidden=hidden, generator=generator, first_call_only=first_only)


def _alone(alone: Finding, joint: Finding, group: Group) -> Finding:
    """A tied dimension's own verdict, as far as it holds with its ties.

    Other sizes failing when it moves alone say it is tied, not fixed by the code; a
    varied dimension free alone but not with the dimensions that vary with it is not
    free in the calls the program makes."""
    if alone.verdict == "fixed" and joint.verdict != "fixed":
        return Finding(
            "read",
            "other sizes fail when it moves alone: it is tied to the dimensions probed with it",
            alone.error,
            alone.where,
        )
    if alone.verdict == "free" and group.varied and joint.verdict != "free":
        return Finding(
            "read",
            "free alone, but not together with the dimensions that vary with it",
            joint.error,
            joint.where,
        )
    return alone


def _function_names(op: Any, library: set[str]) -> list[str]:
    names = []
    if op.type in library:
        names.append(op.type)
    attrs = op.node_def.attr
    for key in sorted(attrs):  # the order graphs.canonical numbers functions in
        attr = attrs[key]
        if attr.WhichOneof("value") == "func" and attr.func.name in library:
            names.append(attr.func.name)
        elif attr.WhichOneof("value") == "list":
            names.extend(f.name for f in attr.list.func if f.name in library)
    return names


def _nested_graph(graph: Any, name: str) -> Any:
    getter: Callable[[str], Any] | None = getattr(graph, "_get_function", None)
    if getter is None:
        return None
    try:
        return getattr(getter(name), "graph", None)
    except Exception:  # noqa: BLE001
        return None


def run_round(job: ProbeJob, emit: Emit) -> None:
    """The copy's work: one round (see the module docstring)."""
    round_ = Round(job, emit)
    try:
        round_.run()
    except EagerOpInProbe as exc:
        emit({"kind": "failure", "text": str(exc)})
