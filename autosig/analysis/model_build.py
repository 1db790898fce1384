"""Build a Keras model before the first call of a tf.function that builds it lazily.

A Keras model or layer made without its input shape (a ``Sequential`` without
``Input``, a subclassed ``keras.Model``, a bare ``Dense``) creates its variables on its
first call. Inside a tf.function that is variable creation on the first call, and
TensorFlow traces that call again (the profile shows two traces of the same call). The
variables made before the first call, the step traces once (measured with TensorFlow
2.21 / Keras 3.15: ``scripts/measure_model_build.py``).

Found statically, in the file the profile points at: a call ``M(p)`` or
``M(p, training=...)`` in the traced function, where ``p`` is one of its parameters
(never rebound in it), whose shape and dtype the profile recorded on the call that
traced twice, and ``M`` a name or ``self.<attr>`` bound once (``optimizer_build``'s
rules) to a Keras object made there and not built by then:

- ``keras.Sequential([...])`` without an input shape, or a Keras layer
  (``keras.layers.Dense(...)``): ``M.build((None, 8))``: they build every layer from
  the shape (the batch dimension ``None``, as Keras writes it);
- an instance of a project class subclassing a Keras ``Model`` or ``Layer`` (defined in
  the file): ``M(tf.zeros((32, 8), tf.float32))``, one eager call on zeros of the shape
  the first call had: a subclassed model's ``build(shape)`` makes no variables in Keras
  3, its call builds each layer it reaches.

It goes right after the statement binding ``M`` (all in one block: the module, a
function body or ``__init__``). Keras 3's built-in layers fix their initializers' seeds
when they are made, so building earlier gives the same weights; the build draws nothing
from TensorFlow's random state. It is *unsafe* where that is not shown: a project
class that calls ``add_weight`` (an initializer named by a string or made in ``build``
takes its seed from Python's ``random`` when the weight is made: measured, building
earlier changes the weights and the program's later ``random`` numbers), or whose
methods print, draw random numbers, store attributes outside ``__init__``/``build`` or
declare ``global``, or that holds layers of classes not followed (project classes of
other files); the eager call then runs that code once more. Unsafe too where a build at
module level would be the import's first eager TensorFlow work (it starts the runtime;
``tf.config`` threading setters called after the import then raise). Refused (the reason
returned): a model built or changed (``add``/``pop``/``build``/``load_weights``/
``set_weights``) elsewhere in the file, the first call's shape unknown, no TensorFlow
import to spell ``tf.zeros``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import libcst as cst

from autosig.analysis.optimizer_build import (
    NoBuild,
    Ref,
    built_by,
    built_when_created,
    first_parameter,
    resolve_reference,
    same_reference,
    stores_and_calls,
)
from autosig.source.metadata import MetadataView, iter_tree

SEQUENTIAL = frozenset(
    f"{base}.Sequential"
    for base in ("tensorflow.keras", "keras", "tensorflow.keras.models", "keras.models")
)
LAYER_MODULES = ("tensorflow.keras.layers.", "keras.layers.")
"""Keras' own layers: their ``build(input_shape)`` makes their variables."""
KERAS_BASES = frozenset(
    f"{base}.{name}"
    for base in ("tensorflow.keras", "keras", "tensorflow.keras.layers", "keras.layers")
    for name in ("Model", "Layer")
) | frozenset({"tensorflow.keras.models.Model", "keras.models.Model"})
CHANGES_MODEL = frozenset({"add", "pop", "build", "load_weights", "set_weights"})
"""Methods after which a model is built already or has other layers."""
TRAINING_KEYWORDS = frozenset({"training"})
"""Keywords the model call may pass besides the input (the eager call leaves it out:
inference mode, where Dropout draws nothing and BatchNormalization updates nothing)."""
QUIET_METHODS = frozenset({"__init__", "build"})
"""Methods that may store attributes (the others run again in the eager call)."""

