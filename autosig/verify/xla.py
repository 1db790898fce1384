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
function (``a_inference_<name>_<id>__XlaMustCompile...``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.machinery
import os
import re
import sys
import time
import types
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

POLY_MODULE = "tensorflow.python.eager.polymorphic_function.polymorphic_function"
EAGER_RUN_MODULE = "tensorflow.python.eager.polymorphic_function.eager_function_run"
DUMP_SUFFIX = ".before_optimizations.txt"
_MODULE_NAME = re.compile(r"^module_\d+\.a?_*inference_(?P<name>.+?)_\d+__XlaMustCompile")

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
    jit = {os.path.realpath(f) for f in jit_files or ()}
    watch = {os.path.realpath(f) for f in watch_files}
    timed: dict[int, tuple[str, str, int] | None] = {}

    @functools.wraps(original_init)
    def __init__(self: Any, python_function: Any, name: Any, *args: Any, **kwargs: Any) -> None:
        if functions_run_eagerly() and not EAGER_SEEN:
            EAGER_SEEN.append(True)
        if jit and _python_file(python_function) in jit:
            if len(args) >= 3:  # input_signature, autograph, jit_compile
                args = (*args[:2], True, *args[3:])
            else:
                kwargs["jit_compile"] = True
            if str(name) not in FORCED:
                FORCED.append(str(name))
        original_init(self, python_function, name, *args, **kwargs)

    def key_of(fn_self: Any) -> tuple[str, str, int] | None:
        ident = id(fn_self)
        if ident not in timed:
            target = _target(getattr(fn_self, "_python_function", None))
            key = None
            if target is not None:
                filename = os.path.realpath(target.__code__.co_filename)
                if filename in watch:
                    key = (filename, target.__qualname__, target.__code__.co_firstlineno)
            timed[ident] = key
        return timed[ident]

    @functools.wraps(original_call)
    def __call__(fn_self: Any, *args: Any, **kwds: Any) -> Any:
        key = key_of(fn_self) if watch else None
        if key is None:
            return original_call(fn_self, *args, **kwds)
        start = time.perf_counter()
        result = original_call(fn_self, *args, **kwds)
        elapsed = time.perf_counter() - start
        times = TIMINGS.setdefault(key, [])
        if len(times) < MAX_TIMINGS:
            times.append(elapsed)
        return result

    __init__._autosig_xla = True  # type: ignore[attr-defined]
    cls.__init__ = __init__
    cls.__call__ = __call__
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


def dump_flags(dump_dir: Path | str, names: Iterable[str]) -> str:
    """``XLA_FLAGS`` additions that dump only the modules of the named functions."""
    alternatives = "|".join(sorted({re.escape(n) for n in names if n})) or "[^_]+"
    pattern = f".*inference_({alternatives})_[0-9]+__.*"
    return f"--xla_dump_to={dump_dir} --xla_dump_hlo_module_re={pattern}"


def count_compiles(dump_root: Path | str) -> Counter[str]:
    """Compiled XLA modules per tf.function name, over every process's dump directory."""
    counts: Counter[str] = Counter()
    root = Path(dump_root)
    if not root.is_dir():
        return counts
    for path in root.rglob(f"*{DUMP_SUFFIX}"):
        match = _MODULE_NAME.match(path.name)
        if match:
            counts[match.group("name")] += 1
    return counts
