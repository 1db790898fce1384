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

Deliberately conservative: a value derived from a parameter (``h = x @ w``) may have
any of its dimensions read, so a static read of ``h.shape`` counts for every dimension
of ``x``. Code outside the project (a Keras layer or model, another library) is assumed
to accept any size in dimension 0 (the batch, as Keras's own layers do) and may read
every other dimension statically.

One module of about 970 lines, because it is one walk: ``_Tracer`` indexes a module
(and the project modules it imports) once, and ``_FunctionWalk`` follows each
parameter's taint through one function and into the functions it calls, recording reads
and random draws as it goes; the read kinds, the taint and the following of calls only
make sense together. Which of these reads may become ``tf.shape(x)[i]`` is inference's
choice: ``infer/shape_rewrites.py``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameSource, ScopeProvider

from autosig.analysis.python_values import short_code, target_names
from autosig.analysis.tf_random_apis import draws_per_trace
from autosig.source.metadata import MetadataView, PositionProvider, iter_tree, qualified_names
from autosig.source.project_modules import ModuleResolver

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
_READS_DIM0 = frozenset({"tensorflow.unstack"})
"""TensorFlow calls that need a static size (``tf.unstack`` infers ``num`` from it)."""


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
            "callee": "passes the tensor to code outside the project, which may read it",
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

    def control(self) -> list[ShapeRead]:
        return [r for reads in self.reads.values() for r in reads if r.kind == "control"]


Taint = dict[str, bool]
"""Parameter of the traced function -> whether the value *is* it (same shape: exact)."""


def shape_use(
    wrapper: MetadataWrapper,
    function: cst.FunctionDef | cst.Lambda,
    params: Sequence[str],
    ranks: Mapping[str, int | None] | None = None,
    autograph: bool = True,
    modules: ModuleResolver | None = None,
    structures: Collection[str] = (),
) -> ShapeUse:
    """Static shape reads of ``params`` in ``function`` and the project code it calls.

    ``wrapper`` must have ``ScopeProvider`` and ``PositionProvider`` resolvable (the
    discovery wrappers of ``check``, ``fix`` and inference all do). ``ranks`` gives a
    parameter's rank when known, so ``x.shape[-1]`` names its dimension. ``autograph``
    is the tf.function's option (a ``for`` loop over a tensor is then a graph loop).
    ``modules`` parses another module of the project by dotted name (None when it is not
    in the project), so calls into imported project functions are followed too.
    ``structures``: parameters that were a tuple, list or dict in every call (unpacking or
    iterating them reads no tensor's shape).
    """
    tracer = _Tracer(wrapper, dict(ranks or {}), autograph, modules)
    tracer.structures = frozenset(structures)
    result = ShapeUse(reads={p: [] for p in params})
    taint = {p: {p: True} for p in params}
    tracer.scan(function, taint, result, via="", depth=0)
    for name, reads in result.reads.items():
        unique: dict[tuple[Any, ...], ShapeRead] = {}
        for read in reads:
            unique.setdefault((read.line, read.code, read.kind, read.dims, read.via), read)
        result.reads[name] = sorted(unique.values(), key=_read_order)
    seen: dict[tuple[int, str, str], RandomDraw] = {}
    for draw in result.random_draws:
        seen.setdefault((draw.line, draw.code, draw.via), draw)
    result.random_draws = list(seen.values())
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


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _is_stub(function: cst.FunctionDef) -> bool:
    """A body of ``...`` alone: the skeleton's stand-in for a def it cut (or a protocol)."""
    body = function.body
    statements = body.body if isinstance(body, cst.SimpleStatementSuite) else None
    if statements is None and isinstance(body, cst.IndentedBlock) and len(body.body) == 1:
        line = body.body[0]
        statements = line.body if isinstance(line, cst.SimpleStatementLine) else None
    return bool(
        statements
        and len(statements) == 1
        and isinstance(statements[0], cst.Expr)
        and isinstance(statements[0].value, cst.Ellipsis)
    )


class _Tracer:
    """Walks one function (and, recursively, the project functions it calls)."""

    structures: frozenset[str] = frozenset()
    """Traced parameters that are Python containers (see ``shape_use``)."""

    def __init__(
        self,
        wrapper: MetadataWrapper,
        ranks: dict[str, int | None],
        autograph: bool,
        modules: ModuleResolver | None = None,
        active: set[Any] | None = None,
        name: str = "",
    ) -> None:
        self.wrapper = wrapper
        self.ranks = ranks
        self.autograph = autograph
        self.modules = modules
        self.name = name
        """The module's dotted name when it was reached through an import ('' for the first)."""
        self.positions = wrapper.resolve(PositionProvider)
        self.scopes = wrapper.resolve(ScopeProvider)
        self.module = wrapper.module
        self.view = MetadataView(wrapper)
        self._classes: dict[str, cst.ClassDef] | None = None
        self._functions: dict[str, cst.FunctionDef] | None = None
        self._instances: dict[str, str] | None = None
        self._active: set[Any] = set() if active is None else active
        self._others: dict[str, _Tracer | None] = {}

    def imported(self, dotted: str) -> tuple[_Tracer, cst.FunctionDef] | None:
        """The project function ``pkg.mod.f`` names, with a tracer for its module."""
        if self.modules is None or "." not in dotted:
            return None
        module_name, _, function_name = dotted.rpartition(".")
        if dotted not in self._others:
            # only what the function reaches is parsed: modules are often large
            wrapper = self.modules(module_name, function_name)
            self._others[dotted] = (
                None
                if wrapper is None
                else _Tracer(
                    wrapper, self.ranks, self.autograph, self.modules, self._active, module_name
                )
            )
        tracer = self._others[dotted]
        if tracer is not None:
            tracer.structures = self.structures
        if tracer is None:
            return None
        function = tracer.module_function(function_name)
        if function is None or _is_stub(function):
            return None
        return tracer, function

    # -- metadata --------------------------------------------------------------------------
    def _get(self, provider: type, node: cst.CSTNode, default: Any = None) -> Any:
        return self.wrapper.resolve(provider).get(node, default)

    def line(self, node: cst.CSTNode) -> int:
        where = self.positions.get(node)
        return where.start.line if where is not None else 0

    def names(self, node: cst.CSTNode) -> set[tuple[str, QualifiedNameSource]]:
        return {(q.name, q.source) for q in qualified_names(self._get, node)}

    def tf_api(self, func: cst.BaseExpression) -> str | None:
        for name, _ in self.names(func):
            if name.startswith(("tensorflow.", "keras.")):
                return name
        dotted = short_code(func, 200)
        if dotted.startswith("tf."):
            return "tensorflow." + dotted[3:]
        return None

    def builtin(self, func: cst.BaseExpression) -> str | None:
        for name, source in self.names(func):
            if source is QualifiedNameSource.BUILTIN:
                return name.removeprefix("builtins.")
        return None

    # -- module index (for following calls) ------------------------------------------------
    def _index(self) -> None:
        self._classes, self._functions, self._instances = {}, {}, {}
        for statement in self.module.body:
            if isinstance(statement, cst.ClassDef):
                self._classes[statement.name.value] = statement
            elif isinstance(statement, cst.FunctionDef):
                self._functions[statement.name.value] = statement
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if (
                        isinstance(small, cst.Assign)
                        and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)
                        and isinstance(small.value, cst.Call)
                        and isinstance(small.value.func, cst.Name)
                    ):
                        self._instances[small.targets[0].target.value] = small.value.func.value

    def module_function(self, name: str) -> cst.FunctionDef | None:
        if self._functions is None:
            self._index()
        assert self._functions is not None
        return self._functions.get(name)

    def class_method(self, class_name: str, method: str) -> cst.FunctionDef | None:
        if self._classes is None:
            self._index()
        assert self._classes is not None
        cls = self._classes.get(class_name)
        if cls is None or not isinstance(cls.body, cst.IndentedBlock):
            return None
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == method:
                return statement
        return None

    def instance_call(self, name: str) -> cst.FunctionDef | None:
        """``net(x)`` where ``net = Model()`` at module level and Model is in this module."""
        if self._instances is None:
            self._index()
        assert self._instances is not None
        class_name = self._instances.get(name)
        if class_name is None:
            return None
        return self.class_method(class_name, "__call__") or self.class_method(class_name, "call")

    def enclosing_class(self, function: cst.CSTNode) -> str | None:
        """The name of the module-level class (as the index has it) ``function`` is a
        method of, if any."""
        if not isinstance(function, cst.FunctionDef):
            return None
        if self._classes is None:
            self._index()
        assert self._classes is not None
        cls = self.view.enclosing_class(function)
        if cls is None or self._classes.get(cls.name.value) is not cls:
            return None
        return cls.name.value

    # -- the walk ---------------------------------------------------------------------------
    def scan(
        self,
        function: cst.FunctionDef | cst.Lambda,
        params: dict[str, Taint],
        result: ShapeUse,
        via: str,
        depth: int,
    ) -> None:
        key = (
            id(function),
            tuple(sorted((k, tuple(sorted(v.items()))) for k, v in params.items())),
        )
        if key in self._active:
            return  # recursion: already being walked with the same inputs
        self._active.add(key)
        try:
            _FunctionWalk(self, function, params, result, via, depth).run()
        finally:
            self._active.discard(key)


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
    ) -> None:
        self.t = tracer
        self.function = function
        self.result = result
        self.via = via
        self.depth = depth
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        for node in iter_tree(function):
            for child in node.children:
                self.parents[child] = node
        self.taint: dict[str, Taint] = {k: dict(v) for k, v in params.items()}

        self.assignments: list[tuple[list[str], cst.BaseExpression, bool]] = []
        self.sequences: set[str] = set()
        """Names bound to Python lists/tuples: iterating them reads no tensor's shape."""
        self._collect()
        self._propagate()

    # -- data flow ------------------------------------------------------------------------
    def _collect(self) -> None:
        for node in iter_tree(self.function):
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
            for target, value, element in pairs:
                names = list(target_names(target))
                if names:
                    self.assignments.append((names, value, element))
                    if not element and self._is_sequence(value):
                        self.sequences.update(names)

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
        for child in node.children:
            for param in self.taint_of(child):
                out[param] = False
        return out

    # -- reads ----------------------------------------------------------------------------
    def run(self) -> None:
        for node in iter_tree(self.function):
            if isinstance(node, cst.Attribute):
                self._attribute(node)
            elif isinstance(node, cst.Call):
                self._call(node)
            elif isinstance(node, cst.Assign):
                self._unpacking(node)
            elif isinstance(node, cst.For) and not self.t.autograph:
                # autograph turns ``for row in x`` over a tensor into a loop over
                # tf.shape(x)[0]; without it Python iterates, which needs dimension 0
                self._iteration(node.iter)
            elif isinstance(node, cst.CompFor):
                self._iteration(node.iter)

    def _record(
        self, taint: Taint, dims_if_exact: frozenset[int] | None, node: cst.CSTNode, kind: ReadKind
    ) -> None:
        for param, exact in taint.items():
            dims = dims_if_exact if exact else ALL
            if kind == "callee":
                dims = _without_batch(dims, self.t.ranks.get(param))
                if dims is not None and not dims:
                    continue
            self.result.reads.setdefault(param, []).append(
                ShapeRead(param, dims, self.t.line(node), short_code(node), kind, self.via, node)
            )

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
        api = None if builtin else self.t.tf_api(func)
        self._random(call, builtin, api)
        if isinstance(func, cst.Attribute) and func.attr.value in _SHAPE_METHODS:
            taint = self.taint_of(func.value)
            if taint:
                read, dims = self._shape_expression(call, taint)
                kind = self._kind(read) if read is not None else None
                if read is not None and kind is not None:
                    self._record(taint, dims, read, kind)
            return
        if builtin is None and api is None and self._strategy_run(call):
            return
        args = [(a, self.taint_of(a.value)) for a in call.args]
        tainted = [(a, t) for a, t in args if t]
        if not tainted:
            return
        if builtin is not None:
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
        if api is not None:
            if api.startswith(("tensorflow.keras.", "keras.", "tensorflow.compat.v1.keras.")) and (
                not api.startswith(("keras.ops.", "keras.random.", "tensorflow.keras.ops."))
            ):
                for _, taint in tainted:
                    self._record(taint, ALL, call, "callee")
            elif api in _READS_DIM0 and not any(
                a.keyword is not None and a.keyword.value == "num" for a in call.args
            ):
                self._record(
                    tainted[0][1], frozenset({0}) if len(call.args) == 1 else ALL, call, "tf"
                )
            return
        if isinstance(func, cst.Attribute) and self.taint_of(func.value):
            return  # a method of the tensor itself (x.assign, rt.to_tensor, ...)
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _CONTAINER_METHODS
            and isinstance(func.value, cst.Name)
        ):
            return  # moments.append(t): a Python container holds the tensor, reads nothing
        if isinstance(func, cst.Attribute) and func.attr.value in _TAPE_METHODS:
            return  # tape.gradient(loss, vars): TensorFlow differentiates whatever shape
        callee = self._resolve(call)
        if callee is None:
            for _, taint in tainted:
                self._record(taint, ALL, call, "callee")
            return
        self._follow(call, *callee, args)

    def _strategy_run(self, call: cst.Call) -> bool:
        """Follow ``strategy.run(fn, args=(...))`` into ``fn`` (a project function)."""
        parts = strategy_run_parts(call)
        if parts is None:
            return False
        fn, run_args = parts
        args = [(a, self.taint_of(a.value)) for a in run_args]
        if not any(t for _, t in args):
            return False
        target = self._resolve(cst.Call(func=fn))
        if target is None:
            return False
        self._follow(call, *target, args)
        return True

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
        if draws:
            self.result.random_draws.append(
                RandomDraw(self.t.line(call), short_code(call), self.via)
            )

    def _resolve(self, call: cst.Call) -> tuple[cst.FunctionDef, bool, _Tracer] | None:
        """The project function a call runs, when this module defines it (None: unknown)."""
        func = call.func
        found: tuple[cst.FunctionDef | None, bool] = (None, False)
        imported = [n for n, source in self.t.names(func) if source is QualifiedNameSource.IMPORT]
        if imported and not (isinstance(func, cst.Attribute) and _is_self(func.value)):
            located = self.t.imported(imported[0])
            if located is not None:
                return located[1], False, located[0]
            return None
        if isinstance(func, cst.Name):
            if func.value not in {n for n, _ in self.t.names(func)}:
                return None  # a local binding: not a def of this module
            defined = self.t.module_function(func.value)
            method = None if defined is not None else self.t.instance_call(func.value)
            found = (defined, False) if defined is not None else (method, True)
        elif (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
        ):
            owner = self.t.enclosing_class(self.function)
            if owner is not None:
                found = (self.t.class_method(owner, func.attr.value), True)
        function, skip_self = found
        if function is None or _is_stub(function):
            return None
        return function, skip_self, self.t

    def _follow(
        self,
        call: cst.Call,
        function: cst.FunctionDef,
        skip_self: bool,
        tracer: _Tracer,
        args: list[tuple[cst.Arg, Taint]],
    ) -> None:
        if self.depth >= MAX_DEPTH:
            for _, taint in args:
                if taint:
                    self._record(taint, ALL, call, "callee")
            return
        params = function.params
        positional = list(params.posonly_params) + list(params.params)
        if skip_self and positional:
            positional = positional[1:]
        by_name = {p.name.value: p for p in positional + list(params.kwonly_params)}
        mapped: dict[str, Taint] = {}
        index = 0
        for arg, taint in args:
            if arg.star:
                if taint:  # *args / **kwargs of a tainted value: give up on precision
                    for p in by_name:
                        mapped.setdefault(p, {}).update({k: False for k in taint})
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
                mapped.setdefault(target, {}).update(taint)
        if not mapped:
            return
        where = f"{function.name.value}() (called at line {self.t.line(call)})"
        via = f"{self.via} -> {where}" if self.via else where
        if tracer is not self.t:
            where = f"{tracer.name}.{where}"
            via = f"{self.via} -> {where}" if self.via else where
        tracer.scan(function, mapped, self.result, via, self.depth + 1)

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

    def _iteration(self, iterable: cst.BaseExpression) -> None:
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
        for node in iter_tree(self.function):
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
