"""Generate ``autosig/analysis/tf_random_apis.py``: the TensorFlow and Keras Python APIs
that draw stateful random numbers, derived from TensorFlow's own op registry.

The static analysis (no TensorFlow at run time) needs to know which calls draw random
numbers whose stream depends on how many times a function traced. A hand list misses
the hidden ones (``tf.nn.nce_loss``'s candidate sampler, ``sample_distorted_bounding_box``,
the ``tf.image.random_*`` family, Keras's random layers). So this script asks
TensorFlow:

1. the **op types**: ``autosig.profile.random_ops`` reads the op registry (stateful
   ops with ``seed``/``seed2``: a stream per op, restarted by each trace; stateful ops
   with an RNG algorithm input: ``tf.random.Generator``'s variable state);
2. the **generated wrappers** that create them: every ``gen_*_ops`` function whose
   source builds one of those op types (``_apply_op_helper("RandomUniform", ...)``);
3. the **public APIs** that reach them: every function and class of the public
   ``tf.*`` and ``keras.*`` API (``tf.keras`` too), whose Python implementation is
   followed call by call (names resolved through the function's module and closure,
   ``self.method`` and ``super()`` through the class) to the generated wrappers. Keras 3
   draws with stateless ops seeded from a ``SeedGenerator`` variable: a class or
   function that creates or draws from one is recorded as such.

Each entry says what kind of state its draws keep, which decides whether a fix that
changes the trace count changes the numbers:

- ``hidden``: a stateful op's own stream, restarted by every trace (trace-count sensitive);
- ``generator``: a ``tf.random.Generator``'s variable (not trace-count sensitive);
- ``seed_generator``: a Keras ``SeedGenerator`` variable (not trace-count sensitive);
- ``nondeterministic``: ``NonDeterministicInts`` (a new number on every run: creating a
  Generator from non-deterministic state), never reproducible, traced or not.

Functions are followed through calls and through functions handed on to be called
(``functools.partial(random_ops.random_uniform, seed=seed)`` as dropout's sampler), so
the table says what an API *may* draw; a Keras layer by its ``call`` (its
``__call__`` also builds the layer once, drawing initial weights: not a per-call draw).
Memory stays under 1 GB: the public API is walked module by module (each module once)
and nothing is traced.

Usage: ``python scripts/gen_tf_random_apis.py [--out PATH] [--check]``; ``--check``
exits 1 if the committed module differs from what this TensorFlow gives.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import inspect
import re
import sys
import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "autosig" / "analysis" / "tf_random_apis.py"
OUR_PACKAGES = ("tensorflow", "keras", "tf_keras")
"""Code followed: TensorFlow's and Keras's own (not NumPy's, not the standard library's)."""
SKIP_PATHS = ("tensorflow.compat.v1.compat", "tensorflow.compat.v2", "tensorflow.tools")
"""Aliases of the v2 API under compat, and tools that are not an API."""


def _public_module(module: Any) -> bool:
    """TensorFlow's and Keras's public API modules (generated), not their internals."""
    name = getattr(module, "__name__", "")
    if name.startswith("tensorflow."):
        return name.startswith("tensorflow._api.")
    if name == "keras" or name.startswith("keras."):
        return not name.startswith(("keras.src", "keras._tf_keras.keras.src"))
    return False


_OP_NAME = re.compile(r'_apply_op_helper\(\s*"(\w+)"')
HIDDEN, GENERATOR, SEED_GENERATOR = "hidden", "generator", "seed_generator"
NONDETERMINISTIC = "nondeterministic"
KINDS = (HIDDEN, GENERATOR, SEED_GENERATOR, NONDETERMINISTIC)
"""Most telling first: an API that may draw both ways gets the first kind it reaches."""


class Follower:
    """Follows Python implementations to the random op wrappers they call."""

    def __init__(self) -> None:
        sys.path.insert(0, str(ROOT))
        from autosig.profile.random_ops import (
            NON_DETERMINISTIC,
            hidden_state_random_ops,
            variable_state_random_ops,
        )

        self.nondeterministic = NON_DETERMINISTIC

        self.hidden = hidden_state_random_ops()
        self.variable = variable_state_random_ops()
        self.edges: dict[Any, list[Any]] = {}
        self.direct: dict[Any, set[tuple[str, str]]] = {}
        self.reached: dict[Any, set[tuple[str, str]]] = {}
        self.seed_generator = self._seed_generator_class()
        self.seed_draws = self._seed_draws()

    @staticmethod
    def _seed_generator_class() -> Any:
        try:
            from keras.src.random.seed_generator import SeedGenerator
        except ImportError:  # pragma: no cover - Keras 2 has none
            return None
        return SeedGenerator

    def _seed_draws(self) -> set[Any]:
        """Keras's draws from a SeedGenerator: ``draw_seed`` and ``SeedGenerator.next``."""
        if self.seed_generator is None:
            return set()
        from keras.src.random import seed_generator

        return {
            f
            for f in (_function(seed_generator.draw_seed), _function(self.seed_generator.next))
            if f is not None
        }

    # -- the call graph ----------------------------------------------------------------
    # Built first, node by node (a function with its class, or a class); what each node
    # reaches is then propagated to a fixed point, so cycles (recursion, mutual calls)
    # lose nothing.

    def node(self, obj: Any, cls: Any = None) -> Any:
        """The graph node of a callable (None: not ours, not followed)."""
        if inspect.isclass(obj):
            return ("class", obj) if _ours(obj) else None
        fn = _function(obj)
        if fn is None or not _ours(fn):
            return None
        return (fn, cls)

    def build(self, start: Any) -> None:
        """Add ``start`` and everything it calls to the graph."""
        stack = [start]
        while stack:
            key = stack.pop()
            if key is None or key in self.edges:
                continue
            direct, successors = self._expand(key)
            self.direct[key] = direct
            self.edges[key] = successors
            stack.extend(successors)

    def _expand(self, key: Any) -> tuple[set[tuple[str, str]], list[Any]]:
        if key[0] == "class":
            cls = key[1]
            successors = []
            for name in _entry_points(cls):
                owner = next((c for c in cls.__mro__ if name in c.__dict__), None)
                if owner is not None and _ours(owner):
                    successors.append(self.node(owner.__dict__[name], cls))
            return set(), [s for s in successors if s is not None]
        fn, cls = key
        generated = self._generated(fn)
        if generated is not None:
            return generated, []
        if fn in self.seed_draws:
            return {(SEED_GENERATOR, "SeedGenerator")}, []
        direct: set[tuple[str, str]] = set()
        successors = []
        for expr, called in self._references(fn):
            target = self._resolve(expr, fn, cls)
            if target is None:
                continue
            owner = target.cls if isinstance(target, _Bound) else None
            target = target.function if isinstance(target, _Bound) else target
            if self.seed_generator is not None and target is self.seed_generator:
                # a layer method that makes a SeedGenerator draws from it (RandomFlip's
                # get_random_transformation: ``self.backend.random.uniform(seed=...)`` is
                # not followed); elsewhere (serialization) making one draws nothing
                if called and cls is not None and _entry_points(cls) == ("call",):
                    direct.add((SEED_GENERATOR, "SeedGenerator"))
            elif inspect.isclass(target):
                # a class constructed here (a class only named, as in isinstance, is not)
                if called and _ours(target) and target is not cls and "__init__" in vars(target):
                    successors.append(self.node(target.__dict__["__init__"], target))
            else:
                # a function called here, or handed on to be called (functools.partial(
                # random_ops.random_uniform, seed=seed) as dropout's sampler)
                successors.append(self.node(target, owner))
        return direct, [s for s in successors if s is not None]

    def solve(self) -> None:
        """What every node reaches: its own draws and its callees', to a fixed point."""
        self.reached = {key: set(found) for key, found in self.direct.items()}
        changed = True
        while changed:
            changed = False
            for key, successors in self.edges.items():
                mine = self.reached[key]
                before = len(mine)
                for successor in successors:
                    mine |= self.reached.get(successor, set())
                if len(mine) != before:
                    changed = True

    def _generated(self, fn: Any) -> set[tuple[str, str]] | None:
        """A ``gen_*_ops`` wrapper: the random op it creates (None: not a wrapper)."""
        if not fn.__module__.rsplit(".", 1)[-1].startswith("gen_"):
            return None
        try:
            ops = set(_OP_NAME.findall(inspect.getsource(fn)))
        except (OSError, TypeError):
            return set()
        return {
            (NONDETERMINISTIC if op in self.nondeterministic else HIDDEN, op)
            for op in ops
            if op in self.hidden
        } | {(GENERATOR, op) for op in ops if op in self.variable}

    @staticmethod
    def _references(fn: Any) -> Iterator[tuple[ast.expr, bool]]:
        """Every name and dotted name the function's source uses, and whether it is
        called there; nested functions and lambdas included (they run as part of it)."""
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError, IndentationError):
            return
        called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
        inner = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                inner.add(id(node.value))  # a.b.c: only the whole chain is a reference
        for node in ast.walk(tree):
            if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in inner:
                if isinstance(node.ctx, ast.Load):
                    yield node, id(node) in called

    def _resolve(self, expr: ast.expr, fn: Any, cls: Any) -> Any:
        """The object a call's function expression names, or None."""
        if isinstance(expr, ast.Name):
            return _lookup(fn, expr.id)
        if isinstance(expr, ast.Attribute):
            base = expr.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls") and cls is not None:
                owner = next((c for c in cls.__mro__ if expr.attr in c.__dict__), None)
                if owner is None:
                    return None
                value = owner.__dict__[expr.attr]
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                return _Bound(value, cls) if inspect.isfunction(value) else None
            if (
                isinstance(base, ast.Call)
                and isinstance(base.func, ast.Name)
                and base.func.id == "super"
                and cls is not None
            ):
                for owner in cls.__mro__[1:]:
                    if expr.attr in owner.__dict__:
                        value = owner.__dict__[expr.attr]
                        return _Bound(value, cls) if inspect.isfunction(value) else None
                return None
            value = self._resolve_value(base, fn)
            if value is None:
                return None
            try:
                return getattr(value, expr.attr)
            except Exception:  # noqa: BLE001 - a lazy attribute that fails: unknown
                return None
        return None

    def _resolve_value(self, expr: ast.expr, fn: Any) -> Any:
        """A module or class a dotted expression names (never an instance)."""
        if isinstance(expr, ast.Name):
            value = _lookup(fn, expr.id)
        elif isinstance(expr, ast.Attribute):
            outer = self._resolve_value(expr.value, fn)
            if outer is None:
                return None
            try:
                value = getattr(outer, expr.attr)
            except Exception:  # noqa: BLE001
                return None
        else:
            return None
        return value if inspect.ismodule(value) or inspect.isclass(value) else None


