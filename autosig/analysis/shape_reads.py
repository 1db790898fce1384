"""Shape-use analysis: which dimensions of which tensor parameters the code reads statically.

A relaxed trace (``None`` dimensions from an ``input_signature`` or from
``reduce_retracing=True``) turns ``x.shape[i]`` into ``None`` while tracing.
``tf.TensorArray(size=x.shape[0])`` then raises, ``range(x.shape[1])`` raises and
``if x.shape[-1] == 1:`` silently traces the other branch. This module finds such reads
with libcst (no import of the user's code), in the traced function and in the project
functions and methods it calls, so inference can keep those dimensions fixed and the
rewrite can stay behaviour-preserving for every input the original accepts.

It also finds random draws whose stream depends on the number of traces (the stateful
TensorFlow and Keras APIs of ``tf_random_apis``, generated from TensorFlow's op
registry: ``tf.random.*``, ``tf.nn.dropout``, ``tf.nn.nce_loss``,
``tf.image.sample_distorted_bounding_box``, ...; Python's and NumPy's RNG): each trace
freezes its own random state, so a fix that traces fewer times changes the numbers drawn.

It follows every call into project code a careful reviewer would: helpers and methods,
a project Keras layer or model (``__call__`` to ``call``, and ``build`` with the input's
static shape) reached through ``self.<attr>``, a module-level instance, a class
attribute, ``keras.Sequential([...])`` or a functional model, a class or function
imported from another module of the project (``Geometry.pairwise(points)``), and the
function arguments of TensorFlow's higher-order ops (``tf.map_fn``, ``tf.scan``,
``tf.while_loop``, ``tf.vectorized_map``, ``keras.ops.map``, ...: the body gets elements
of the tensor). What a name or attribute is bound to is ``module_view``'s answer;
TensorFlow objects (``tape.watch``, ``TensorArray``, ``Variable.assign``, optimizers,
Keras losses and metrics, ``strategy.run``, summary writers) are ``tf_objects``'s table,
each entry tested with TensorFlow; ops needing a static size (``tf.unstack``,
``keras.ops.unstack``, ...) and the higher-order ops are ``tf_apis``'s.

Deliberately conservative: a value derived from a parameter (``h = x @ w``) may have
any of its dimensions read, so a static read of ``h.shape`` counts for every dimension
of ``x``. Code outside the project (a Keras layer or model, another library) is assumed
to accept any size in dimension 0 (the batch, as Keras's own layers do) and may read
every other dimension statically; so is code the analysis cannot resolve (a model passed
to ``__init__``), whose reads say so (``unseen``).

One module, because it is one walk: ``_Tracer`` holds one analysis's settings per
module, and ``_FunctionWalk`` follows each parameter's taint through one function and
into the functions it calls, recording reads and random draws as it goes; the read
kinds, the taint and the following of calls only make sense together. Which of these
reads may become ``tf.shape(x)[i]`` is inference's choice: ``infer/shape_rewrites.py``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import libcst as cst
from libcst.metadata import QualifiedNameSource

from autosig.analysis.module_view import (
    Bound,
    Env,
    LayerStack,
    LibraryInstance,
    LibraryObject,
    ModuleView,
    ProjectClass,
    ProjectFunction,
    ProjectInstance,
    first_param,
    function_locals,
    is_stub,
)
from autosig.analysis.project_writes import OtherFiles
from autosig.analysis.python_values import short_code, target_names
from autosig.analysis.tf_apis import (
    HIGHER_ORDER,
    STATIC_SHAPE_FUNCTIONS,
    STATIC_SIZE_APIS,
    Feed,
    HigherOrder,
    StaticSize,
    normalised_api,
    slot_argument,
)
from autosig.analysis.tf_objects import method_of
from autosig.analysis.tf_random_apis import draws_per_trace
from autosig.analysis.trace_state import (
    StateChange,
    StateKind,
    StateRead,
    settings_reason,
    state_changes,
    state_reason,
)
from autosig.source.metadata import children, index_tree

ReadKind = Literal["control", "python", "tf", "callee"]
"""How a static shape read is used: it steers Python control flow, is a Python value
(range, list size, returned), only sizes TensorFlow ops, or the tensor goes to code
outside the project (which may read it)."""

ALL: frozenset[int] | None = None
"""A read of every dimension (which ones is not known)."""

MAX_DEPTH = 6
"""How deep calls into project functions are followed."""

_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "add", "setdefault"})
_TAPE_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian"})
_RANK_ONLY = frozenset({"rank", "ndims"})
_SHAPE_METHODS = frozenset({"get_shape"})


def autograph_enabled(decorator_args: Mapping[str, str]) -> bool:
    """Whether a tf.function converts Python control flow (its ``autograph`` option)."""
    return decorator_args.get("autograph", "True").strip() != "False"


_ITERATING_BUILTINS = frozenset(
    {
        "list",
        "tuple",
        "zip",
        "enumerate",
        "sum",
        "sorted",
        "map",
        "filter",
        "iter",
        "set",
        "reversed",
        "dict",
        "any",
        "all",
    }
)

_CAST_LIKE = frozenset(
    {
        "tensorflow.cast",
        "tensorflow.identity",
        "tensorflow.convert_to_tensor",
        "tensorflow.stop_gradient",
        "tensorflow.dtypes.cast",
        "tensorflow.saturate_cast",
    }
)
"""TensorFlow calls whose result has exactly their first argument's shape."""


# -- strategy.run(fn, args=(...)): a distributed step calls fn once per replica -------
# To the analysis that is a call of ``fn`` with those arguments: reads of a static shape
# inside ``fn`` are reads of the step's parameter.

RUN_METHODS = frozenset({"run", "experimental_run_v2"})
"""``tf.distribute.Strategy`` methods that call a function once per replica."""


def strategy_run_parts(call: cst.Call) -> tuple[cst.BaseExpression, list[cst.Arg]] | None:
    """(the function run per replica, the arguments it gets) of ``X.run(fn, args=...)``.

    None unless the call has that shape with literal ``args``/``kwargs`` (a tuple or list,
    a dict with string keys) and no ``*``/``**`` spreading: then each argument is known.
    """
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in RUN_METHODS:
        return None
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
    if any(a.star for a in call.args) or len(positional) > 1:
        return None
    fn = positional[0].value if positional else None
    if fn is None and "fn" in keywords:
        fn = keywords["fn"].value
    if not isinstance(fn, (cst.Name, cst.Attribute)):
        return None
    out: list[cst.Arg] = []
    args = keywords.get("args")
    if args is not None:
        if not isinstance(args.value, (cst.Tuple, cst.List)):
            return None
        for element in args.value.elements:
            if isinstance(element, cst.StarredElement):
                return None
            out.append(cst.Arg(value=element.value))
    kwargs = keywords.get("kwargs")
    if kwargs is not None:
        if not isinstance(kwargs.value, cst.Dict):
            return None
        for element in kwargs.value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(
                element.key, cst.SimpleString
            ):
                return None
            name = element.key.evaluated_value
            if not isinstance(name, str) or not name.isidentifier():
                return None
            out.append(cst.Arg(value=element.value, keyword=cst.Name(name)))
    return fn, out