ZEROS_DTYPES = frozenset(
    {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64"}
    | {"uint8", "uint16", "uint32", "uint64", "bool"}
)
"""Input dtypes a zeros tensor stands in for (not strings or complex numbers)."""

Shape = tuple[int | None, ...]


@dataclass(frozen=True)
class ModelInput:
    """What a parameter held on the call that built the model: shape and dtype."""

    shape: Shape
    dtype: str


@dataclass(frozen=True)
class ModelBuildEdit:
    """The statements to insert and where (after ``anchor``, a statement of the file)."""

    statements: tuple[str, ...]
    anchor: cst.BaseStatement
    line: int
    edits: dict[cst.CSTNode, cst.FlattenSentinel[cst.BaseStatement]]
    unsafe: str | None = None
    """Why the build may change results (None: it does not)."""

    def describe(self) -> str:
        return f"`{'`, `'.join(self.statements)}` after line {self.line}"


def plan_model_build(
    ctx: MetadataView,
    function: cst.FunctionDef | cst.Lambda,
    inputs: Mapping[str, ModelInput],
) -> ModelBuildEdit | NoBuild | None:
    """Where and how to build the models ``function`` builds on its first call, given the
    parameters' shapes on that call (``inputs``), or why it cannot be written here (None:
    it calls no Keras model made without its inputs)."""
    found: dict[str, tuple[str, cst.SimpleStatementLine, str | None]] = {}
    reasons: list[str] = []
    for call, parameter in _model_calls(function):
        ref = resolve_reference(ctx, function, call.func)
        if isinstance(ref, NoBuild):
            continue  # not a model made once outside the function (a parameter, a loss)
        if ref.code in found:
            continue
        one = _one_model(ctx, function, ref, inputs.get(parameter), parameter)
        if isinstance(one, NoBuild):
            reasons.append(one.reason)
            continue
        if one is not None:
            found[ref.code] = one
    if not found:
        return NoBuild(reasons[0]) if reasons else None
    statements = [s for s, _, _ in found.values()]
    anchors = [a for _, a, _ in found.values()]
    if len({id(ctx.parent(a)) for a in anchors}) != 1:
        return NoBuild("the models are made in different blocks: build each by hand")
    edits: dict[cst.CSTNode, cst.FlattenSentinel[cst.BaseStatement]] = {}
    config = ctx.module.config_for_parsing
    for anchor in {id(a): a for a in anchors}.values():
        mine = [s for s, a, _ in found.values() if a is anchor]
        new = [cst.parse_statement(f"{text}\n", config=config) for text in mine]
        edits[anchor] = cst.FlattenSentinel([anchor, *new])
    last = max(anchors, key=ctx.position)
    why = [u for _, _, u in found.values() if u]
    if isinstance(ctx.parent(last), cst.Module) and not runtime_started(ctx):
        why.append(
            "the build is the module's first eager TensorFlow work, at import: "
            "`tf.config` threading settings made after the import would then raise"
        )
    unsafe = "; ".join(dict.fromkeys(why))
    return ModelBuildEdit(tuple(statements), last, ctx.line_span(last)[-1], edits, unsafe or None)


def _model_calls(function: cst.FunctionDef | cst.Lambda) -> Iterator[tuple[cst.Call, str]]:
    """``M(p)`` / ``M(p, training=...)`` calls on a parameter ``p`` never rebound."""
    if not isinstance(function, cst.FunctionDef):
        return
    params = {
        p.name.value
        for p in (*function.params.posonly_params, *function.params.params)
        if p.name.value != first_parameter(function) or not _is_method(function)
    }
    rebound = _stored_names(function)
    for node in iter_tree(function.body):
        if not isinstance(node, cst.Call) or not isinstance(node.func, (cst.Name, cst.Attribute)):
            continue
        positional = [a for a in node.args if a.keyword is None]
        keywords = {a.keyword.value for a in node.args if a.keyword is not None}
        if len(positional) != 1 or positional[0].star or not keywords <= TRAINING_KEYWORDS:
            continue
        value = positional[0].value
        if isinstance(value, cst.Name) and value.value in params and value.value not in rebound:
            yield node, value.value


def _is_method(function: cst.FunctionDef) -> bool:
    params = function.params.params
    return bool(params) and params[0].name.value in ("self", "cls")


def _stored_names(function: cst.FunctionDef) -> set[str]:
    """Names assigned somewhere in ``function`` (targets, loop and ``with`` variables)."""
    out: set[str] = set()
    for node in iter_tree(function.body):
        target: cst.CSTNode | None = None
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)):
            target = node.target
        elif isinstance(node, cst.CompFor):
            target = node.target
        elif isinstance(node, cst.AsName):
            target = node.name
        elif isinstance(node, cst.NamedExpr):
            target = node.target
        if target is not None:
            out.update(n.value for n in iter_tree(target) if isinstance(n, cst.Name))
    return out