@dataclass(frozen=True)
class _Bound:
    """``self.method`` / ``super().method``: the function and the class it runs for."""

    function: Any
    cls: Any


def _function(obj: Any) -> Any:
    """The plain function behind TensorFlow's dispatch, deprecation and export wrappers.

    Attributes are read with ``getattr_static``: an object with a ``__getattr__`` of its
    own (absl's ``FLAGS`` parses the command line on first use) is never asked."""
    for _ in range(32):
        if isinstance(obj, (staticmethod, classmethod, types.MethodType)):
            obj = obj.__func__
            continue
        wrapped = inspect.getattr_static(obj, "__wrapped__", None)
        if wrapped is None or wrapped is obj:
            break
        obj = wrapped
    return obj if isinstance(obj, types.FunctionType) else None


def _entry_points(cls: Any) -> tuple[str, ...]:
    """What using an instance runs: a Keras layer's ``call`` (its ``__call__`` also
    builds it once, drawing initial weights: not a per-call draw); else ``__call__``."""
    if any(c.__name__ == "Layer" and _ours(c) for c in cls.__mro__):
        return ("call",)
    return ("__call__",)


def _ours(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".", 1)[0] in OUR_PACKAGES


def _lookup(fn: Any, name: str) -> Any:
    if name in fn.__code__.co_freevars and fn.__closure__:
        cell = fn.__closure__[fn.__code__.co_freevars.index(name)]
        try:
            return cell.cell_contents
        except ValueError:
            return None
    value = fn.__globals__.get(name)
    if value is None and not hasattr(builtins, name):
        return None
    return value