PYTHON_GENERATORS = frozenset(
    {
        "numpy.random.default_rng",
        "numpy.random.Generator",
        "numpy.random.RandomState",
        "random.Random",
        "random.SystemRandom",
    }
)
"""Python and NumPy random generator classes: their draws while tracing are frozen into
each trace, so tracing fewer times changes them."""


@dataclass(frozen=True)
class ShapeRead:
    """A place where the code reads parameter ``param``'s static shape as a Python value."""

    param: str
    dims: frozenset[int] | None
    """Dimensions read; None: any of them."""
    line: int
    code: str
    kind: ReadKind
    via: str = ""
    """``helper()`` (line 12) when the read is in a function the traced one calls."""
    node: cst.CSTNode | None = field(default=None, compare=False, repr=False)
    """The read expression (``x.shape[0]``), so a rewrite can find it (not compared)."""
    unseen: bool = False
    """A ``callee`` read of code the analysis could not resolve (an object from a
    parameter, a call through an attribute it cannot bind), not known library code."""

    def covers(self, dim: int) -> bool:
        return self.dims is None or dim in self.dims

    def reads_dim(self, dim: int) -> bool:
        """Whether this read (any kind) may read dimension ``dim``: code outside the
        project is assumed to accept any batch size (dimension 0)."""
        if self.kind == "callee" and dim == 0:
            return False
        return self.covers(dim)

    @property
    def definite(self) -> bool:
        """A read in code we can see (not a guess about code outside the project)."""
        return self.kind != "callee"

    def against_reduce_retracing(self) -> str:
        """Why ``reduce_retracing=True`` could break this read (its relaxed dims are None)."""
        return (
            f"reduce_retracing could make `{self.param}`'s dimensions None where {self.describe()}"
        )

    def describe(self) -> str:
        what = {
            "control": "steers Python control flow with it",
            "python": "uses it as a Python value",
            "tf": "passes it to TensorFlow as a static size",
            "callee": (
                "passes the tensor to code the analysis cannot see, which may read it"
                if self.unseen
                else "passes the tensor to code outside the project, which may read it"
            ),
        }[self.kind]
        where = f"line {self.line}" + (f", in {self.via}" if self.via else "")
        return f"`{self.code}` ({where}) {what}"


@dataclass(frozen=True)
class RandomDraw:
    """A random op whose numbers depend on how many times the function traced."""

    line: int
    code: str
    via: str = ""

    def describe(self) -> str:
        where = f"line {self.line}" + (f", in {self.via}" if self.via else "")
        return f"`{self.code}` ({where})"


@dataclass
class ShapeUse:
    """Everything the analysis found for one traced function."""

    reads: dict[str, list[ShapeRead]] = field(default_factory=dict)
    random_draws: list[RandomDraw] = field(default_factory=list)
    state_reads: list[StateRead] = field(default_factory=list)
    """Python state (module variables, ``self`` attributes) read while tracing."""
    walked: set[int] = field(default_factory=set)
    """ids of the defs the analysis walked: the traced code (its own writes are AS103's)."""
    view: ModuleView | None = field(default=None, repr=False)
    """The traced function's module, as the analysis read it."""
    state_reason: str | None = None
    """Why tracing fewer times is unsafe for the Python state read while tracing: state
    the project changes (``trace_state.state_reason``), else settings code outside the
    project may change (``trace_state.settings_reason``); None: neither, or not asked
    (``shape_use``'s ``display``)."""

    def state_changes(self, project: OtherFiles | None, display: str) -> list[StateChange]:
        """The Python state read while tracing that the project changes (``trace_state``):
        ``project`` is the project's other files, ``display`` the traced file's name."""
        if self.view is None:
            return []
        return state_changes(self.state_reads, self.view, self.walked, project, display)

    def control(self) -> list[ShapeRead]:
        return [r for reads in self.reads.values() for r in reads if r.kind == "control"]


Taint = dict[str, bool]
"""Parameter of the traced function -> whether the value *is* it (same shape: exact)."""


def shape_use(
    view: ModuleView,
    function: cst.FunctionDef | cst.Lambda,
    params: Sequence[str],
    ranks: Mapping[str, int | None] | None = None,
    autograph: bool = True,
    structures: Collection[str] = (),
    *,
    project: OtherFiles | None = None,
    display: str | None = None,
) -> ShapeUse:
    """Static shape reads of ``params`` in ``function`` and the project code it calls.

    ``view`` is ``function``'s module (``ModuleView(wrapper, modules)``; a caller asking
    several questions of one module builds it once and hands it to each): its wrapper
    must have ``ScopeProvider`` and ``PositionProvider`` resolvable (the discovery
    wrappers of ``check``, ``fix`` and inference all do), and its ``modules`` parses
    another module of the project by dotted name (None when it is not in the project),
    so calls into imported project functions are followed too. ``ranks`` gives a
    parameter's rank when known, so ``x.shape[-1]`` names its dimension. ``autograph``
    is the tf.function's option (a ``for`` loop over a tensor is then a graph loop).
    ``structures``: parameters that were a tuple, list or dict in every call (unpacking or
    iterating them reads no tensor's shape). ``display``, the traced file's name: also
    look for the state read while tracing that the project (``project``, its other files;
    None: this file only) changes, and say why in ``ShapeUse.state_reason``.
    """
    tracer = _Tracer(view, dict(ranks or {}), autograph, frozenset(structures))
    result = ShapeUse(reads={p: [] for p in params}, view=view)
    taint = {p: {p: True} for p in params}
    owner = view.enclosing_class(function)
    self_class = ProjectClass(view, owner) if owner is not None else None
    tracer.scan(function, taint, result, via="", depth=0, self_class=self_class)
    for name, reads in result.reads.items():
        unique: dict[tuple[Any, ...], ShapeRead] = {}
        for read in reads:
            unique.setdefault((read.line, read.code, read.kind, read.dims, read.via), read)
        result.reads[name] = sorted(unique.values(), key=_read_order)
    seen: dict[tuple[int, str, str], RandomDraw] = {}
    for draw in result.random_draws:
        seen.setdefault((draw.line, draw.code, draw.via), draw)
    result.random_draws = list(seen.values())
    states: dict[tuple[str, int, str], StateRead] = {}
    for state in result.state_reads:
        states.setdefault((state.code, state.line, state.via), state)
    result.state_reads = list(states.values())
    if display is not None:
        changes = result.state_changes(project, display)
        result.state_reason = state_reason(changes) or settings_reason(result.state_reads)
    return result


