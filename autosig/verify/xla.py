"""XLA mode: force ``jit_compile=True`` on the rewritten functions, and count XLA compiles.

In the child, TensorFlow's ``Function.__init__`` is wrapped (when TensorFlow defines
it; TensorFlow is never imported here) so every tf.function whose Python function is
defined in one of the given files is created with ``jit_compile=True``: the decorator,
the call form and per-instance method functions alike, without touching the source.

Traces and XLA compiles are different things: with ``None`` dimensions a function
traces once but XLA compiles again for every new concrete shape. Compiles are
counted for real: the child asks XLA to dump every HLO module it compiles
(``--xla_dump_to``, restricted to the forced functions' names) and each compiled
module leaves exactly one ``*.before_optimizations.txt`` file, named after the
concrete function it compiles: ``module_0003.a_inference_<name>_<uid>__...`` for
``__inference_<name>_<uid>`` (``a`` for the leading ``_``, ``<>`` and the like
sanitized to ``_``). The name alone is ambiguous (``__call__`` of two classes,
``step`` in two files, a nested ``train_step`` from two factories), the uid is not:
it is unique in its process. So each process notes, next to its dump
(``autosig-functions.jsonl``), every concrete function its watched tf.functions
traced, uid -> (file, qualname, line), and the parent attributes each module
exactly. Modules without such a uid (``__forward_<name>_<uid>`` of a call under a
``GradientTape``) are attributed by name only where one function has that name,
else the count says "ambiguous" rather than a wrong number.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.machinery
import json
import os
import re
import sys
import threading
import time
import types
import weakref
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from autosig.verify import effects, unseen

POLY_MODULE = "tensorflow.python.eager.polymorphic_function.polymorphic_function"
EAGER_RUN_MODULE = "tensorflow.python.eager.polymorphic_function.eager_function_run"
DUMP_SUFFIX = ".before_optimizations.txt"
FUNCTIONS_FILE = "autosig-functions.jsonl"
"""Per process dump directory: one JSON line per concrete function of a watched
tf.function: ``{"name": "__inference_step_9", "file", "qualname", "line"}``."""
_MODULE_NAME = re.compile(
    r"^module_\d+\.[a_]*(?P<kind>inference|forward)_(?P<name>.+)_(?P<uid>\d+)__(XlaMustCompile|\.)"
)
_CONCRETE_NAME = re.compile(r"^_*(?P<kind>inference|forward)_(?P<name>.+)_(?P<uid>\d+)$")
_DUMP_TO = re.compile(r"--xla_dump_to=(\S+)")

FORCED: list[str] = []
"""Names of the tf.functions this process created with jit_compile forced on."""
EAGER_SEEN: list[bool] = []
"""Set when tf.config.run_functions_eagerly(True) was found in effect."""


def _python_file(fn: Any) -> str | None:
    """The file defining the plain function behind TF's, functools' and method wrappers."""
    target = _target(fn)
    return None if target is None else os.path.realpath(target.__code__.co_filename)


def functions_run_eagerly() -> bool:
    module = sys.modules.get(EAGER_RUN_MODULE)
    return bool(getattr(module, "RUN_FUNCTIONS_EAGERLY", False))


MAX_TIMINGS = 20_000
"""Per-call durations kept per function (the first ones; enough for a median)."""

TIMINGS: dict[tuple[str, str, int], list[float]] = {}
"""(file, qualname, first line) -> durations of calls in seconds, tracing and XLA
compilation included: the step time a user of the function pays."""


def _target(fn: Any) -> Any:
    """The plain function (with ``__code__``) behind wrappers, or None."""
    for _ in range(64):
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None and wrapped is not fn:
            # TF's per-instance method functions are wrappers defined in TF itself
            fn = wrapped
        elif isinstance(fn, types.MethodType):
            fn = fn.__func__
        elif isinstance(fn, functools.partial):
            fn = fn.func
        else:
            return fn if hasattr(fn, "__code__") else None
    return None


_TRACES_SEEN: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
"""tf.function object -> tracing count when its concrete functions were last noted
(weak keys: an id() could be reused by the next function a factory creates)."""
NOTED: set[str] = set()
"""Concrete function names already written to this process's FUNCTIONS_FILE."""
_DUMP_DIR: list[Any] = [None, None]
"""(XLA_FLAGS text, dump directory parsed from it): parsed again only when it changes."""