# -- the public API ----------------------------------------------------------------------


def public_api(roots: list[tuple[str, Any]]) -> Iterator[tuple[str, Any, Any]]:
    """(public name, object, owning class or None) for every public function, class and
    class method under ``roots``, each module visited once per name path."""
    seen_modules: set[int] = set()
    queue = list(roots)
    while queue:
        prefix, module = queue.pop(0)  # breadth first: a module's shortest public name
        if id(module) in seen_modules or prefix.startswith(SKIP_PATHS):
            continue
        seen_modules.add(id(module))
        try:
            names = sorted(n for n in dir(module) if not n.startswith("_"))
        except Exception:  # noqa: BLE001
            continue
        for name in names:
            try:
                value = getattr(module, name)
            except Exception:  # noqa: BLE001 - a lazy module that cannot load here
                continue
            path = f"{prefix}.{name}"
            if inspect.ismodule(value):
                if _public_module(value):
                    queue.append((path, value))
            elif inspect.isclass(value) and _ours(value):
                yield path, value, None
                for attr, member in sorted(vars(value).items()):
                    if attr.startswith("_") or not inspect.isfunction(
                        _function(member) if not isinstance(member, property) else None
                    ):
                        continue
                    yield f"{path}.{attr}", member, value
            elif callable(value) and _ours(value):
                yield path, value, None