def _read_order(read: ShapeRead) -> tuple[int, int, str]:
    rank = {"control": 0, "python": 1, "tf": 2, "callee": 3}[read.kind]
    return rank, read.line, read.code


def _int_value(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return -int(node.expression.evaluated_value)
    return None


class _Tracer:
    """Walks functions of one module (and, through ``for_view``, of the project modules
    they call into); the module questions go to its ``ModuleView``."""

    def __init__(
        self,
        view: ModuleView,
        ranks: dict[str, int | None],
        autograph: bool,
        structures: frozenset[str] = frozenset(),
        shared: _Shared | None = None,
    ) -> None:
        self.view = view
        self.ranks = ranks
        self.autograph = autograph
        self.structures = structures
        """Traced parameters that are Python containers (see ``shape_use``)."""
        self.shared = _Shared() if shared is None else shared
        self.name = view.name
        """The module's dotted name when it was reached through an import ('' for the first)."""

    def for_view(self, view: ModuleView) -> _Tracer:
        """The tracer of another module of the project (one per module and analysis)."""
        if view is self.view:
            return self
        found = self.shared.tracers.get(id(view))
        if found is None:
            found = _Tracer(view, self.ranks, self.autograph, self.structures, self.shared)
            self.shared.tracers[id(view)] = found
        return found

    # -- the module's answers ----------------------------------------------------------------
    def line(self, node: cst.CSTNode) -> int:
        return self.view.line(node)

    def names(self, node: cst.CSTNode) -> set[tuple[str, QualifiedNameSource]]:
        return self.view.names(node)

    def tf_api(self, func: cst.BaseExpression) -> str | None:
        return self.view.tf_api(func)

    def builtin(self, func: cst.BaseExpression) -> str | None:
        return self.view.builtin(func)

    # -- the walk ---------------------------------------------------------------------------
    def scan(
        self,
        function: cst.FunctionDef | cst.Lambda,
        params: dict[str, Taint],
        result: ShapeUse,
        via: str,
        depth: int,
        self_class: ProjectClass | None = None,
        shapes: dict[str, Taint] | None = None,
    ) -> None:
        key = (
            id(function),
            tuple(sorted((k, tuple(sorted(v.items()))) for k, v in params.items())),
            tuple(sorted((k, tuple(sorted(v.items()))) for k, v in (shapes or {}).items())),
        )
        if key in self.shared.active:
            return  # recursion: already being walked with the same inputs
        if not params and not shapes:
            # walked for its random draws only: once per analysis is enough
            if id(function) in self.shared.walked_untainted:
                return
            self.shared.walked_untainted.add(id(function))
        self.shared.active.add(key)
        result.walked.add(id(function))
        try:
            _FunctionWalk(self, function, params, result, via, depth, self_class, shapes).run()
        finally:
            self.shared.active.discard(key)


@dataclass
class _Shared:
    """What the tracers of one analysis share."""

    active: set[Any] = field(default_factory=set)
    tracers: dict[int, _Tracer] = field(default_factory=dict)
    walked_untainted: set[int] = field(default_factory=set)


class _FunctionWalk:
    """The data flow of one function body: which local names carry which parameters."""

    def __init__(
        self,
        tracer: _Tracer,
        function: cst.FunctionDef | cst.Lambda,
        params: dict[str, Taint],
        result: ShapeUse,
        via: str,
        depth: int,
        self_class: ProjectClass | None = None,
        shapes: dict[str, Taint] | None = None,
    ) -> None:
        self.t = tracer
        self.function = function
        self.result = result
        self.via = via
        self.depth = depth
        self.self_class = self_class
        """The class of the instance ``self`` is in this method (its own, or a subclass's)."""
        self.nodes, self.parents, self.kids = index_tree(function)
        """The function's nodes (``iter_tree``'s order), their parents and children: one
        walk, asked by every question below."""
        self.taint: dict[str, Taint] = {k: dict(v) for k, v in params.items()}
        self.shapes: dict[str, Taint] = dict(shapes or {})
        """Names bound to a parameter's static shape (``build(self, input_shape)``)."""
        self._env: Env | None = None
        self._apis: dict[int, str | None] = {}
        self.nested = {
            node.name.value: node
            for node in self.nodes
            if isinstance(node, cst.FunctionDef) and node is not function
        }
        """Defs nested in this function, by name: their bodies are walked with it."""
        self.inline_calls: set[int] = set()
        """Calls of defs nested here: their bodies are read in this walk."""
        self.inline_functions: set[int] = set()
        """Function arguments of higher-order ops read in this walk (nested defs, lambdas)."""

        self.assignments: list[tuple[list[str], cst.BaseExpression, bool]] = []
        self.sequences: set[str] = set()
        """Names bound to Python lists/tuples: iterating them reads no tensor's shape."""
        self._collect()
        self._propagate()

    def env(self) -> Env:
        """Where this function's names are resolved (module, locals, ``self``)."""
        if self._env is None:
            own = None
            if isinstance(self.function, cst.FunctionDef) and self.self_class is not None:
                own = first_param(self.function)
            self._env = Env(self.t.view, function_locals(self.function), own, self.self_class)
        return self._env

    def api(self, func: cst.BaseExpression) -> str | None:
        """The TensorFlow/Keras API a call's function names, normalised (cached)."""
        key = id(func)
        if key not in self._apis:
            name = None if self.t.builtin(func) else self.t.tf_api(func)
            self._apis[key] = normalised_api(name) if name is not None else None
        return self._apis[key]

    # -- data flow ------------------------------------------------------------------------
    def _collect(self) -> None:
        for node in self.nodes:
            pairs: list[tuple[cst.CSTNode, cst.BaseExpression, bool]] = []
            if isinstance(node, cst.Assign):
                pairs = [(t.target, node.value, False) for t in node.targets]
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                pairs = [(node.target, node.value, False)]
            elif isinstance(node, cst.AugAssign):
                pairs = [(node.target, node.value, False)]
            elif isinstance(node, (cst.For, cst.CompFor)):
                pairs = [(node.target, node.iter, True)]
            elif isinstance(node, cst.NamedExpr):
                pairs = [(node.target, node.value, False)]
            elif isinstance(node, cst.Call):
                pairs = self._passed_to_inner_functions(node)
            for target, value, element in pairs:
                names = list(target_names(target))
                if names:
                    self.assignments.append((names, value, element))
                    if not element and self._is_sequence(value):
                        self.sequences.update(names)

    def _passed_to_inner_functions(
        self, call: cst.Call
    ) -> list[tuple[cst.CSTNode, cst.BaseExpression, bool]]:
        """What a call passes to the parameters of a def nested here or a lambda, whose
        bodies this walk reads: ``helper(x)`` of a nested def, and the function
        arguments of ``tf.map_fn``/``tf.scan``/``tf.while_loop``/... (their elements)."""
        out: list[tuple[cst.CSTNode, cst.BaseExpression, bool]] = []
        func = call.func
        if isinstance(func, cst.Name) and func.value in self.nested and not self._bound_here(func):
            inner = self.nested[func.value]
            self.inline_calls.add(id(call))
            for param, value in _bind_arguments(inner, call.args, skip_self=False):
                out.append((param.name, value, False))
            return out
        api = self.api(func)
        spec = HIGHER_ORDER.get(api) if api is not None else None
        if spec is None:
            return out
        for slot in spec.functions:
            fn = slot_argument(call, slot)
            inner_fn: cst.FunctionDef | cst.Lambda | None = None
            if isinstance(fn, cst.Lambda):
                inner_fn = fn
            elif isinstance(fn, cst.Name) and fn.value in self.nested:
                inner_fn = self.nested[fn.value]
            if inner_fn is None:
                continue
            self.inline_functions.add(id(fn))
            params = _positional(inner_fn)
            for index, feed in enumerate(spec.feeds):
                for target, value, element in _fed(call, spec, feed, params[index:]):
                    out.append((target, value, element))
        return out

    def _bound_here(self, name: cst.Name) -> bool:
        """A name rebound in this function to something else than its nested def."""
        return any(
            name.value in names and not isinstance(value, cst.FunctionDef)
            for names, value, _ in self.assignments
        )

    def _is_sequence(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _TAPE_METHODS
            and len(value.args) >= 2
            and not isinstance(value.args[1].value, cst.Name)
        ):
            return True  # tape.gradient(loss, [w, b] / model.trainable_variables): a list
        return isinstance(value, cst.Call) and self.t.builtin(value.func) in ("list", "tuple")

    def _is_sequence_value(self, node: cst.BaseExpression) -> bool:
        if self._is_sequence(node):
            return True
        if not isinstance(node, cst.Name):
            return False
        if node.value in self.sequences:
            return True
        taint = self.taint.get(node.value, {})
        return bool(taint) and all(exact and p in self.t.structures for p, exact in taint.items())

    def _propagate(self) -> None:
        for _ in range(30):
            changed = False
            for names, value, element in self.assignments:
                taint = self.taint_of(value)
                if element or len(names) > 1:
                    taint = {p: False for p in taint}  # a row or a part: not the same shape
                for name in names:
                    current = self.taint.setdefault(name, {})
                    for param, exact in taint.items():
                        if param not in current:
                            current[param] = exact
                            changed = True
                        elif current[param] and not exact:
                            current[param] = False
                            changed = True
            if not changed:
                return

    def taint_of(self, node: cst.CSTNode) -> Taint:
        """Parameters whose tensors flow into ``node``'s value (exact: it is that tensor)."""
        if isinstance(node, cst.Name):
            return dict(self.taint.get(node.value, {}))
        if isinstance(node, cst.Attribute):
            if node.attr.value in ("ndim", "dtype", "name", "device"):
                return {}  # no size in it
            # x.shape (reported where it is read) and all else: a value whose sizes may
            # come from x's, so ``tf.zeros([x.shape[0]]).shape[0]`` still counts for x
            return {p: False for p in self.taint_of(node.value)}
        if isinstance(node, cst.Call):
            if self.t.builtin(node.func) == "len":
                return {}
            api = self.t.tf_api(node.func)
            positional = [a for a in node.args if a.keyword is None and not a.star]
            if api in _CAST_LIKE and positional:
                return self.taint_of(positional[0].value)
            if api in ("tensorflow.shape", "tensorflow.rank", "tensorflow.size"):
                return {}
            if (
                isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "gradient"
                and len(positional) >= 2
            ):
                # tape.gradient(loss, sources): the gradients have the sources' shapes
                return {p: False for p in self.taint_of(positional[1].value)}
        if isinstance(node, (cst.Lambda, cst.FunctionDef)):
            return {}
        out: Taint = {}
        found = self.kids.get(node)
        for child in children(node) if found is None else found:
            for param in self.taint_of(child):
                out[param] = False
        return out

    # -- reads ----------------------------------------------------------------------------
    def run(self) -> None:
        for node in self.nodes:
            if isinstance(node, cst.Attribute):
                self._attribute(node)
                self._state_attribute(node)
            elif isinstance(node, cst.Name):
                if node.value in self.shapes:
                    self._shape_name(node)
                self._state_name(node)
            elif isinstance(node, cst.Call):
                self._call(node)
            elif isinstance(node, cst.Assign):
                self._unpacking(node)
            elif isinstance(node, cst.For) and not self.t.autograph:
                # autograph turns ``for row in x`` over a tensor into a loop over
                # tf.shape(x)[0]; without it Python iterates, which needs dimension 0
                self._iteration(node.iter, node)
            elif isinstance(node, cst.CompFor):
                self._iteration(node.iter, node)

    def _record(
        self,
        taint: Taint,
        dims_if_exact: frozenset[int] | None,
        node: cst.CSTNode,
        kind: ReadKind,
        unseen: bool = False,
    ) -> None:
        for param, exact in taint.items():
            dims = dims_if_exact if exact else ALL
            if kind == "callee":
                dims = _without_batch(dims, self.t.ranks.get(param))
                if dims is not None and not dims:
                    continue
            read = ShapeRead(
                param, dims, self.t.line(node), short_code(node), kind, self.via, node, unseen
            )
            self.result.reads.setdefault(param, []).append(read)

    def _attribute(self, node: cst.Attribute) -> None:
        if node.attr.value not in ("shape",):
            return
        taint = self.taint_of(node.value)
        if not taint:
            return
        read, dims = self._shape_expression(node, taint)
        if read is None:
            return
        kind = self._kind(read)
        if kind is None:
            return
        self._record(taint, dims, read, kind)

    # -- Python state read while tracing ----------------------------------------------------
    def _state_name(self, node: cst.Name) -> None:
        """A module variable of this module, or one imported from a project module."""
        view = self.t.view
        name = node.value
        if not (view.is_bound_at_module_level(name) or view.is_imported(name)):
            return
        parent = self.parents.get(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return
        if isinstance(parent, (cst.Arg, cst.Param)) and getattr(parent, "keyword", None) is node:
            return
        if self._is_store(node) or self.env().local is None:
            return
        if self.env().local(name) is not None:  # type: ignore[misc]
            return
        if isinstance(parent, cst.Attribute) and view.is_imported(name):
            return  # hparams.X: judged as an attribute of the module
        for qualified, source in self.t.names(node):
            if source is QualifiedNameSource.LOCAL and qualified == name:
                if view.is_bound_at_module_level(name):
                    self._state(node, name, "global", name, view)
            elif source is QualifiedNameSource.IMPORT:
                module, _, attribute = qualified.rpartition(".")
                other = view.other(module, attribute) if module else None
                if other is not None and other.is_bound_at_module_level(attribute):
                    self._state(node, name, "imported", attribute, other)

    def _state_attribute(self, node: cst.Attribute) -> None:
        """``self.<a>`` / ``self.<a>.<b>``, or ``<project module>.<variable>``."""
        value = node.value
        if not isinstance(value, cst.Name) or self._is_attribute_store(node):
            return
        env = self.env()
        view = self.t.view
        attribute = node.attr.value
        if env.self_name is not None and value.value == env.self_name:
            cls = self.self_class
            if cls is None or view.method(cls, attribute) is not None:
                return  # a method (or property) of the class, not state
            path = attribute
            parent = self.parents.get(node)
            grand = self.parents.get(parent) if parent is not None else None
            if isinstance(parent, cst.Attribute) and parent.value is node:
                if not (isinstance(grand, cst.Call) and grand.func is parent):
                    path = f"{attribute}.{parent.attr.value}"
            item = (
                isinstance(parent, cst.Subscript)
                and parent.value is node
                and not (isinstance(grand, cst.Call) and grand.func is parent)
            )
            self._state(node, f"self.{path}", "attribute", path, cls.view, cls.node, item)
            return
        if not view.is_imported(value.value):
            return
        for qualified, source in self.t.names(value):
            if source is QualifiedNameSource.IMPORT:
                other = view.other(qualified, attribute)
                if other is not None and other.is_bound_at_module_level(attribute):
                    code = f"{value.value}.{attribute}"
                    self._state(node, code, "global", attribute, other)

    def _state(
        self,
        node: cst.CSTNode,
        code: str,
        kind: StateKind,
        name: str,
        view: ModuleView,
        cls: cst.ClassDef | None = None,
        item: bool = False,
    ) -> None:
        read = StateRead(code, self.t.line(node), self.via, kind, name, view, cls, item)
        self.result.state_reads.append(read)

    def _is_attribute_store(self, node: cst.Attribute) -> bool:
        """``self.x = ...`` / ``del self.x`` in the traced code (a write: AS103's)."""
        parent = self.parents.get(node)
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            return True
        if isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
            return True
        return isinstance(parent, cst.Del)

    def _shape_name(self, node: cst.Name) -> None:
        """A read of a name bound to a static shape (``input_shape[-1]`` in ``build``)."""
        if self._is_store(node) or isinstance(self.parents.get(node), cst.Param):
            return
        self._shape_source(node, self.shapes[node.value])

    def _rank_of(self, taint: Taint) -> int | None:
        exact = [p for p, e in taint.items() if e]
        return self.t.ranks.get(exact[0]) if len(exact) == 1 else None

    def _shape_expression(
        self, shape: cst.CSTNode, taint: Taint
    ) -> tuple[cst.CSTNode | None, frozenset[int] | None]:
        """The whole expression reading ``shape`` (``x.shape[0]``) and the dimensions read.

        ``x.shape.rank``, ``len(x.shape)``: no dimension (None, _).
        """
        node = shape
        parent = self.parents.get(node)
        # x.shape.as_list() / x.get_shape(): the same list of dimensions
        if isinstance(parent, cst.Attribute) and parent.value is node:
            if parent.attr.value in _RANK_ONLY:
                return None, ALL
            grand = self.parents.get(parent)
            if parent.attr.value in ("as_list",) and isinstance(grand, cst.Call):
                node, parent = grand, self.parents.get(grand)
            elif parent.attr.value in ("is_fully_defined", "is_compatible_with", "__len__"):
                return (grand if isinstance(grand, cst.Call) else parent), ALL
            else:
                return parent, ALL
        if isinstance(parent, cst.Arg):
            call = self.parents.get(parent)
            if isinstance(call, cst.Call) and self.t.builtin(call.func) == "len":
                return None, ALL  # len(x.shape): the rank
        if isinstance(parent, cst.Subscript) and parent.value is node and len(parent.slice) == 1:
            index = parent.slice[0].slice
            rank = self._rank_of(taint)
            if isinstance(index, cst.Index):
                value = _int_value(index.value)
                if value is not None and value >= 0:
                    return parent, frozenset({value})
                if value is not None and rank is not None:
                    return parent, frozenset({value % rank})
                return parent, ALL
            if isinstance(index, cst.Slice) and index.step is None and rank is not None:
                lower = _int_value(index.lower) if index.lower is not None else 0
                upper = _int_value(index.upper) if index.upper is not None else rank
                if lower is not None and upper is not None:
                    return parent, frozenset(range(rank)[lower:upper])
            return parent, ALL
        return node, ALL

    def _call(self, call: cst.Call) -> None:
        func = call.func
        builtin = self.t.builtin(func)
        api = None if builtin else self.api(func)
        self._random(call, builtin, None if builtin else self.t.tf_api(func))
        if isinstance(func, cst.Attribute) and func.attr.value in _SHAPE_METHODS:
            taint = self.taint_of(func.value)
            if taint:
                self._shape_source(call, taint)
            return
        if api in STATIC_SHAPE_FUNCTIONS:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            taint = self.taint_of(positional[0].value) if positional else {}
            if taint:
                self._shape_source(call, taint)
            return
        if builtin is None and api is None and self._strategy_run(call):
            return
        if id(call) in self.inline_calls:
            return  # a nested def's body: read in this walk
        if api is not None and api in HIGHER_ORDER:
            self._higher_order(call, HIGHER_ORDER[api])
            return
        args = [(a, self.taint_of(a.value)) for a in call.args]
        tainted = [(a, t) for a, t in args if t]
        if builtin is not None:
            if not tainted:
                return
            if builtin == "len":
                value = tainted[0][0].value
                if isinstance(value, cst.Attribute) and value.attr.value == "shape":
                    return  # len(x.shape): the rank, which a signature keeps
                kind = self._kind(call)
                if kind is not None and not self._is_sequence_value(value):
                    self._record(tainted[0][1], frozenset({0}), call, kind)
            elif builtin in _ITERATING_BUILTINS:
                for arg, taint in tainted:
                    if not self._is_sequence_value(arg.value):
                        self._record(taint, frozenset({0}), call, "python")
            return
        if api is not None and not self._is_layer_call(call, api):
            if not tainted:
                return
            if api in STATIC_SIZE_APIS:
                self._static_size(call, STATIC_SIZE_APIS[api])
            elif api.startswith("keras.") and not api.startswith(("keras.ops.", "keras.random.")):
                for _, taint in tainted:
                    self._record(taint, ALL, call, "callee")
            return
        if tainted and isinstance(func, cst.Attribute) and self.taint_of(func.value):
            return  # a method of the tensor itself (x.assign, rt.to_tensor, ...)
        if (
            tainted
            and isinstance(func, cst.Attribute)
            and func.attr.value in _CONTAINER_METHODS
            and isinstance(func.value, cst.Name)
        ):
            return  # moments.append(t): a Python container holds the tensor, reads nothing
        callee = self._callee(call)
        if callee.known:
            return  # a TensorFlow object's method that reads no static size
        if callee.targets or callee.layers:
            self._follow_callee(call, callee, args)
            return
        if not tainted:
            return
        if isinstance(func, cst.Attribute) and func.attr.value in _TAPE_METHODS:
            return  # tape.gradient(loss, vars): TensorFlow differentiates whatever shape
        for _, taint in tainted:
            self._record(taint, ALL, call, "callee", unseen=not callee.library)

    def _is_layer_call(self, call: cst.Call, api: str) -> bool:
        """``keras.layers.Dense(4)(x)``: the call of an object a library call made (its
        method is judged like any object's)."""
        return isinstance(call.func, cst.Call) and api.endswith(")")

    def _shape_source(self, node: cst.CSTNode, taint: Taint) -> None:
        """``x.get_shape()`` / ``keras.ops.shape(x)``: read like ``x.shape``."""
        read, dims = self._shape_expression(node, taint)
        kind = self._kind(read) if read is not None else None
        if read is not None and kind is not None:
            self._record(taint, dims, read, kind)

    def _static_size(self, call: cst.Call, need: StaticSize) -> None:
        """An op that needs one dimension of its tensor argument as a Python int."""
        if need.unless and any(
            a.keyword is not None and a.keyword.value == need.unless for a in call.args
        ):
            return
        if need.only_if_sequence is not None:
            chosen = slot_argument(call, need.only_if_sequence)
            if not isinstance(chosen, (cst.List, cst.Tuple)):
                return
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if not positional:
            return
        taint = self.taint_of(positional[0].value)
        if not taint:
            return
        axis: int | None = need.default_axis
        if need.axis is not None:
            given = slot_argument(call, need.axis)
            if given is not None:
                axis = _int_value(given)
        rank = self._rank_of(taint)
        if axis is not None and axis < 0:
            axis = axis % rank if rank is not None else None
        self._record(taint, ALL if axis is None else frozenset({axis}), call, "tf")

    def _strategy_run(self, call: cst.Call) -> bool:
        """Follow ``strategy.run(fn, args=(...))`` into ``fn`` (a project function)."""
        parts = strategy_run_parts(call)
        if parts is None:
            return False
        fn, run_args = parts
        args = [(a, self.taint_of(a.value)) for a in run_args]
        if not any(t for _, t in args):
            return False
        callee = self._callee(cst.Call(func=fn), fn)
        if not callee.targets:
            return self._tensorflow_function(fn)
        self._follow_callee(call, callee, args)
        return True

    def _higher_order(self, call: cst.Call, spec: HigherOrder) -> None:
        """``tf.map_fn(fn, elems)`` & co. with ``fn`` a project function (a nested def or
        lambda was read with this walk): follow it with the elements it gets; a function
        the analysis cannot see may read them."""
        for slot in spec.functions:
            fn = slot_argument(call, slot)
            if fn is None or id(fn) in self.inline_functions:
                continue
            args: list[tuple[cst.Arg, Taint]] = []
            for feed in spec.feeds:
                for _, value, element in _fed(call, spec, feed, None):
                    taint = self.taint_of(value)
                    if element:
                        taint = {p: False for p in taint}
                    args.append((cst.Arg(value=value), taint))
            callee = self._callee(cst.Call(func=fn), fn)
            if callee.targets:
                self._follow_callee(call, callee, args)
                continue
            if self._tensorflow_function(fn):
                continue  # tf.identity, tf.math.abs, ...: an op reads no static size
            for _, taint in args:
                if taint:
                    self._record(taint, ALL, call, "callee", unseen=not callee.library)

    def _tensorflow_function(self, fn: cst.BaseExpression) -> bool:
        """A TensorFlow function passed as a function argument (not Keras, not a size
        op): like a direct call of it, it reads no static size."""
        api = self.api(fn)
        return (
            api is not None
            and api.startswith("tensorflow.")
            and api not in STATIC_SIZE_APIS
            and not self._is_layer_call(cst.Call(func=fn), api)
        )

    def _random(self, call: cst.Call, builtin: str | None, api: str | None) -> None:
        """A draw whose numbers depend on how often the function traced: a TensorFlow
        or Keras API the generated table (``tf_random_apis``, from TensorFlow's op
        registry) says draws from a stream each trace restarts (``tf.random.normal``,
        ``tf.nn.dropout``, ``tf.nn.nce_loss``'s sampler, ``sample_distorted_bounding_box``,
        ``tf.image.random_*``); or Python's and NumPy's RNG, frozen at each trace.
        ``tf.random.Generator`` and Keras 3's SeedGenerator keep their state in a
        variable: fewer traces draw the same numbers."""
        if builtin is not None:
            return
        draws = False
        if api is not None:
            draws = draws_per_trace(api)
        else:
            for name, _ in self.t.names(call.func):
                if name.startswith(("random.", "numpy.random.")) and not name.endswith(
                    ("default_rng", "Generator", "seed", "RandomState", "get_state", "set_state")
                ):
                    draws = True
            if not draws and isinstance(call.func, cst.Attribute):
                draws = self._held_generator(call.func.value)
        if draws:
            self.result.random_draws.append(
                RandomDraw(self.t.line(call), short_code(call), self.via)
            )

    def _held_generator(self, owner: cst.BaseExpression) -> bool:
        """``owner`` (``self.rng``, or a module's ``RNG``) is bound to a Python or NumPy
        random generator (review7: ``self.rng = np.random.default_rng(0)`` drawn from while
        tracing: each trace draws anew)."""
        env = self.env()
        view = self.t.view
        values: list[tuple[cst.BaseExpression, Env]] = []
        if (
            isinstance(owner, cst.Attribute)
            and isinstance(owner.value, cst.Name)
            and owner.value.value == env.self_name
            and self.self_class is not None
        ):
            values = view.attribute_values(self.self_class, owner.attr.value)
        elif isinstance(owner, cst.Name) and view.is_bound_at_module_level(owner.value):
            values = [(value, Env(view)) for value in view.bindings(owner.value)]
        for value, where in values:
            if isinstance(value, cst.Call) and any(
                name in PYTHON_GENERATORS for name, _ in where.view.names(value.func)
            ):
                return True
        return False

    def _callee(self, call: cst.Call, func: cst.BaseExpression | None = None) -> _Callee:
        """What a call runs: project defs to follow (with how ``self`` is passed), the
        layers of a Keras model, a TensorFlow object's known method, or nothing known."""
        func = call.func if func is None else func
        view = self.t.view
        env = self.env()
        out = _Callee()
        if isinstance(func, cst.Attribute):
            owner = view.resolve(func.value, env)
            name = func.attr.value
            if isinstance(owner, ProjectInstance):
                method = view.method(owner.cls, name)
                if method is not None:
                    out.targets.append((method, method.kind != "staticmethod", owner.cls))
                    return out
                bound = view.attribute_of(owner, name)
            elif isinstance(owner, ProjectClass):
                method = view.method(owner, name)
                if method is not None:
                    out.targets.append((method, method.kind == "classmethod", None))
                    return out
                bound = view.attribute_of(owner, name)
            elif isinstance(owner, LibraryInstance):
                fact = method_of(owner.name, name)
                out.known = fact is not None and fact.reads == "nothing"
                out.library = True
                return out
            else:
                bound = view.resolve(func, env)
        else:
            bound = view.resolve(func, env)
        return self._calling(bound, out)

    def _calling(self, bound: Bound | None, out: _Callee) -> _Callee:
        """What calling ``bound`` runs."""
        view = self.t.view
        if isinstance(bound, ProjectFunction):
            if not is_stub(bound.node):
                out.targets.append((bound, False, None))
        elif isinstance(bound, ProjectClass):
            init = view.method(bound, "__init__")
            if init is not None:
                out.targets.append((init, True, bound))
        elif isinstance(bound, ProjectInstance):
            for method in view.call_methods(bound.cls):
                out.targets.append((method, True, bound.cls))
            build = view.method(bound.cls, "build") if view.is_keras(bound.cls) else None
            if build is not None and out.targets:
                out.build = (build, bound.cls)
        elif isinstance(bound, LayerStack):
            out.layers = list(bound.layers)
        elif isinstance(bound, LibraryInstance):
            fact = method_of(bound.name, "__call__")
            out.known = fact is not None and fact.reads == "nothing"
            out.library = True
        elif isinstance(bound, LibraryObject):
            out.library = True
        return out

    def _follow_callee(
        self, call: cst.Call, callee: _Callee, args: list[tuple[cst.Arg, Taint]]
    ) -> None:
        for function, skip_self, self_class in callee.targets:
            self._follow(call, function, skip_self, args, self_class)
        if callee.build is not None:
            build, cls = callee.build
            self._follow_build(call, build, cls, args)
        if callee.layers:
            self._follow_layers(call, callee.layers, args)

    def _follow_layers(
        self,
        call: cst.Call,
        layers: list[tuple[Bound, bool]],
        args: list[tuple[cst.Arg, Taint]],
    ) -> None:
        """A Keras model's layers: the first gets the input as it is, later ones values
        computed from it."""
        positional = [(a, t) for a, t in args if a.keyword is None and not a.star]
        if not positional:
            return
        first, taint = positional[0]
        keywords = [(a, t) for a, t in args if a.keyword is not None]
        library = False
        for layer, exact in layers:
            layer_taint = taint if exact else {p: False for p in taint}
            layer_args = [(first, layer_taint), *keywords]
            callee = self._calling(layer, _Callee())
            if callee.known:
                continue
            if callee.targets or callee.layers:
                self._follow_callee(call, callee, layer_args)
            elif layer_taint:
                library = library or callee.library
                self._record(layer_taint, ALL, call, "callee", unseen=not callee.library)

    def _follow_build(
        self,
        call: cst.Call,
        build: ProjectFunction,
        cls: ProjectClass,
        args: list[tuple[cst.Arg, Taint]],
    ) -> None:
        """Keras runs ``build(input_shape)`` on a layer's first call: its reads of
        ``input_shape`` are reads of the input's static shape."""
        positional = [t for a, t in args if a.keyword is None and not a.star]
        params = _positional(build.node)[1:]
        if not positional or not positional[0] or not params:
            return
        if self.depth >= MAX_DEPTH:
            return
        shapes = {params[0].name.value: positional[0]}
        via = self._via(call, build)
        tracer = self.t.for_view(build.view)
        tracer.scan(build.node, {}, self.result, via, self.depth + 1, cls, shapes)

    def _via(self, call: cst.Call, function: ProjectFunction) -> str:
        name = function.node.name.value
        if function.owner is not None:
            name = f"{function.owner.name.value}.{name}"
        where = f"{name}() (called at line {self.t.line(call)})"
        if function.view is not self.t.view and function.view.name:
            where = f"{function.view.name}.{where}"
        return f"{self.via} -> {where}" if self.via else where

    def _follow(
        self,
        call: cst.Call,
        function: ProjectFunction,
        skip_self: bool,
        args: list[tuple[cst.Arg, Taint]],
        self_class: ProjectClass | None = None,
    ) -> None:
        tainted = any(t for _, t in args)
        if self.depth >= MAX_DEPTH:
            for _, taint in args:
                if taint:
                    self._record(taint, ALL, call, "callee", unseen=True)
            return
        mapped: dict[str, Taint] = {}
        for param, taint in _map_arguments(function.node, args, skip_self):
            mapped.setdefault(param, {}).update(taint)
        if tainted and not mapped:
            return
        if self_class is None and function.owner is not None and skip_self:
            self_class = ProjectClass(function.view, function.owner)
        tracer = self.t.for_view(function.view)
        tracer.scan(
            function.node,
            mapped,
            self.result,
            self._via(call, function),
            self.depth + 1,
            self_class,
        )

    def _unpacking(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, (cst.Tuple, cst.List)):
                value = node.value
                if not isinstance(value, (cst.Name, cst.Subscript, cst.Attribute)):
                    continue  # a call's result is most often a tuple (tf.split, moments)
                if isinstance(value, cst.Attribute) and value.attr.value == "shape":
                    continue  # ``b, t = x.shape``: reported as a shape read
                if self._is_sequence_value(value):
                    continue
                taint = self.taint_of(value)
                if taint:
                    self._record(taint, frozenset({0}), node, "python")

    def _iteration(self, iterable: cst.BaseExpression, node: cst.CSTNode) -> None:
        if isinstance(iterable, cst.Call) or self._is_sequence_value(iterable):
            return  # range(...), zip(...), tf.range(...): the call itself is judged
        taint = self.taint_of(iterable)
        if taint:
            self._record(taint, frozenset({0}), iterable, "python")

    # -- how a read value is used ----------------------------------------------------------
    def _kind(self, read: cst.CSTNode, depth: int = 0) -> ReadKind | None:
        """How the value of ``read`` is used; None when only a trace-time print shows it."""
        node = read
        while True:
            parent = self.parents.get(node)
            if parent is None:
                return "python"
            if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is node:
                return "control"
            if isinstance(parent, cst.Assert):
                return "control"
            if isinstance(parent, cst.Call) and node is not parent.func:
                builtin = self.t.builtin(parent.func)
                if builtin == "print":
                    return None
                if builtin == "range":
                    return "python"
                if builtin is None and self.t.tf_api(parent.func) is not None:
                    return "tf"
                if builtin in ("int", "float", "tuple", "list", "str"):
                    node = parent
                    continue
                return "python"
            if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                return self._assigned_kind(parent, depth)
            if isinstance(parent, (cst.Return, cst.Yield)):
                return "python"
            if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return "python"
            node = parent

    def _assigned_kind(self, statement: cst.CSTNode, depth: int) -> ReadKind | None:
        if depth > 3:
            return "python"
        targets: list[str] = []
        if isinstance(statement, cst.Assign):
            for t in statement.targets:
                targets.extend(target_names(t.target))
        elif isinstance(statement, (cst.AnnAssign, cst.AugAssign)):
            targets.extend(target_names(statement.target))
        if not targets:
            return "python"  # stored in an attribute, a dict, ...: used who knows where
        kinds: list[ReadKind] = []
        for node in self.nodes:
            if isinstance(node, cst.Name) and node.value in targets and not self._is_store(node):
                kind = self._kind(node, depth + 1)
                if kind is not None:
                    kinds.append(kind)
        if not kinds:
            return None  # never used (or only printed)
        for worst in ("control", "python", "callee", "tf"):
            if worst in kinds:
                return worst  # type: ignore[return-value]
        return "python"

    def _is_store(self, name: cst.Name) -> bool:
        parent = self.parents.get(name)
        if (
            isinstance(parent, (cst.AssignTarget, cst.CompFor, cst.For))
            and getattr(parent, "target", None) is name
        ):
            return True
        if (
            isinstance(parent, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr))
            and parent.target is name
        ):
            return True
        if isinstance(parent, cst.Element) and isinstance(
            self.parents.get(parent), (cst.Tuple, cst.List)
        ):
            outer = self.parents.get(self.parents.get(parent))  # type: ignore[arg-type]
            return isinstance(outer, (cst.AssignTarget, cst.For, cst.CompFor))
        return (
            isinstance(parent, (cst.Param, cst.Attribute)) and getattr(parent, "attr", None) is name
        )


def _without_batch(dims: frozenset[int] | None, rank: int | None) -> frozenset[int] | None:
    """A callee outside the project may read every dimension but the batch (0)."""
    if dims is None:
        return frozenset(range(1, rank)) if rank is not None else None
    return frozenset(d for d in dims if d != 0)


@dataclass
class _Callee:
    """What a call runs, as far as the project's source and the object table show."""

    targets: list[tuple[ProjectFunction, bool, ProjectClass | None]] = field(default_factory=list)
    """Project defs it runs: (def, whether the call passes ``self`` itself, the class of
    that ``self``)."""
    layers: list[tuple[Bound, bool]] = field(default_factory=list)
    """A Keras model's layers (each: whether it gets the input as it is)."""
    build: tuple[ProjectFunction, ProjectClass] | None = None
    """A project Keras layer's ``build``, run on its first call."""
    known: bool = False
    """A TensorFlow object's method that reads no static size (``tf_objects``)."""
    library: bool = False
    """Library code (TensorFlow, Keras, another package): outside the project."""


def _positional(function: cst.FunctionDef | cst.Lambda) -> list[cst.Param]:
    params = function.params
    return [*params.posonly_params, *params.params]


_NO_TENSOR = cst.Name("None")


def _fed(
    call: cst.Call, spec: HigherOrder, feed: Feed, params: list[cst.Param] | None
) -> list[tuple[cst.Name | None, cst.BaseExpression, bool]]:
    """(parameter, value, whether an element of it) for the parameters ``feed``
    gives values to (``params`` None: a function not in this walk, positions only)."""
    first = params[0].name if params else None
    relaxed = any(a.keyword is not None and a.keyword.value in spec.relaxing for a in call.args)
    value = slot_argument(call, feed.slot) if feed.slot is not None else None
    if value is None and feed.fallback is not None:
        return _fed(call, spec, feed.fallback, params)
    if feed.how == "none" or value is None:
        return [(first, _NO_TENSOR, False)]
    if feed.how in ("element", "slice", "leaf"):
        return [(first, value, True)]
    if feed.how == "same":
        return [(first, value, relaxed)]
    if isinstance(value, (cst.List, cst.Tuple)) and not any(
        isinstance(e, cst.StarredElement) for e in value.elements
    ):
        items = [e.value for e in value.elements]
        if params is None:
            return [(None, item, relaxed) for item in items]
        return [(p.name, item, relaxed) for p, item in zip(params, items, strict=False)]
    if params is None:
        return [(None, value, True)]
    return [(p.name, value, True) for p in params]


def _bind_arguments(
    function: cst.FunctionDef | cst.Lambda, args: Sequence[cst.Arg], skip_self: bool
) -> Iterator[tuple[cst.Param, cst.BaseExpression]]:
    """(parameter, value) for each plain argument of a call of ``function``."""
    params = function.params
    positional = _positional(function)
    if skip_self and positional:
        positional = positional[1:]
    by_name = {p.name.value: p for p in positional + list(params.kwonly_params)}
    index = 0
    for arg in args:
        if arg.star:
            return
        if arg.keyword is not None:
            param = by_name.get(arg.keyword.value)
        elif index < len(positional):
            param = positional[index]
            index += 1
        else:
            param = params.star_arg if isinstance(params.star_arg, cst.Param) else None
        if param is not None:
            yield param, arg.value


def _map_arguments(
    function: cst.FunctionDef, args: list[tuple[cst.Arg, Taint]], skip_self: bool
) -> Iterator[tuple[str, Taint]]:
    """(parameter name, taint) for each tainted argument of a call of ``function``."""
    params = function.params
    positional = _positional(function)
    if skip_self and positional:
        positional = positional[1:]
    by_name = {p.name.value: p for p in positional + list(params.kwonly_params)}
    index = 0
    for arg, taint in args:
        if arg.star:
            if taint:  # *args / **kwargs of a tainted value: give up on precision
                for name in by_name:
                    yield name, {k: False for k in taint}
            continue
        if arg.keyword is not None:
            target = arg.keyword.value
        elif index < len(positional):
            target = positional[index].name.value
            index += 1
        else:
            star = params.star_arg
            target = star.name.value if isinstance(star, cst.Param) else ""
        if taint and target:
            yield target, taint