def dump_dir() -> Path | None:
    """Where XLA dumps this process's modules: the last ``--xla_dump_to`` in ``XLA_FLAGS``."""
    flags = os.environ.get("XLA_FLAGS", "")
    if _DUMP_DIR[0] != flags:
        found = _DUMP_TO.findall(flags)
        _DUMP_DIR[:] = [flags, Path(found[-1]) if found else None]
    return _DUMP_DIR[1]


def _remember(cache: weakref.WeakKeyDictionary[Any, Any], obj: Any, value: Any) -> None:
    with contextlib.suppress(TypeError):  # not weak-referenceable: compute again next time
        cache[obj] = value


def note_concrete_functions(fn_self: Any, key: tuple[str, str, int]) -> None:
    """Write each new concrete function of ``fn_self`` to the dump's functions file.

    Runs after every call of a tracked function but does work only when its tracing
    count changed (a new trace); never raises into the user's program.
    """
    directory = dump_dir()
    if directory is None:
        return
    try:
        count = fn_self.experimental_get_tracing_count()
        with contextlib.suppress(TypeError):
            if _TRACES_SEEN.get(fn_self) == count:
                return
        _remember(_TRACES_SEEN, fn_self, count)
        lines = []
        for concrete in list(fn_self._function_cache.values()):
            name = concrete.name
            name = name.decode() if isinstance(name, bytes) else str(name)
            if name in NOTED:
                continue
            NOTED.add(name)
            entry = {"name": name, "file": key[0], "qualname": key[1], "line": key[2]}
            lines.append(json.dumps(entry) + "\n")
        if lines:
            directory.mkdir(parents=True, exist_ok=True)
            with open(directory / FUNCTIONS_FILE, "a", encoding="utf-8") as handle:
                handle.writelines(lines)
    except Exception as exc:  # noqa: BLE001 - counting compiles must not break the workload
        print(f"autosig: XLA compile attribution failed: {exc!r}", file=sys.stderr)


class _Flag(threading.local):
    on = False


_NO_FORCE = _Flag()
"""Set while a fallback twin is created: its jit_compile is the program's own."""
_TWINS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""Forced-XLA tf.function -> its twin without forced XLA (XLA could not compile it)."""
FALLBACK: dict[tuple[str, str, int], str] = {}
"""Functions XLA could not compile -> why (the op XLA has no kernel for, ...)."""
_PRINT_PATCHED: list[bool] = []
_XLA_FAILURE = re.compile(
    r"Detected unsupported operations when trying to compile graph|tf2xla conversion failed|"
    r"must be a compile-time constant|XLA compilation requires|Compilation failure|"
    r"not supported by XLA|XLA can't deduce compile time constant"
)
_UNSUPPORTED_OP = re.compile(r"on XLA_\w+_JIT: (\w+)")


def xla_failure(exc: BaseException) -> str | None:
    """Why XLA could not compile (from a TensorFlow error), or None for other errors."""
    if not type(exc).__module__.startswith("tensorflow"):
        return None
    text = str(exc)
    if not _XLA_FAILURE.search(text):
        return None
    ops = sorted(set(_UNSUPPORTED_OP.findall(text)))
    if ops:
        return f"op {', '.join(ops)} has no XLA kernel"
    if "compile-time constant" in text or "compile time constant" in text:
        return "a value XLA needs at compile time (a shape, a size) is only known at run time"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first


def _twin(fn_self: Any) -> Any:
    """The same tf.function with the program's own jit_compile (created once)."""
    twin = _TWINS.get(fn_self)
    if twin is not None:
        return twin
    own = getattr(fn_self, "_autosig_own_jit", None)
    saved = fn_self._jit_compile
    _NO_FORCE.on = True
    try:
        fn_self._jit_compile = own
        twin = fn_self._clone(None)
    finally:
        fn_self._jit_compile = saved
        _NO_FORCE.on = False
    with contextlib.suppress(TypeError):
        _TWINS[fn_self] = twin
    return twin


