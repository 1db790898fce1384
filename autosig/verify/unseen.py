"""Each rewritten function on inputs the profile never saw, in both runs.

A signature is written from the calls a profile saw: a batch dimension pinned because
every recorded batch had 8 rows, a ``tf.shape`` rewrite that only breaks at one row,
pass every recorded call. So verify also calls each watched function on inputs derived
from a recorded call (``recipes``):

- a sub-batch of 1 row, and of n-1 rows, of every tensor whose leading dimension is
  the batch size n;
- a prefix one shorter along each other dimension the rewrite left free (all tensors
  that have that size at that dimension shrink together: a sequence length shared by
  tokens and mask). Every dimension is tried; one the rewritten signature pins (it
  rejects the input while binding it) was not freed and is not counted.

Both runs derive the same inputs from the same recorded call (the workload is seeded
and deterministic), and the parent compares the effects (``effects_compare``) of each
input both runs tried. An input the original itself rejects (it raised) is outside the
program's domain: a rewrite may reject it too, and it is not counted as checked.

**When, and why then.** The calls run in the workload's own processes, at exit,
after the workload finished (``atexit``, before the profile and the status are
written): the compared calls are all done, so nothing they saw can be disturbed. They
call a twin of the function (its own trace cache: the function's trace count, XLA
compile count and step times stay the workload's) through verify's call wrapper, not
the profile recorder's. Each call starts from the same state in both runs: the
function's variables (its model, optimizer slots and step counters, a Generator's or
Keras SeedGenerator's state) are read before the call and assigned back after it, so
a train step on an unseen batch leaves nothing behind for the next unseen call.
Python state a function changes while tracing (a counter, a list) is not restored:
the program is ending, nothing reads it any more. First the recorded call itself is
made again, as a control: if that fails (the workload's context, a summary writer or
a strategy scope, is gone at exit), the function is not checked, and the report says
why. Functions whose arguments cannot be called twice (an iterator, a dataset,
distributed values) are skipped.
"""

from __future__ import annotations

import atexit
import contextlib
import inspect
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autosig.verify import effects

MAX_RECIPES = 5
"""Unseen inputs per function: batch 1, batch n-1 and three other dimensions at most."""
BINDING_FAILED = "Binding inputs to tf.function failed"
"""TensorFlow's message when a call does not fit the function's input_signature."""
REMEMBERED: dict[tuple[str, str, int], tuple[Any, tuple[Any, ...], dict[str, Any]]] = {}
"""Function -> (tf.function, args, kwargs) of the first call worth deriving inputs from."""
RESULTS: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
"""Function -> one entry per unseen input: {"label", "entry"} (``effects`` format)."""
SKIPPED: dict[tuple[str, str, int], str] = {}


# -- child side -----------------------------------------------------------------------------


def remember(key: tuple[str, str, int], fn_self: Any, args: Sequence[Any], kwds: Any) -> None:
    """Keep the first call with a dimension of 2 or more (NumPy arrays copied: a
    workload may reuse its buffers). Never raises into the user's program."""
    if key in REMEMBERED or key in SKIPPED or effects.capturing():
        return
    try:
        if not sys.modules["tensorflow"].executing_eagerly():
            return  # called while another function traced: symbolic arguments
        leaves = _leaves((list(args), dict(kwds)))
        why = _not_callable_twice(leaves)
        if why:
            SKIPPED[key] = why
            return
        if not any(any(d >= 2 for d in _shape(leaf)) for leaf in leaves):
            return
        REMEMBERED[key] = (fn_self, _copied(tuple(args)), _copied(dict(kwds)))
        _KEPT[key] = _instance(fn_self)
        _register()
    except Exception:  # noqa: BLE001 - no unseen inputs for this function
        return


_KEPT: dict[tuple[str, str, int], Any] = {}
"""The instance a remembered method belongs to: TensorFlow binds a method's function to
its instance through a weak reference, and a workload may drop the instance before
exit (a local of ``main()``); kept alive here for the unseen calls."""


def _instance(fn_self: Any) -> Any:
    """The instance a method's tf.function is bound to (None for a plain function):
    TensorFlow's wrapper keeps the bound method it was made from (a ``TfMethodTarget``
    behind a weak reference) as ``__original_wrapped__`` (``__wrapped__`` becomes
    AutoGraph's converted function after the first trace)."""
    wrapper = getattr(fn_self, "_python_function", None)
    original = inspect.getattr_static(wrapper, "__original_wrapped__", None)
    target = getattr(original, "__self__", None)
    with contextlib.suppress(Exception):
        return target.target  # TfMethodTarget: the instance behind its weak reference
    return None


def _leaves(value: Any) -> list[Any]:
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return []
    return tf.nest.flatten(value, expand_composites=False)