def _one_model(
    ctx: MetadataView,
    function: cst.FunctionDef | cst.Lambda,
    ref: Ref,
    seen: ModelInput | None,
    parameter: str,
) -> tuple[str, cst.SimpleStatementLine, str | None] | NoBuild | None:
    """(the build statement, the statement it goes after, why unsafe) for one model;
    None when it is not a Keras object made lazily (a loss, a metric, a model with its
    inputs)."""
    value = ref.value
    if not isinstance(value, cst.Call) or built_when_created(ctx, value):
        return None
    kind = _kind(ctx, value)
    if kind is None:
        return None
    block = ctx.parent(ref.statement)
    if built_by(ctx, ref, block) is not None:
        return None  # built by a statement of its own block: the variables are others
    changed = _changed_elsewhere(ctx, function, ref.code)
    if changed is not None:
        return NoBuild(changed)
    if seen is None or not seen.shape:
        return NoBuild(
            f"the shape `{parameter}` had on the first call is not in the profile: build "
            f"`{ref.code}` by hand ({ref.code}(tf.zeros(shape)) after it is made)"
        )
    if seen.dtype not in ZEROS_DTYPES:
        return NoBuild(
            f"`{parameter}` was {seen.dtype} on the first call: build `{ref.code}` by hand"
        )
    if kind == "project":
        alias = _tensorflow_alias(ctx)
        if alias is None:
            return NoBuild(f"no `import tensorflow` to spell the zeros `{ref.code}` is built on")
        shape = ", ".join(str(d) for d in seen.shape) + ("," if len(seen.shape) == 1 else "")
        statement = f"{ref.code}({alias}.zeros(({shape}), {alias}.{seen.dtype}))"
        unsafe = _project_unsafe(ctx, value)
    else:
        dims = ("None", *(str(d) for d in seen.shape[1:]))
        shape = ", ".join(dims) + ("," if len(dims) == 1 else "")
        statement = f"{ref.code}.build(({shape}))"
        unsafe = _sequential_unsafe(ctx, value) if kind == "sequential" else None
    return statement, ref.statement, unsafe


def _kind(ctx: MetadataView, value: cst.Call) -> str | None:
    """``sequential``, ``layer`` (Keras' own) or ``project`` (a Keras subclass of the file)."""
    names = ctx.qualified_names(value.func)
    if names & SEQUENTIAL:
        return "sequential"
    if any(n.startswith(LAYER_MODULES) for n in names):
        return "layer"
    if _project_class(ctx, value.func) is not None:
        return "project"
    return None


def _project_class(ctx: MetadataView, func: cst.BaseExpression) -> cst.ClassDef | None:
    """The class of the file ``func`` names, when it subclasses Keras' Model or Layer
    (through classes of the file)."""
    if not isinstance(func, cst.Name):
        return None
    classes = {s.name.value: s for s in ctx.module.body if isinstance(s, cst.ClassDef)}
    seen: set[str] = set()
    name = func.value
    cls = classes.get(name)
    if cls is None:
        return None
    todo = [cls]
    while todo:
        current = todo.pop()
        if current.name.value in seen:
            continue
        seen.add(current.name.value)
        for base in current.bases:
            if ctx.qualified_names(base.value) & KERAS_BASES:
                return cls
            if isinstance(base.value, cst.Name) and base.value.value in classes:
                todo.append(classes[base.value.value])
    return None


def _changed_elsewhere(
    ctx: MetadataView, function: cst.FunctionDef | cst.Lambda, code: str
) -> str | None:
    for c in stores_and_calls(ctx).method_calls(CHANGES_MODEL):
        if same_reference(c.receiver, code) and not ctx.is_within(c.call, function):
            return (
                f"line {c.line} calls `{ctx.code(c.call.func)}`: the model is "
                "built or changed there, so where to build it first is not known here"
            )
    return None


def _tensorflow_alias(ctx: MetadataView) -> str | None:
    for node in ctx.module.body:
        if not isinstance(node, cst.SimpleStatementLine):
            continue
        for small in node.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if ctx.code(alias.name) == "tensorflow":
                        asname = alias.asname
                        if asname is None:
                            return "tensorflow"
                        if isinstance(asname.name, cst.Name):
                            return asname.name.value
    return None


# -- what building earlier may change ------------------------------------------------------------

STARTS_RUNTIME = ("tensorflow.keras.optimizers.", "keras.optimizers.", "tensorflow.keras.metrics.")
STARTS_RUNTIME_ALSO = ("keras.metrics.",)
EAGER_AT_CREATION = frozenset(
    {"tensorflow.Variable", "tensorflow.constant", "tensorflow.zeros", "tensorflow.ones"}
    | {"tensorflow.convert_to_tensor", "tensorflow.keras.Input", "keras.Input"}
    | {"tensorflow.keras.layers.Input", "keras.layers.Input"}
)
"""Calls that start TensorFlow's eager runtime when they run (measured: a Keras
optimizer or metric makes variables when made; a Sequential without inputs does not)."""