def _patch_print() -> None:
    """Attribute traced ``tf.print`` output to its function (``effects.patch_print``)."""
    _PRINT_PATCHED.append(True)
    try:
        from tensorflow.python.ops import gen_logging_ops

        effects.patch_print(gen_logging_ops)
    except Exception as exc:  # noqa: BLE001 - without it prints are not compared
        print(f"autosig: tf.print output not captured: {exc!r}", file=sys.stderr)


def patch_function_class(
    module: types.ModuleType,
    jit_files: Iterable[str] | None,
    watch_files: Iterable[str] = (),
    seed: int | None = None,
) -> None:
    """Wrap TensorFlow's ``Function``: force XLA, time steps, watch eager mode, seed.

    - functions defined in ``jit_files`` are created with ``jit_compile=True``;
    - calls of functions defined in ``watch_files`` are timed (the recorder's own
      overhead excluded);
    - ``seed`` sets TensorFlow's global seed, so both runs draw the same inputs.
    """
    cls = module.Function
    if getattr(cls.__init__, "_autosig_xla", False):
        return
    original_init = cls.__init__
    original_call = cls.__dict__["__call__"]
    original_concrete = cls.__dict__.get("get_concrete_function")
    jit = {os.path.realpath(f) for f in jit_files or ()}
    watch = {os.path.realpath(f) for f in watch_files}
    tracked = jit | watch
    sites: weakref.WeakKeyDictionary[Any, tuple[str, str, int] | None]
    sites = weakref.WeakKeyDictionary()

    @functools.wraps(original_init)
    def __init__(self: Any, python_function: Any, name: Any, *args: Any, **kwargs: Any) -> None:
        if functions_run_eagerly() and not EAGER_SEEN:
            EAGER_SEEN.append(True)
        own = args[2] if len(args) >= 3 else kwargs.get("jit_compile")
        if jit and not _NO_FORCE.on and _python_file(python_function) in jit:
            if len(args) >= 3:  # input_signature, autograph, jit_compile
                args = (*args[:2], True, *args[3:])
            else:
                kwargs["jit_compile"] = True
            if str(name) not in FORCED:
                FORCED.append(str(name))
        original_init(self, python_function, name, *args, **kwargs)
        with contextlib.suppress(AttributeError, TypeError):
            self._autosig_own_jit = own

    def site_of(fn_self: Any) -> tuple[str, str, int] | None:
        """(file, qualname, first line) of a tracked function, else None (cached per object)."""
        with contextlib.suppress(KeyError, TypeError):
            return sites[fn_self]
        target = _target(getattr(fn_self, "_python_function", None))
        key = None
        if target is not None:
            filename = os.path.realpath(target.__code__.co_filename)
            if filename in tracked:
                key = (filename, target.__qualname__, target.__code__.co_firstlineno)
        _remember(sites, fn_self, key)
        return key

    @functools.wraps(original_call)
    def __call__(fn_self: Any, *args: Any, **kwds: Any) -> Any:
        key = site_of(fn_self) if tracked else None
        if key is None:
            return original_call(fn_self, *args, **kwds)
        if not _PRINT_PATCHED:
            _patch_print()
        compiled = key[0] in jit  # XLA runs only: note what XLA will name its modules
        target = _TWINS.get(fn_self, fn_self) if compiled else fn_self
        effects.enter(key)
        start = time.perf_counter()
        try:
            try:
                result = original_call(target, *args, **kwds)
            except Exception as exc:
                why = xla_failure(exc) if compiled and target is fn_self else None
                if why is None:
                    raise
                # XLA cannot compile this function: nothing ran. Note why and run it
                # (now and from now on) as the program wrote it, without forced XLA.
                FALLBACK.setdefault(key, why)
                target = _twin(fn_self)
                start = time.perf_counter()
                result = original_call(target, *args, **kwds)
        except BaseException as exc:
            effects.leave()
            if compiled and not effects.capturing():
                note_concrete_functions(target, key)
            if key[0] in watch:
                effects.note_call(key, target, args, kwds, None, exc, watch)
            raise
        elapsed = time.perf_counter() - start
        effects.leave()
        if compiled and not effects.capturing():  # an unseen input's twin: not counted
            note_concrete_functions(target, key)
        if key[0] in watch:
            effects.note_reach(key, target)
            times = TIMINGS.setdefault(key, [])
            if len(times) < MAX_TIMINGS and not effects.capturing():
                times.append(elapsed)
            effects.note_call(key, target, args, kwds, result, None, watch)
            unseen.remember(key, fn_self, args, kwds)
        return result

    cls.__call__ = __call__
    unseen.set_caller(__call__)
    if original_concrete is not None:

        @functools.wraps(original_concrete)
        def get_concrete_function(fn_self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return original_concrete(fn_self, *args, **kwargs)
            finally:
                key = site_of(fn_self) if jit else None
                if key is not None and key[0] in jit:
                    note_concrete_functions(fn_self, key)

        cls.get_concrete_function = get_concrete_function

    __init__._autosig_xla = True  # type: ignore[attr-defined]
    cls.__init__ = __init__
    if seed is not None:
        try:
            from tensorflow.python.framework import random_seed

            random_seed.set_seed(seed)
        except Exception as exc:  # noqa: BLE001 - a seed is a convenience, not a must
            print(f"autosig: could not seed TensorFlow: {exc!r}", file=sys.stderr)


class _PatchWhenImported(importlib.abc.MetaPathFinder):
    """Runs ``callback(module)`` right after TensorFlow executes its Function module.

    Locates the module with ``PathFinder`` directly (not the other meta-path finders),
    so it composes with the recorder's own hook for the same module.
    """

    def __init__(self, callback: Callable[[types.ModuleType], None]) -> None:
        self.callback = callback

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != POLY_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        exec_module = spec.loader.exec_module
        callback = self.callback
        finder = self

        def exec_and_patch(module: types.ModuleType) -> None:
            exec_module(module)
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(finder)
            callback(module)

        spec.loader.exec_module = exec_and_patch  # type: ignore[method-assign]
        return spec


def install(
    jit_files: Iterable[str] | None,
    watch_files: Iterable[str] = (),
    seed: int | None = None,
) -> None:
    """Patch now if TensorFlow is loaded, else as soon as it is."""
    jit = list(jit_files or ())
    watch = list(watch_files)

    def patch(module: types.ModuleType) -> None:
        patch_function_class(module, jit, watch, seed)

    module = sys.modules.get(POLY_MODULE)
    if module is not None and hasattr(module, "Function"):
        patch(module)
        return
    sys.meta_path.insert(0, _PatchWhenImported(patch))


# -- parent side: XLA flags and compile counts --------------------------------------------


def _sanitized(name: str) -> str:
    """A tf.function name as XLA spells it in module names (``<lambda>`` -> ``_lambda_``)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def dump_flags(dump_dir: Path | str, names: Iterable[str]) -> str:
    """``XLA_FLAGS`` additions that dump only the modules of the named functions.

    Names are matched as XLA spells them (any character it may sanitize matches any),
    for plain calls (``inference``) and calls under a GradientTape (``forward``).
    """
    parts = {re.sub(r"[^A-Za-z0-9_]", ".", n) for n in names if n}
    alternatives = "|".join(sorted(parts)) or "[^_]+"
    pattern = f".*(inference|forward)_({alternatives})_[0-9]+__.*"
    return f"--xla_dump_to={dump_dir} --xla_dump_hlo_module_re={pattern}"


Site = tuple[str, str, int]
"""(absolute file, qualname, first line) of a tf.function's Python function."""
AMBIGUOUS = "ambiguous"


@dataclass
class CompileCounts:
    """XLA compiles per function, attributed exactly where the dump allows it.

    ``exact``: modules whose concrete function the process noted (by uid).
    ``ambiguous``: functions that may own modules that could not be told apart
    (one name shared by several functions, or a process that noted nothing).
    """

    exact: Counter[Site] = field(default_factory=Counter)
    ambiguous: set[Site] = field(default_factory=set)
    unattributed: Counter[str] = field(default_factory=Counter)
    """Sanitized name -> modules of processes that noted no function at all."""

    def lookup(self, file: str, qualname: str) -> int | Literal["ambiguous"]:
        """Compiles of the function ``qualname`` defined in ``file`` (absolute).

        "ambiguous" when some of its modules cannot be told apart from another
        function's, or when the file holds two functions of that qualname.
        """
        files = {file, os.path.realpath(file)}
        sites = {s for s in (*self.exact, *self.ambiguous) if s[0] in files and s[1] == qualname}
        if sites & self.ambiguous or len({s[2] for s in sites}) > 1:
            return AMBIGUOUS
        if self.unattributed[_sanitized(qualname.rsplit(".", 1)[-1])]:
            return AMBIGUOUS
        return sum(self.exact[s] for s in sites)


def _noted_functions(directory: Path) -> dict[str, Site] | None:
    """Concrete function name -> site, from one process's functions file (None: no file)."""
    path = directory / FUNCTIONS_FILE
    if not path.is_file():
        return None
    out: dict[str, Site] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
            out[str(entry["name"])] = (
                str(entry["file"]),
                str(entry["qualname"]),
                int(entry["line"]),
            )
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a killed process
    return out


def count_compiles(dump_root: Path | str) -> CompileCounts:
    """Compiled XLA modules per function, over every process's dump directory.

    A module of ``__inference_<name>_<uid>`` belongs to the function that noted that
    concrete function in the same process; a ``__forward_`` module (a call under a
    GradientTape) to the one noted function of that name, if there is only one.
    Modules of functions not noted (a user's own jit_compile functions of the same
    name in unchanged files) are not counted.
    """
    counts = CompileCounts()
    root = Path(dump_root)
    if not root.is_dir():
        return counts
    by_dir: dict[Path, list[re.Match[str]]] = {}
    for path in root.rglob(f"*{DUMP_SUFFIX}"):
        match = _MODULE_NAME.match(path.name)
        if match:
            by_dir.setdefault(path.parent, []).append(match)
    for directory, modules in by_dir.items():
        noted = _noted_functions(directory)
        if noted is None:
            counts.unattributed.update(m.group("name") for m in modules)
            continue
        by_uid: dict[str, Site] = {}
        by_name: dict[str, set[Site]] = {}
        for concrete, site in noted.items():
            parsed = _CONCRETE_NAME.match(concrete)
            if parsed is None:
                continue
            by_uid[parsed.group("uid")] = site
            by_name.setdefault(_sanitized(parsed.group("name")), set()).add(site)
        for module in modules:
            site = by_uid.get(module.group("uid")) if module.group("kind") == "inference" else None
            if site is not None:
                counts.exact[site] += 1
                continue
            owners = by_name.get(module.group("name"), set())
            if module.group("kind") != "forward" or not owners:
                continue  # an inference module noted by no watched function: not ours
            if len(owners) == 1:
                counts.exact[next(iter(owners))] += 1
            else:
                counts.ambiguous |= owners
    return counts
