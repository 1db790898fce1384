"""The runtime recorder: sees every tf.function call and what TensorFlow did with it.

It patches the class behind ``tf.function`` (``polymorphic_function.Function.__call__``)
so every form is seen: decorator, call form, per-instance bound methods, Keras' own
``train_function``. Trace counts come from TensorFlow itself (the function's tracing
count before and after each call). Trace time is measured for real: TensorFlow builds
each graph in ``tracing_compilation._create_concrete_function``, which the recorder
times and charges to the innermost tf.function call in progress on that thread (so a
function's trace time includes the tracing of tf.functions it calls).

Per call the cost is kept near constant: a flat ``cheap_key`` of the arguments (types,
tensor shapes and dtypes, Python values; never object identity) that was seen before
names the signature directly, and a call that neither traces nor is sampled does a
few counter updates after it returns. Arguments are described in full (bound to
parameter names, tokenized, matched) only for a new key or an argument that has no
cheap key (objects, NumPy arrays, ragged and symbolic tensors).

Probe traces (``autosig/profile/probe/``) add nothing to a call that does not trace:
after a call that traced, ``Prober.on_trace`` notes its Python numbers' values and, when
the function has retraced and brought new candidates, runs a probe round in a forked
copy of the process (its own time budget; the call returns when the round ends).

TensorFlow is never imported here: the patch is applied when TensorFlow's
``polymorphic_function`` module is imported (an import hook) or at once if it already
is. One recorder is active per process.

One module, because it is the code that runs inside the user's processes on every call:
the patched call path, the per-call key cache, the trace-time hook and the writer share
thread-local state and must load as a single import (the recorder's start-up and per-
call cost are measured by scripts/bench_profile_overhead.py).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.abc
import inspect
import os
import signal
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.profile.call_sites import CallerFinder, SiteKey, package_dirs, resolve_site
from autosig.profile.describe import Binder, Describer, ScalarFolder, TFTypes
from autosig.profile.format import (
    MAX_CALL_SITES,
    MAX_SIGNATURES,
    MAX_TRACE_EVENTS,
    CallSignature,
    CallSite,
    FunctionRecord,
    Profile,
    Sample,
    TraceEvent,
    check_writable,
    samples_path,
    save_profile,
)
from autosig.profile.probe.isolation import forking_probe
from autosig.profile.probe.scheduler import STOP_MARKER, Prober, budget_from_env
from autosig.profile.samples import LeafConverter, SampleStore, Unsampleable, save_arrays
from autosig.source.hashing import function_source_hash

POLY_MODULE = "tensorflow.python.eager.polymorphic_function.polymorphic_function"
TRACING_MODULE = "tensorflow.python.eager.polymorphic_function.tracing_compilation"

ENV_PROFILE_DIR = "AUTOSIG_PROFILE_DIR"
"""Set by ``autosig profile``: every recorded process writes a partial profile here."""
ENV_PROJECT_ROOT = "AUTOSIG_PROJECT_ROOT"
ENV_CAPTURE_OUTPUTS = "AUTOSIG_CAPTURE_OUTPUTS"
ENV_SAMPLE_CALLS = "AUTOSIG_SAMPLE_CALLS"
ENV_SAMPLES_PER_SIGNATURE = "AUTOSIG_SAMPLES_PER_SIGNATURE"

DEFAULT_SAMPLES_PER_SIGNATURE = 2
DEFAULT_SAMPLE_CALLS = 64
MAX_DROPPED_KEYS = 100_000
MAX_TRACKED_OBJECTS = 10_000
"""Live objects whose identity is tracked per parameter; beyond, new ones are only counted."""

MAX_CHEAP_KEYS = 4096
"""Cheap call keys remembered per function; past this, new keys take the full path."""
CHEAP_ITEMS = 32
"""Containers longer than this (or nested deeper than CHEAP_DEPTH) have no cheap key."""
CHEAP_DEPTH = 4
_CHEAP_SCALARS = frozenset({int, float, bool, str, bytes, type(None)})

INSTANCE_ATTR = "_autosig_recorder_instance"
BUDGET_FROM_ENV = -1.0
"""``Recorder(probe_budget=...)`` default: ``$AUTOSIG_PROBE_BUDGET`` or the default budget."""
_ACTIVE: Recorder | None = None
_TLS = threading.local()
_perf_counter = time.perf_counter
_getframe = sys._getframe
_NO_OBJECTS: list[str] = []
"""new_objects of a constant-time call: none (never appended to)."""


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _env_int(name: str, default: int) -> int:
    try:
        return max(0, int(os.environ[name]))
    except (KeyError, ValueError):
        return default


# -- identifying the Python function behind a tf.function ------------------------------


def _unwrap(fn: Any) -> tuple[Any, bool]:
    """The plain function (with ``__code__``) behind TF's and functools' wrappers."""
    bound = False
    for _ in range(64):
        if isinstance(fn, types.MethodType):
            bound = True
            fn = fn.__func__
            continue
        if isinstance(fn, functools.partial):
            fn = fn.func
            continue
        # TensorFlow's decorators keep the user's function as __original_wrapped__ even
        # after AutoGraph swapped a converted one into __wrapped__.
        wrapped = getattr(fn, "__original_wrapped__", None) or getattr(fn, "__wrapped__", None)
        if wrapped is not None and wrapped is not fn:
            fn = wrapped
            continue
        break
    return fn, bound


def _def_line(fn: Any) -> tuple[int, str | None]:
    """Line of the ``def`` keyword (decorators skipped) and the source hash."""
    code = fn.__code__
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return code.co_firstlineno, None
    line = code.co_firstlineno
    if fn.__name__ != "<lambda>":
        for index, text in enumerate(lines):
            if text.lstrip().startswith(("def ", "async def ")):
                line = start + index
                break
    return line, function_source_hash(lines)


def _site_path(filename: str, root: Path) -> tuple[str | None, bool]:
    """(path relative to the project root or absolute, editable?)."""
    if not filename or filename.startswith("<"):
        return None, False
    path = Path(filename).resolve()
    library = any(part in ("site-packages", "dist-packages") for part in path.parts)
    try:
        return path.relative_to(root).as_posix(), not library
    except ValueError:
        return path.as_posix(), False


class _Identity:
    """Distinct objects seen for one parameter, without keeping them alive."""

    __slots__ = ("live", "count", "__weakref__")

    def __init__(self) -> None:
        self.live: dict[int, Any] = {}
        self.count = 0

    def is_new(self, obj: Any) -> bool:
        key = id(obj)
        ref = self.live.get(key)
        if ref is not None and (ref is True or ref() is obj):
            return False
        self.count += 1
        if len(self.live) < MAX_TRACKED_OBJECTS:
            try:
                owner = weakref.ref(self)
                self.live[key] = weakref.ref(obj, lambda _r, k=key: _forget(owner, k))
            except TypeError:
                self.live[key] = True  # not weak-referenceable: identity by id only
        return True


def _cheap_parts(x: Any, out: list[Any], eager: type, depth: int) -> bool:
    """Append a flat, exact description of ``x`` to ``out``; False if there is none cheaply.

    Each leaf starts with its type, which fixes how many entries follow, so two
    different argument structures never give the same list. Eager tensors give their
    shape and dtype enum (what their token holds), Python scalars their value; anything
    else (objects, symbolic tensors, ragged, NumPy ...) has no cheap key.
    """
    t = type(x)
    if t is eager:
        out.append(t)
        out.append(x._shape_tuple())
        out.append(x._datatype_enum())
        return True
    if t in _CHEAP_SCALARS:
        out.append(t)
        out.append(x)
        return True
    if depth >= CHEAP_DEPTH:
        return False
    if t is tuple or t is list:
        if len(x) > CHEAP_ITEMS:
            return False
        out.append(t)
        out.append(len(x))
        for item in x:
            if not _cheap_parts(item, out, eager, depth + 1):
                return False
        return True
    if t is dict:
        if len(x) > CHEAP_ITEMS:
            return False
        out.append(t)
        out.append(len(x))
        for key, item in x.items():
            out.append(type(key))
            out.append(key)
            if not _cheap_parts(item, out, eager, depth + 1):
                return False
        return True
    return False


def cheap_key(args: tuple[Any, ...], kwds: dict[str, Any], eager: type) -> tuple[Any, ...] | None:
    """A hashable key that determines a call's signature, or None (then: the full path).

    Equal keys mean equal argument tokens and the same way of passing them, so a key
    seen before maps to the signature its first call got, without describing anything.
    Every leaf is hashable (tensor shapes are tuples, dict keys are hashable), so the key
    is too. Top-level tensors and scalars, the common case, skip the recursive helper.
    """
    out: list[Any] = [len(args), tuple(kwds) if kwds else ()]
    append = out.append
    for values in (args, kwds.values()) if kwds else (args,):
        for value in values:
            t = type(value)
            if t is eager:
                append(t)
                append(value._shape_tuple())
                append(value._datatype_enum())
            elif t in _CHEAP_SCALARS:
                append(t)
                append(value)
            elif not _cheap_parts(value, out, eager, 0):
                return None
    return tuple(out)


def _new_site(state: _FunctionState, site: SiteKey, args: tuple[Any, ...], kwds: dict) -> None:
    """Remember a call site on its first call (with how it passes arguments), or count
    the call as dropped once MAX_CALL_SITES are known."""
    if len(state.sites) >= MAX_CALL_SITES:
        state.sites_dropped += 1
    else:
        state.sites[site] = [1, len(args), tuple(kwds)]


def _forget(owner: weakref.ref[_Identity], key: int) -> None:
    identity = owner()
    if identity is not None:
        identity.live.pop(key, None)


class _FunctionState:
    """Recording state of one Python function (all its tf.function objects merged)."""

    def __init__(self, record: FunctionRecord, binder: Binder) -> None:
        self.record = record
        self.binder = binder
        self.sig_index: dict[Any, int | None] = {}
        self.cheap_sigs: dict[tuple[Any, ...], int] = {}
        """``cheap_key`` -> signature index, for calls that describe nothing new."""
        self.dropped: set[int] = set()
        self.folder = ScalarFolder()
        self.identities: dict[str, _Identity] = {}
        self.sample_counts: list[int] = []
        self.instances = 0
        self.sites: dict[SiteKey, list[Any]] = {}
        """Call site -> [eager calls, positional arguments, keyword names] (its first call)."""
        self.sites_dropped = 0


class _Instance:
    """One tf.function object (a method's per-object function is its own instance)."""

    __slots__ = ("state", "ordinal", "last_count", "owner", "epoch")

    def __init__(self, state: _FunctionState | None, ordinal: int, last_count: int) -> None:
        self.state = state
        self.ordinal = ordinal
        self.last_count = last_count
        self.owner = 0
        self.epoch: object = None


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Applies the patch right after TensorFlow defines its Function class."""

    def __init__(self, callback: Callable[[types.ModuleType], None]) -> None:
        self.callback = callback

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != POLY_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return None
        callback = self.callback

        def exec_and_patch(module: types.ModuleType) -> None:
            exec_module(module)
            callback(module)

        loader.exec_module = exec_and_patch  # type: ignore[union-attr]
        return spec


class Recorder:
    """Collects FunctionRecords while active; ``profile()`` / ``write()`` produce the file."""

    def __init__(
        self,
        output: Path | str,
        *,
        project_root: Path | str | None = None,
        capture_outputs: bool = False,
        samples_per_signature: int = DEFAULT_SAMPLES_PER_SIGNATURE,
        sample_calls: int = DEFAULT_SAMPLE_CALLS,
        probe_budget: float | None = BUDGET_FROM_ENV,
        count_earlier_traces: bool = True,
    ) -> None:
        self.output = Path(output)
        self.count_earlier_traces = count_earlier_traces
        """Traces a function made before its first recorded call are its own (a seeding
        ``get_concrete_function`` after set-up); False for a recorder started in the middle
        of a program (``expect_traces``' own block), where they belong to code before it."""
        self.root = Path(project_root or os.environ.get(ENV_PROJECT_ROOT) or os.getcwd()).resolve()
        self.probe_budget = budget_from_env() if probe_budget == BUDGET_FROM_ENV else probe_budget
        """Seconds of probe traces in this process (0: none; None: no limit)."""
        self.capture_outputs = capture_outputs
        self.samples_per_signature = samples_per_signature
        self.sample_calls = sample_calls if capture_outputs else 0
        self.lock = threading.RLock()
        self._reset()
        self._hook: _PatchOnImport | None = None
        self._originals: list[tuple[Any, str, Any]] = []
        self._written = False
        self._tensorflow_seen = False
        self.tf_version: str | None = None

    def _reset(self) -> None:
        self.by_code: dict[Any, _FunctionState] = {}
        self.by_key: dict[tuple[str | None, str, int], _FunctionState] = {}
        self.order: list[_FunctionState] = []
        self.instances: weakref.WeakKeyDictionary[Any, _Instance] = weakref.WeakKeyDictionary()
        self.store = SampleStore()
        self._epoch = object()
        """Identifies this recording (a forked child starts a new one)."""
        self._types: TFTypes | None = None
        self._describer: Describer | None = None
        self._converter: LeafConverter | None = None
        self._callers: CallerFinder | None = None
        parts = os.environ.get(ENV_PROFILE_DIR)
        self._prober = Prober(
            self.probe_budget,
            str(self.root),
            in_child=_stop_in_probe_copy,
            stop_marker=Path(parts) / STOP_MARKER if parts else None,
        )

    # -- activation ----------------------------------------------------------------------
    def start(self) -> Recorder:
        global _ACTIVE
        if _ACTIVE is not None:
            raise AutosigError("an autosig recording is already active in this process")
        _ACTIVE = self
        module = sys.modules.get(POLY_MODULE)
        if module is not None and hasattr(module, "Function"):
            self._patch(module)
        else:
            self._hook = _PatchOnImport(self._patch)
            sys.meta_path.insert(0, self._hook)
        return self

    def stop(self) -> None:
        global _ACTIVE
        if self._hook is not None:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(self._hook)
            self._hook = None
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        self._originals.clear()
        for fn in list(self.instances.keys()):
            with contextlib.suppress(AttributeError, TypeError):
                fn.__dict__.pop(INSTANCE_ATTR, None)
        if _ACTIVE is self:
            _ACTIVE = None

    @property
    def tensorflow_loaded(self) -> bool:
        return self._tensorflow_seen

    def _patch(self, module: types.ModuleType) -> None:
        if self._hook is not None:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(self._hook)
            self._hook = None
        if self._originals:
            return
        function_class = module.Function
        original_call = function_class.__dict__["__call__"]
        recorder = self

        @functools.wraps(original_call)
        def __call__(fn_self: Any, *args: Any, **kwds: Any) -> Any:
            if _ACTIVE is not recorder:
                return original_call(fn_self, *args, **kwds)
            return recorder._on_call(original_call, fn_self, args, kwds)

        self._tensorflow_seen = True
        self._originals.append((function_class, "__call__", original_call))
        function_class.__call__ = __call__
        tracing = sys.modules.get(TRACING_MODULE)
        if tracing is None:
            tracing = importlib.import_module(TRACING_MODULE)
        create = getattr(tracing, "_create_concrete_function", None)
        if create is not None:

            @functools.wraps(create)
            def timed_create(*a: Any, **k: Any) -> Any:
                start = time.perf_counter()
                try:
                    return create(*a, **k)
                finally:
                    stack = getattr(_TLS, "stack", None)
                    if stack:
                        stack[-1].append(time.perf_counter() - start)

            self._originals.append((tracing, "_create_concrete_function", create))
            tracing._create_concrete_function = timed_create
        self._install_process_hooks()

    def _install_process_hooks(self) -> None:
        """After a fork the child records its own calls into its own partial file."""
        if os.environ.get(ENV_PROFILE_DIR) is None or getattr(self, "_forks_hooked", False):
            return
        self._forks_hooked = True
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._after_fork)
        try:
            import multiprocessing.util as mp_util
        except ImportError:  # pragma: no cover
            return

        def register_finalizer(recorder: Recorder) -> None:
            mp_util.Finalize(None, recorder.write_partial, exitpriority=100)

        mp_util.register_after_fork(self, register_finalizer)

    def _after_fork(self) -> None:
        if _ACTIVE is not self or forking_probe():
            return
        self.lock = threading.RLock()
        self._reset()
        self._written = False
        self.output = partial_path(Path(os.environ[ENV_PROFILE_DIR]))

    # -- the hot path --------------------------------------------------------------------
    def _load_types(self) -> None:
        self._types = TFTypes.load()
        self._describer = Describer(self._types)
        self._converter = LeafConverter(self._types, self.store)
        self._eager = self._types.eager
        self._callers = CallerFinder(package_dirs(("tensorflow", "autosig")))
        self._external_codes = self._callers.external
        tf = sys.modules.get("tensorflow")
        self.tf_version = getattr(tf, "__version__", None)
        from tensorflow.python.eager import context

        self._executing_eagerly = context.executing_eagerly

    def _instance(self, fn_self: Any) -> _Instance:
        # Fast path: the state hangs on the function object itself (checked against its
        # id, so a copy of the object is not mistaken for the original).
        inst = fn_self.__dict__.get(INSTANCE_ATTR)
        if inst is not None and inst.owner == id(fn_self) and inst.epoch is self._epoch:
            return inst
        fresh = INSTANCE_ATTR not in fn_self.__dict__
        with self.lock:
            if self._types is None:
                self._load_types()
            state = self._identify(fn_self)
            if state is not None:
                state.instances += 1
                state.record.instances = state.instances
            count = fn_self.experimental_get_tracing_count()
            if state is not None and fresh and count and self.count_earlier_traces:
                # traced before its first call (a seeding get_concrete_function): those
                # traces are the function's too (verify compares trace counts)
                state.record.traces += count
            inst = _Instance(state, state.instances - 1 if state else 0, count)
            inst.owner = id(fn_self)
            inst.epoch = self._epoch
            with contextlib.suppress(TypeError):
                self.instances[fn_self] = inst
            with contextlib.suppress(AttributeError, TypeError):
                fn_self.__dict__[INSTANCE_ATTR] = inst
            return inst

    def _identify(self, fn_self: Any) -> _FunctionState | None:
        python_function = getattr(fn_self, "_python_function", None)
        target, bound = _unwrap(python_function)
        code = getattr(target, "__code__", None)
        if code is None:
            return None
        state = self.by_code.get(code)
        if state is not None:
            return state
        line, sha = _def_line(target)
        path, editable = _site_path(code.co_filename, self.root)
        qualname = getattr(target, "__qualname__", target.__name__)
        key = (path, qualname, line)
        state = self.by_key.get(key)
        if state is None:
            parts = qualname.split(".")
            is_method = bound or (len(parts) > 1 and parts[-2] != "<locals>")
            binder = Binder(python_function)
            assert self._describer is not None
            record = FunctionRecord(
                path=path,
                qualname=qualname,
                line=line,
                source_sha256=sha,
                editable=editable,
                params=binder.param_infos(self._describer),
                is_method=is_method,
                instances=0,
                decorator_options={
                    "input_signature": getattr(fn_self, "input_signature", None) is not None,
                    "reduce_retracing": bool(getattr(fn_self, "_reduce_retracing", False)),
                    "jit_compile": getattr(fn_self, "_jit_compile", None),
                    "autograph": bool(getattr(fn_self, "_autograph", True)),
                },
            )
            state = _FunctionState(record, binder)
            self.by_key[key] = state
            self.order.append(state)
        self.by_code[code] = state
        return state

    def _on_call(self, original: Any, fn_self: Any, args: tuple[Any, ...], kwds: dict) -> Any:
        try:
            inst = fn_self.__dict__.get(INSTANCE_ATTR)  # _instance's fast path, inlined
            if inst is None or inst.owner != id(fn_self) or inst.epoch is not self._epoch:
                inst = self._instance(fn_self)
            state = inst.state
            if state is None:
                return original(fn_self, *args, **kwds)
            before = fn_self.experimental_get_tracing_count()
            eager = self._executing_eagerly()
            cheap = cheap_key(args, kwds, self._eager) if eager else None
            site = None
            if eager:
                # frame 0 is this method, 1 the patched Function.__call__, 2 its caller
                frame = _getframe(2)
                ident = id(frame.f_code)
                if ident in self._external_codes:
                    site = (ident, frame.f_lasti)
                else:
                    site = self._callers.key(frame)  # type: ignore[union-attr]
            with self.lock:
                if site is not None:
                    counts = state.sites.get(site)
                    if counts is None:
                        _new_site(state, site, args, kwds)
                    else:
                        counts[0] += 1
                record = state.record
                call = record.calls
                known = state.cheap_sigs.get(cheap) if cheap is not None else None
                if (
                    known is not None
                    and before == inst.last_count
                    and call >= self.sample_calls
                    and state.sample_counts[known] >= self.samples_per_signature
                ):
                    # Constant-time path: a known cheap key names the signature, and
                    # no sample is wanted (see _before_call for the full path).
                    record.calls = call + 1
                    record.signatures[known].calls += 1
                    sig, new_objects, sample = known, _NO_OBJECTS, None
                else:
                    call, sig, new_objects, sample = self._before_call(
                        state, inst, before, args, kwds, eager, cheap
                    )
        except Exception as exc:  # noqa: BLE001 - a recorder bug must never break the call
            self._internal_error(exc)
            return original(fn_self, *args, **kwds)
        timings: list[float] = []
        stack = getattr(_TLS, "stack", None)
        if stack is None:
            stack = _TLS.stack = []
        stack.append(timings)
        start = _perf_counter()
        result: Any = None
        raised = True
        try:
            result = original(fn_self, *args, **kwds)
            raised = False
            return result
        finally:
            elapsed = _perf_counter() - start
            stack.pop()
            try:
                after = fn_self.experimental_get_tracing_count()
                if after == before and sample is None:
                    # Constant-time path: no trace, nothing to store (see _after_call).
                    with self.lock:
                        state.record.call_time_s += elapsed
                        inst.last_count = after
                else:
                    with self.lock:
                        self._after_call(
                            state,
                            inst,
                            call,
                            sig,
                            new_objects,
                            sample,
                            before,
                            after,
                            elapsed,
                            timings,
                            result,
                            raised,
                        )
                    if after > before and eager and not raised and self._prober.enabled:
                        self._prober.on_trace(
                            state, state.record, state.binder, fn_self, args, kwds, sig
                        )
            except Exception as exc:  # noqa: BLE001
                self._internal_error(exc)

    # -- what budgets read (autosig/explain/budget.py) -------------------------------------
    def trace_event_counts(self) -> dict[tuple[str | None, str, int], int]:
        """Trace events recorded so far per function (``FunctionRecord.key``): events
        appended after a snapshot of this are the traces made since."""
        with self.lock:
            return {state.record.key: len(state.record.trace_events) for state in self.order}

    def function_of(self, fn: Any) -> tuple[FunctionRecord, int] | None:
        """The record of a tf.function object this recorder saw called, and which of
        that function's objects it is (``TraceEvent.instance``); None if never called."""
        inst = getattr(fn, "__dict__", {}).get(INSTANCE_ATTR)
        if inst is None or inst.owner != id(fn) or inst.epoch is not self._epoch:
            inst = self.instances.get(fn) if _weakrefable(fn) else None
        if inst is None or inst.state is None:
            return None
        return inst.state.record, inst.ordinal

    def _internal_error(self, exc: Exception) -> None:
        """Say once that recording is incomplete; the user's program carries on."""
        if not getattr(self, "_warned", False):
            self._warned = True
            print(
                f"autosig: warning: recording error, the profile may be incomplete: {exc!r}",
                file=sys.stderr,
            )

    def _before_call(
        self,
        state: _FunctionState,
        inst: _Instance,
        before: int,
        args: tuple[Any, ...],
        kwds: dict,
        eager: bool,
        cheap: tuple[Any, ...] | None = None,
    ) -> tuple[int, int | None, list[str], Sample | None]:
        """The full path: bind and describe the arguments, find or add the signature.

        ``cheap`` (``cheap_key`` of the call, None if it has none) is remembered for the
        signature found, so the next call with that key takes ``_on_call``'s
        constant-time path.
        """
        record = state.record
        call = record.calls
        record.calls += 1
        if not eager:
            record.graph_calls += 1
        if before > inst.last_count:  # traced outside a call (get_concrete_function, ...)
            record.traces += before - inst.last_count
        if cheap is not None:
            known = state.cheap_sigs.get(cheap)
            if known is not None and not self._wants_sample(state, known, call):
                record.signatures[known].calls += 1
                return call, known, [], None
        try:
            bound, passed = state.binder.bind(args, kwds)
        except TypeError:
            return call, None, [], None
        objects: list[tuple[str, Any]] = []
        describer = self._describer
        assert describer is not None
        token, folder = describer.token, state.folder
        folded = len(folder.folded)
        tokens = tuple([token(v, name, folder, objects) for name, v in bound])
        if len(folder.folded) != folded:  # values now fold to "varied": old keys are wrong
            state.cheap_sigs.clear()
        key = (tokens, passed)
        try:
            sig = state.sig_index.get(key, -1)
        except TypeError:  # an unhashable TypeSpec deep inside
            sig = None
            key = None
        if sig == -1:
            sig = self._new_signature(state, key, bound, tokens, passed, call)
        if sig is not None:
            record.signatures[sig].calls += 1
            if cheap is not None and not objects and len(state.cheap_sigs) < MAX_CHEAP_KEYS:
                state.cheap_sigs[cheap] = sig
        new_objects: list[str] = []
        for name, obj in objects:
            identity = state.identities.get(name)
            if identity is None:
                identity = state.identities[name] = _Identity()
            if identity.is_new(obj) and name not in new_objects:
                new_objects.append(name)
            record.object_instances[name] = identity.count
        sample = None
        if eager and self._wants_sample(state, sig, call):
            sample = self._sample_inputs(sig, call, bound)
        return call, sig, new_objects, sample

    def _new_signature(
        self,
        state: _FunctionState,
        key: Any,
        bound: list[tuple[str, Any]],
        tokens: tuple[Any, ...],
        passed: tuple[str, ...],
        call: int,
    ) -> int | None:
        record = state.record
        if len(record.signatures) >= MAX_SIGNATURES:
            digest = hash(key)
            if digest not in state.dropped:
                record.signatures_dropped += 1
                if len(state.dropped) < MAX_DROPPED_KEYS:
                    state.dropped.add(digest)
            return None
        describer = self._describer
        assert describer is not None
        names = [name for name, _ in bound]
        record.signatures.append(
            CallSignature(
                args={n: describer.value(t) for n, t in zip(names, tokens, strict=True)},
                passed=dict(zip(names, passed, strict=True)),
                calls=0,
                first_call=call,
                traces=0,
            )
        )
        state.sample_counts.append(0)
        index = len(record.signatures) - 1
        state.sig_index[key] = index
        return index

    def _wants_sample(self, state: _FunctionState, sig: int | None, call: int) -> bool:
        if call < self.sample_calls:
            return True
        return sig is not None and state.sample_counts[sig] < self.samples_per_signature

    def _sample_inputs(
        self, sig: int | None, call: int, bound: list[tuple[str, Any]]
    ) -> Sample | None:
        assert self._converter is not None
        pending: dict[str, Any] = {}
        try:
            args = {name: self._converter.convert(v, pending) for name, v in bound}
        except Unsampleable:
            self.store.skipped += 1
            return None
        except Exception:  # noqa: BLE001 - reading a value must never break the user's call
            self.store.skipped += 1
            return None
        sample = Sample(signature=-1 if sig is None else sig, call=call, args=args)
        sample._pending = pending  # type: ignore[attr-defined]
        return sample

    def _after_call(
        self,
        state: _FunctionState,
        inst: _Instance,
        call: int,
        sig: int | None,
        new_objects: list[str],
        sample: Sample | None,
        before: int,
        after: int,
        elapsed: float,
        timings: list[float],
        result: Any,
        raised: bool,
    ) -> None:
        record = state.record
        record.call_time_s += elapsed
        traced = max(0, after - before)
        inst.last_count = after
        if traced:
            record.traces += traced
            if sig is not None:
                record.signatures[sig].traces += traced
            total = sum(timings) if timings else elapsed
            record.trace_time_s += total
            per_trace = timings if len(timings) == traced else [total / traced] * traced
            for index in range(traced):
                if len(record.trace_events) >= MAX_TRACE_EVENTS:
                    break
                record.trace_events.append(
                    TraceEvent(
                        call=call,
                        signature=sig,
                        new_objects=list(new_objects) if index == 0 else [],
                        time_s=per_trace[index],
                        instance=inst.ordinal,
                    )
                )
        if sample is not None:
            pending = sample.__dict__.pop("_pending")
            if self.capture_outputs and not raised:
                try:
                    assert self._converter is not None
                    sample.outputs = self._converter.convert(result, pending)
                except Exception:  # noqa: BLE001 - outputs we cannot store are left out
                    self.store.skipped += 1
                    return
            if self.store.commit(pending):
                record.samples.append(sample)
                if sig is not None:
                    state.sample_counts[sig] += 1

    # -- output ----------------------------------------------------------------------------
    def profile(self) -> Profile:
        with self.lock:
            for inst_fn, inst in list(self.instances.items()):
                if inst.state is None:
                    continue
                with contextlib.suppress(Exception):
                    count = inst_fn.experimental_get_tracing_count()
                    if count > inst.last_count:
                        inst.state.record.traces += count - inst.last_count
                        inst.last_count = count
            for state in self.order:
                state.record.call_sites = self._call_sites(state)
                state.record.call_sites_dropped = state.sites_dropped
                state.record.probe = self._prober.evidence(state)
            functions = [state.record for state in self.order]
            return Profile(
                functions=list(functions),
                project_root=str(self.root),
                tensorflow_version=self.tf_version,
                runs=1,
                command=list(sys.argv),
                exit_code=None,
                samples_file=None,
                probes=self._prober.final_stats(),
            )

    def _call_sites(self, state: _FunctionState) -> list[CallSite]:
        """The sites of ``state``'s eager calls, in order of their first call."""
        out: dict[tuple[Any, ...], CallSite] = {}
        assert self._callers is not None or not state.sites
        for key, (calls, positional, keywords) in state.sites.items():
            code = self._callers.code(key)  # type: ignore[union-attr]
            where = _site_path(code.co_filename, self.root)
            site = resolve_site(code, key[1], calls, positional, keywords, where)
            known = out.get(site.key)
            if known is None:
                out[site.key] = site
            else:  # the same place in two code objects (a module imported twice)
                known.calls += site.calls
        return list(out.values())

    def write(self, path: Path | str | None = None) -> Path:
        """Write the profile (and its samples) atomically; returns the profile path."""
        target = Path(path) if path is not None else self.output
        profile = self.profile()
        with self.lock:
            arrays = dict(self.store.arrays)
        if arrays:
            npz = samples_path(target)
            save_arrays(arrays, npz)
            profile.samples_file = npz.name
        save_profile(profile, target)
        self._written = True
        return target

    def write_partial(self) -> None:
        """atexit / SIGTERM / multiprocessing exit: write once, never raise."""
        if self._written or not self.tensorflow_loaded:
            return
        try:
            self.write()
        except Exception as exc:  # noqa: BLE001 - at exit, report and carry on
            print(f"autosig: could not write profile part: {exc}", file=sys.stderr)


def _weakrefable(obj: Any) -> bool:
    try:
        weakref.ref(obj)
    except TypeError:
        return False
    return True


def active_recorder() -> Recorder | None:
    """The recording running in this process (one at most), None when there is none."""
    return _ACTIVE


def _stop_in_probe_copy() -> None:
    """In a probe's forked copy: record nothing (its tf.function calls are the probe's)."""
    global _ACTIVE
    _ACTIVE = None


def partial_path(directory: Path) -> Path:
    """A unique partial-profile name; sorting names sorts processes by start time."""
    return directory / f"part-{time.time_ns():020d}-{os.getpid()}.json"


class record:  # noqa: N801 - used like a function: ``with autosig.record(path):``
    """Context manager: record every tf.function call in this process into ``path``."""

    def __init__(
        self,
        path: Path | str = ".autosig/profile.json",
        *,
        capture_outputs: bool = False,
        samples_per_signature: int = DEFAULT_SAMPLES_PER_SIGNATURE,
        sample_calls: int | None = None,
        project_root: Path | str | None = None,
        probe_budget: float | None = BUDGET_FROM_ENV,
    ) -> None:
        self.path = Path(path)
        self.recorder = Recorder(
            self.path,
            project_root=project_root,
            capture_outputs=capture_outputs,
            samples_per_signature=samples_per_signature,
            sample_calls=DEFAULT_SAMPLE_CALLS if sample_calls is None else sample_calls,
            probe_budget=probe_budget,
        )

    def __enter__(self) -> Recorder:
        check_writable(self.path)
        return self.recorder.start()

    def __exit__(self, *exc: Any) -> None:
        self.recorder.stop()
        self.recorder.write(self.path)


def activate_from_env() -> Recorder | None:
    """Start recording into ``$AUTOSIG_PROFILE_DIR`` (used by the bootstrap sitecustomize)."""
    directory = os.environ.get(ENV_PROFILE_DIR)
    if not directory or _ACTIVE is not None:
        return None
    capture = _env_flag(ENV_CAPTURE_OUTPUTS)
    recorder = Recorder(
        partial_path(Path(directory)),
        capture_outputs=capture,
        samples_per_signature=_env_int(ENV_SAMPLES_PER_SIGNATURE, DEFAULT_SAMPLES_PER_SIGNATURE),
        sample_calls=_env_int(ENV_SAMPLE_CALLS, DEFAULT_SAMPLE_CALLS),
    ).start()
    atexit.register(recorder.write_partial)
    _install_sigterm(recorder)
    return recorder


def _install_sigterm(recorder: Recorder) -> None:
    """On SIGTERM write the partial profile, then die of SIGTERM as before."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def on_term(signum: int, frame: Any) -> None:
        recorder.write_partial()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, on_term)