def _not_callable_twice(leaves: Sequence[Any]) -> str:
    tf = sys.modules["tensorflow"]
    for leaf in leaves:
        name = type(leaf).__name__
        if hasattr(leaf, "__next__") or isinstance(leaf, tf.data.Dataset):
            return f"an argument is a {name}: calling again would consume it"
        if "PerReplica" in name or "Mirrored" in name or "Distributed" in name:
            return f"an argument is a {name} (distributed values)"
    return ""


def _copied(value: Any) -> Any:
    np = sys.modules.get("numpy")
    tf = sys.modules["tensorflow"]
    if np is None:
        return value
    return tf.nest.map_structure(
        lambda leaf: leaf.copy() if isinstance(leaf, np.ndarray) else leaf, value
    )


def _shape(leaf: Any) -> tuple[int, ...]:
    """The static shape of a plain tensor or array argument, () for anything else."""
    tf = sys.modules["tensorflow"]
    np = sys.modules.get("numpy")
    if isinstance(leaf, tf.Variable):
        return ()
    if isinstance(leaf, tf.Tensor) or (np is not None and isinstance(leaf, np.ndarray)):
        dims = tuple(leaf.shape)
        if all(isinstance(d, int) for d in dims):
            return dims
    return ()


@dataclass
class Recipe:
    """One unseen input: which dimension of which arguments shrinks to what."""

    label: str
    dim: int
    size: int
    new_size: int
    leaves: list[int] = field(default_factory=list)
    """Indices (in the flattened arguments) of the tensors that shrink."""


def recipes(args: Any) -> list[Recipe]:
    """The unseen inputs to derive from one call's arguments (see the module docstring)."""
    leaves = _leaves(args)
    shapes = [_shape(leaf) for leaf in leaves]
    out: list[Recipe] = []
    batch = next((s[0] for s in shapes if s), None)
    if batch is not None and batch >= 2:
        members = [i for i, s in enumerate(shapes) if s and s[0] == batch]
        for rows in sorted({1, batch - 1}):
            out.append(Recipe(f"batch {rows} of {batch}", 0, batch, rows, members))
    groups: dict[tuple[int, int], list[int]] = {}
    for index, shape in enumerate(shapes):
        for dim, size in enumerate(shape):
            if dim >= 1 and size >= 2:
                groups.setdefault((dim, size), []).append(index)
    for (dim, size), members in sorted(groups.items()):
        if len(out) >= MAX_RECIPES:
            break
        out.append(Recipe(f"dim {dim} {size} -> {size - 1}", dim, size, size - 1, members))
    return out[:MAX_RECIPES]


def derive(args: Any, recipe: Recipe) -> Any:
    tf = sys.modules["tensorflow"]
    leaves = tf.nest.flatten(args, expand_composites=False)
    for index in recipe.leaves:
        cut = (slice(None),) * recipe.dim + (slice(0, recipe.new_size),)
        leaves[index] = leaves[index][cut]
    return tf.nest.pack_sequence_as(args, leaves, expand_composites=False)


def _describe(fn_self: Any, args: tuple[Any, ...], kwds: dict[str, Any], recipe: Recipe) -> str:
    """``batch 1 of 8 (x [1, 3], y [1])``: the recipe and the shapes it gave."""
    try:
        names = list(inspect.signature(fn_self._python_function).parameters)
    except (TypeError, ValueError, AttributeError):
        names = []
    shown = []
    for position, value in enumerate(args):
        name = names[position] if position < len(names) else f"arg{position}"
        shapes = [list(_shape(leaf)) for leaf in _leaves(value) if _shape(leaf)]
        if shapes:
            shown.append(f"{name} {shapes[0] if len(shapes) == 1 else shapes}")
    for name, value in kwds.items():
        shapes = [list(_shape(leaf)) for leaf in _leaves(value) if _shape(leaf)]
        if shapes:
            shown.append(f"{name} {shapes[0] if len(shapes) == 1 else shapes}")
    return f"{recipe.label} ({', '.join(shown)})" if shown else recipe.label


_CALLER: list[Any] = []
"""The verify run's own ``Function.__call__`` wrapper (``xla.patch_function_class``):
unseen calls go through it (effects noted, prints routed) but not through the
profile recorder's, so the run's profile never counts them."""


def set_caller(call: Any) -> None:
    _CALLER[:] = [call]


def _register() -> None:
    """Run ``run_all`` at exit, before every exit handler registered so far.

    atexit runs handlers last in, first out: registered again each time a function is
    remembered (after TensorFlow and Keras are imported), the unseen calls run while
    those libraries are whole (optree, under Keras's nests, empties its registry at
    exit) and before the profile recorder writes its profile."""
    atexit.unregister(run_all)
    atexit.register(run_all)


def run_all() -> None:
    """At exit: every remembered function on its unseen inputs (never raises)."""
    for key in sorted(REMEMBERED):
        with contextlib.suppress(Exception):
            _run(key, *REMEMBERED[key])