def runtime_started(ctx: MetadataView) -> bool:
    """The module's own statements (outside defs and classes) start TensorFlow's eager
    runtime at import anyway: a build there adds no new eager work to the import."""
    for statement in ctx.module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        for node in iter_tree(statement):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Call):
                names = ctx.qualified_names(node.func)
                if names & EAGER_AT_CREATION or any(
                    n.startswith(STARTS_RUNTIME + STARTS_RUNTIME_ALSO) for n in names
                ):
                    return True
    return False


def _sequential_unsafe(ctx: MetadataView, value: cst.Call) -> str | None:
    """A Sequential's build runs its layers' builds: project layers among them are
    checked as a project class is."""
    for node in iter_tree(value):
        if isinstance(node, cst.Call) and node is not value:
            cls = _project_class(ctx, node.func)
            if cls is not None:
                why = _class_unsafe(ctx, cls, set())
                if why:
                    return why
            elif isinstance(node.func, cst.Name) and not ctx.qualified_names(node.func):
                return f"`{ctx.code(node.func)}` in the Sequential is not followed"
    return None


def _project_unsafe(ctx: MetadataView, value: cst.Call) -> str | None:
    cls = _project_class(ctx, value.func)
    return _class_unsafe(ctx, cls, set()) if cls is not None else None


def _class_unsafe(ctx: MetadataView, cls: cst.ClassDef, seen: set[str]) -> str | None:
    """Why building an instance of ``cls`` earlier, by one eager call, may change
    results (None: nothing found)."""
    name = cls.name.value
    if name in seen:
        return None
    seen.add(name)
    classes = {s.name.value: s for s in ctx.module.body if isinstance(s, cst.ClassDef)}
    for base in cls.bases:
        if isinstance(base.value, cst.Name) and base.value.value in classes:
            why = _class_unsafe(ctx, classes[base.value.value], seen)
            if why:
                return why
    for method in (s for s in cls.body.body if isinstance(s, cst.FunctionDef)):
        for node in iter_tree(method):
            why = _node_unsafe(ctx, name, method, node, classes, seen)
            if why:
                return why
    return None


def _node_unsafe(
    ctx: MetadataView,
    cls: str,
    method: cst.FunctionDef,
    node: cst.CSTNode,
    classes: Mapping[str, cst.ClassDef],
    seen: set[str],
) -> str | None:
    where = f"`{cls}.{method.name.value}` (line {ctx.position(node)[0]})"
    if isinstance(node, (cst.Global, cst.Nonlocal)):
        return f"{where} changes module state; the eager build call runs it once more"
    if (
        isinstance(node, cst.Attribute)
        and method.name.value not in QUIET_METHODS
        and stores_and_calls(ctx).is_store(node)
    ):
        return f"{where} stores `{ctx.code(node)}`; the eager build call runs it once more"
    if not isinstance(node, cst.Call):
        return None
    names = ctx.qualified_names(node.func)
    code = ctx.code(node.func)
    if isinstance(node.func, cst.Attribute) and node.func.attr.value in (
        "add_weight",
        "add_variable",
    ):
        return (
            f"{where} makes a weight whose initializer takes its seed when the weight is "
            "made: building earlier can change the initial weights (and Python's random "
            "numbers after it)"
        )
    if code == "print" or any("random" in n.split(".") for n in names) or "random" in code:
        return f"{where} calls `{code}`; the eager build call runs it once more"
    if method.name.value == "__init__" and isinstance(node.func, cst.Name):
        inner = classes.get(node.func.value)
        if inner is not None:
            return _class_unsafe(ctx, inner, seen)
        if not names or not any(n.startswith(("tensorflow.", "keras.")) for n in names):
            if not hasattr(builtins, node.func.value):
                return f"{where} makes `{code}`, which is not followed"
    return None


def with_edits(
    module: cst.Module, edits: Mapping[cst.CSTNode, cst.FlattenSentinel[cst.BaseStatement]]
) -> cst.Module:
    """``module`` with ``edits`` (original statements -> replacements) made."""

    class _Swap(cst.CSTTransformer):
        def on_leave(self, original_node, updated_node):  # type: ignore[override]
            return edits.get(original_node, updated_node)

    return module.visit(_Swap())