def generate() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Public name -> (kind, the op types or "SeedGenerator" it may create)."""
    import keras
    import tensorflow as tf

    follower = Follower()
    api = [
        (name, follower.node(obj, owner))
        for name, obj, owner in public_api([("tensorflow", tf), ("keras", keras)])
    ]
    for _, key in api:
        follower.build(key)
    follower.solve()
    table: dict[str, tuple[str, tuple[str, ...]]] = {}
    for name, key in api:
        found = follower.reached.get(key) if key is not None else None
        if not found:
            continue
        kinds = {kind for kind, _ in found}
        kind = next(k for k in KINDS if k in kinds)
        table[name] = (kind, tuple(sorted({op for _, op in found})))
    return dict(sorted(table.items()))


def render(table: dict[str, tuple[str, tuple[str, ...]]]) -> str:
    import keras
    import tensorflow as tf

    lines = [
        '"""The TensorFlow and Keras Python APIs that draw stateful random numbers.',
        "",
        "Generated by ``scripts/gen_tf_random_apis.py`` from TensorFlow "
        f"{tf.__version__} and Keras {keras.__version__}",
        "(its op registry, the generated op wrappers and the public API's Python code);",
        "do not edit. ``tests/test_tf_random_apis_tf.py`` regenerates it and fails on drift.",
        "",
        "Each entry: the public name as the static analysis resolves it -> (kind, the op",
        'types it may create, or "SeedGenerator"). The kind says whether a fix that changes',
        "how many times a function traces changes the numbers drawn:",
        "",
        "- ``hidden``: a stateful op's own stream, restarted by every trace: yes;",
        "- ``generator``: a ``tf.random.Generator``'s variable: no;",
        "- ``seed_generator``: a Keras ``SeedGenerator`` variable (Keras 3 draws with",
        "  stateless ops seeded from it): no;",
        "- ``nondeterministic``: ``NonDeterministicInts``, never reproducible: no.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f'TENSORFLOW_VERSION = "{tf.__version__}"',
        f'KERAS_VERSION = "{keras.__version__}"',
        'HIDDEN = "hidden"',
        'GENERATOR = "generator"',
        'SEED_GENERATOR = "seed_generator"',
        'NONDETERMINISTIC = "nondeterministic"',
        "",
        "STATEFUL_RANDOM_APIS: dict[str, tuple[str, tuple[str, ...]]] = {",
    ]
    for name, (kind, ops) in table.items():
        ops_text = ", ".join(f'"{op}"' for op in ops) + ("," if len(ops) == 1 else "")
        entry = f'    "{name}": ({kind.upper()}, ({ops_text})),'
        if len(entry) > 99:
            entry = f'    "{name}": (\n        {kind.upper()},\n        ({ops_text}),\n    ),'
        lines.append(entry)
    lines += [
        "}",
        "",
        "",
        "def random_kind(api: str) -> str | None:",
        '    """How a public API (qualified name) draws, or None if it draws nothing stateful."""',
        "    entry = STATEFUL_RANDOM_APIS.get(api)",
        "    return entry[0] if entry is not None else None",
        "",
        "",
        "def draws_per_trace(api: str) -> bool:",
        '    """The API draws from a stream each trace restarts: fewer traces, other numbers."""',
        "    return random_kind(api) == HIDDEN",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if --out would change")
    args = parser.parse_args()
    text = render(generate())
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is out of date: run scripts/gen_tf_random_apis.py")
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {text.count(chr(10))} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