CONTROL = "the recorded call again"


def _run(key: tuple[str, str, int], fn_self: Any, args: tuple[Any, ...], kwds: Any) -> None:
    """Call a twin of the function (``_clone``: a trace cache of its own, so the
    function's own trace count, and what the profile says of it, stay the workload's)
    first on the recorded arguments (a control: after the workload its context, a
    summary writer's or a strategy's scope, may be gone), then on each unseen input."""
    if not _CALLER:
        return
    twin = fn_self._clone(None)
    found = RESULTS.setdefault(key, [])
    control = _call(twin, list(args), dict(kwds))
    if control is None or "e" in control:
        why = _exception_line(control)
        SKIPPED[key] = f"calling it again after the workload failed: {why}"
        return
    for recipe in recipes((list(args), dict(kwds))):
        new_args, new_kwds = derive((list(args), dict(kwds)), recipe)
        entry = _call(twin, new_args, new_kwds, fn_self)
        if entry is not None:
            label = _describe(fn_self, tuple(new_args), new_kwds, recipe)
            found.append({"label": label, "entry": entry})


def _call(twin: Any, args: list[Any], kwds: dict[str, Any], fn_self: Any = None) -> Any:
    """One call's effects; the function's variables read before and assigned back after."""
    variables = effects.call_variables(fn_self or twin, args, kwds)
    saved = [(var, var.read_value()) for var in variables]
    with effects.captured() as entries:
        with contextlib.suppress(Exception):  # noted by the call wrapper
            _CALLER[0](twin, *args, **kwds)
    for var, value in saved:
        with contextlib.suppress(Exception):
            var.assign(value)
    return entries[-1] if entries else None


def _exception_line(entry: Any) -> str:
    if not entry or "e" not in entry:
        return "nothing was noted"
    exc = entry["e"]
    return f"{exc.get('type')}: {str(exc.get('message', ''))[:200]}"


def write(status_dir: str) -> None:
    """``unseen-<pid>.json`` in the run's status directory (read by ``effects.load_run``)."""
    effects.write_status_file(
        status_dir,
        "unseen",
        {
            "functions": effects.per_function(RESULTS, "inputs"),
            "skipped": effects.per_function(SKIPPED, "why"),
        },
    )


# -- parent side ----------------------------------------------------------------------------


@dataclass
class UnseenComparison:
    """One function's unseen inputs, compared: how many, and the first that differed."""

    checked: list[str] = field(default_factory=list)
    """Labels of the unseen inputs compared (the original accepted them)."""
    outside: list[str] = field(default_factory=list)
    """Inputs the original rejects too: outside its domain, not counted."""
    missing: list[str] = field(default_factory=list)
    """Inputs tried in one run only (the recorded call differed between the runs)."""
    pinned: list[str] = field(default_factory=list)
    """Dimensions the rewritten signature pins (not freed): not unseen-input checks."""
    failed: str = ""
    """``label: what differed`` of the first unseen input that differed."""
    by_design: str = ""
    skipped: str = ""
    """Why the function was not called on unseen inputs ("" if it was)."""

    def summary(self) -> str:
        if self.skipped:
            return f"no unseen inputs checked ({self.skipped})"
        if not (self.checked or self.outside):
            return "no unseen inputs checked (no recorded argument has a dimension to shrink)"
        n = len(self.checked)
        text = f"{n} unseen shape{'s' if n != 1 else ''} checked"
        if self.checked:
            text += f" ({'; '.join(self.checked)})"
        if self.outside:
            text += f"; {len(self.outside)} rejected by the original too"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "checked": len(self.checked),
            "inputs": self.checked,
            "rejected_by_original": self.outside,
            "failed": self.failed or None,
            "skipped": self.skipped or None,
        }


def compare_unseen(
    old: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]],
    tolerance: Any,
    design: Any,
    skipped: str = "",
) -> UnseenComparison:
    """Pair the two runs' unseen inputs by label and compare each pair's effects."""
    from autosig.verify.effects_compare import compare_one

    result = UnseenComparison(skipped=skipped)
    by_label = {str(item["label"]): item["entry"] for item in new}
    notes: list[str] = []
    for item in old:
        label = str(item["label"])
        if label not in by_label:
            result.missing.append(label)
            continue
        a, b = item["entry"], by_label[label]
        if "e" in a:
            result.outside.append(label)
            continue
        if label.startswith("dim ") and BINDING_FAILED in str(b.get("e", {}).get("message", "")):
            result.pinned.append(label)
            continue
        result.checked.append(label)
        kind, what, why = compare_one(dict(a), dict(b), tolerance, design)
        if why and why not in notes:
            notes.append(why)
        if kind and not result.failed:
            result.failed = f"{label} ({kind}): {what}"
    result.by_design = "; ".join(notes)
    return result
