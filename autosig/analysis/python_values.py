"""Python-value analysis: where does a function need a parameter to stay a Python value?

A Python number in an ``input_signature`` arrives as a scalar tensor. That is what we
want for learning rates and step counters, and wrong where Python needs the value
itself: ``range(n)``, ``[x] * n``, slicing a Python list, a dict key, an f-string, an
``if`` that decides what the function returns, a configuration argument (``axis=``,
``seed=``, ``name=``, ``tf.constant(n)``), a lambda or nested function that captures it,
a trace-log ``print``. It is also wrong where the tensor computes something else: Python
ints are unbounded, an int32 tensor wraps around (``step * 1000003``), so arithmetic that
may leave int32 range asks for int64 (or a Python value beyond int64), and an int64
tensor is allowed only where it gives what the int32 conversion of a small Python int
gave (a cast, a shape, a stateless seed, an int64 partner).

This module finds those uses with libcst (no import of the user's code), following the
value through local assignments (``m = n + 1; range(m)``) and into functions of the same
module and ``self.`` methods of the same class (``pick(features, k)`` that only indexes a
tensor is fine; one that calls ``range(k)`` is not). TensorFlow and Keras calls known to
take tensors (``tape.gradient``, Keras losses and metrics) are fine. It is deliberately
conservative: a use it cannot prove tensor-safe is reported, and the caller then keeps
Python semantics (``reduce_retracing``) instead of tensorizing.

One module of about 1,900 lines, because it is one dataflow walk: ``_Analysis`` follows
each parameter's taint through assignments, calls and the functions it enters
(``_Context`` holds what the walk shares: the parsed modules, classes and memoised
analyses), and every rule above is a case of that walk reading the same taint, dtype and
magnitude facts; split, its methods would pass that state to each other. What the APIs
it meets do with a value is data in ``analysis/tf_apis.py``. Here: what is evidently a
Python container, which names bound by tuple unpacking are tensors (the walk asks both
at every index and unpacking), the shared context and the entry points, then the walk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    QualifiedName,
    QualifiedNameProvider,
    QualifiedNameSource,
)
from libcst.metadata.base_provider import LazyValue

from autosig.analysis.number_reads import NumberReads, number_reads
from autosig.analysis.tf_apis import (
    AXIS_POSITION,
    BUILTINS_NEEDING_VALUES,
    BUILTINS_TENSOR_SAFE,
    CONFIG_KEYWORDS,
    DTYPE_CHANGING_APIS,
    FLOAT32_DEFAULT_APIS,
    INT32_MAX,
    INT64_MAX,
    INT64_NEUTRAL,
    KERAS_LOSS_PREFIXES,
    KERAS_METRIC_PREFIXES,
    KERAS_TENSOR_APIS,
    METRIC_METHODS,
    STATELESS_SEED,
    TAPE_METHODS,
    TENSOR_ARGUMENTS,
    TENSOR_SAFE_METHODS,
    TF_APIS_NEEDING_VALUES,
    TF_DTYPES,
)
from autosig.source.metadata import MetadataView, PositionProvider
from autosig.source.project_modules import ModuleResolver

# --- python containers -----------------------------------------------------
# Whether an expression is evidently a Python container (list, tuple, dict, set, str).
#
# The Python-value analysis reports a parameter that indexes something it cannot prove
# to be a tensor. When that something is evidently a Python container (a literal, a
# comprehension, ``list(...)``, or a name only ever bound to those), a tensor index
# certainly fails or changes the result. Otherwise (``self.table[k]``, a module-level
# name bound to a call) the analysis cannot decide: ``fix --verify`` may try the tensor.


CONTAINER_NODES = (
    cst.List,
    cst.Tuple,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.DictComp,
    cst.SetComp,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
)
CONTAINER_BUILTINS = frozenset({"list", "tuple", "dict", "set", "sorted", "str", "range"})
MAX_DEPTH = 3


def evidently_python(
    node: cst.BaseExpression,
    values_of: Callable[[str], list[cst.BaseExpression]],
    builtin_of: Callable[[cst.Call], str | None],
    depth: int = 0,
) -> bool:
    """``node`` is a Python container in every way the code can build it.

    ``values_of(name)``: the expressions assigned to ``name`` (empty for a parameter or
    an unknown name); ``builtin_of(call)``: the builtin a call runs, if any.
    """
    if isinstance(node, CONTAINER_NODES):
        return True
    if isinstance(node, cst.Call):
        return builtin_of(node) in CONTAINER_BUILTINS
    if isinstance(node, cst.Name) and depth < MAX_DEPTH:
        values = values_of(node.value)
        return bool(values) and all(
            evidently_python(v, values_of, builtin_of, depth + 1) for v in values
        )
    return False


# --- unpacked tensors ------------------------------------------------------
# Names bound by tuple unpacking: which of them are tensors.
#
# ``inputs, labels = split_window(window)`` is how windowed data is split in TensorFlow's
# own tutorials: a project helper returns a tuple of slices of a tensor. The Python-value
# analysis needs to know that ``labels`` is a tensor (``labels[..., k]`` then indexes a
# tensor, not a Python sequence). An element counts as a tensor only when every way the
# value can be built gives a tensor at that position: a tuple literal whose element is a
# tensor, or a call into a followed project function each of whose ``return``s is a
# tuple of the same length with a tensor at that position.


Position = tuple[int, int]
"""(index of the name in the target, number of names in the target)."""


def unpacked_positions(target: cst.CSTNode) -> Iterator[tuple[str, Position]]:
    """``a, b = ...`` -> ("a", (0, 2)), ("b", (1, 2)); nothing for nested or starred targets."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return
    elements = target.elements
    if not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in elements):
        return
    for index, element in enumerate(elements):
        assert isinstance(element.value, cst.Name)
        yield element.value.value, (index, len(elements))


def _element(value: cst.BaseExpression, position: Position) -> cst.BaseExpression | None:
    """Element ``index`` of a tuple/list literal of exactly ``arity`` plain elements."""
    index, arity = position
    if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != arity:
        return None
    if any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    return value.elements[index].value


def returned_elements(own_nodes: Iterator[cst.CSTNode]) -> list[cst.Return]:
    """The ``return``s among a function's own nodes (not nested functions'); [] if it yields."""
    returns: list[cst.Return] = []
    for node in own_nodes:
        if isinstance(node, (cst.Yield, cst.Await)):
            return []
        if isinstance(node, cst.Return):
            returns.append(node)
    return returns


def element_is_tensor(
    value: cst.BaseExpression,
    position: Position,
    is_tensor: Callable[[cst.BaseExpression], bool],
    callee_element: Callable[[cst.Call, Position], bool],
) -> bool:
    """Whether the name at ``position`` of a target unpacking ``value`` is a tensor.

    ``is_tensor`` judges an expression in the caller; ``callee_element`` judges a call
    into project code (the callee's returns, see ``returns_tensor_at``).
    """
    element = _element(value, position)
    if element is not None:
        return is_tensor(element)
    if isinstance(value, cst.Call):
        return callee_element(value, position)
    return False


def returns_tensor_at(
    returns: list[cst.Return],
    position: Position,
    is_tensor: Callable[[cst.BaseExpression], bool],
) -> bool:
    """Every ``return`` gives a tuple of ``arity`` values with a tensor at ``index``."""
    if not returns:
        return False
    for ret in returns:
        element = None if ret.value is None else _element(ret.value, position)
        if element is None or not is_tensor(element):
            return False
    return True


FunctionNode = cst.FunctionDef | cst.Lambda

RETURNED_STRING = (
    "returned as a Python value: a tf.string spec would make the function return a bytes "
    "tensor where it returned a str"
)
"""The one use of a string parameter an unsafe fix may accept (``autosig.infer.python_params``:
a string returned as it came)."""

TRACE_WORDS = re.compile(r"\b(re)?trac(e|ed|es|ing)\b", re.IGNORECASE)
"""As AS101: a print whose message mentions tracing is trace-time logging and stays."""

PLAUSIBLE_INT = 2**24
"""How large a Python int parameter may plausibly get beyond what the profile saw (a step
counter of a long run, a size): arithmetic is checked for overflow at
``max(PLAUSIBLE_INT, 2 * largest value seen)``."""

ARITHMETIC = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
    cst.Power,
    cst.MatrixMultiply,
)


@dataclass(frozen=True)
class PythonUse:
    """A place where the function needs ``param`` as a Python value."""

    param: str
    line: int
    code: str
    """The offending expression, shortened."""
    why: str
    priority: int = 0
    """Order of explanation: 0 Python needs the value itself; 1 a tensor would compute
    something else (a dtype mismatch fixable with tf.cast, arithmetic beyond int64);
    2 only an int32 overflow (int64 would do)."""
    direct: bool = field(default=True, compare=False)
    """The parameter itself appears in ``code`` (not only a value derived from it)."""
    certain: bool = field(default=True, compare=False)
    """False where the analysis cannot decide (a call it cannot follow, an argument it
    does not know, an index into something it cannot tell from a tensor): running the
    tensorized function (``fix --verify``) may settle it."""

    def describe(self) -> str:
        return f"{self.why}: `{self.code}` (line {self.line})"


class _Collector(cst.CSTVisitor):
    """Record positions and callee names of every node inside one function."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def __init__(self) -> None:
        super().__init__()
        self.lines: dict[cst.CSTNode, int] = {}
        self.callees: dict[cst.Call, set[QualifiedName]] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.lines[node] = self.get_metadata(PositionProvider, node).start.line
        if isinstance(node, cst.Call):
            self.callees[node] = set(self.get_metadata(QualifiedNameProvider, node.func, set()))
        return True


"""Dotted module name -> that project module parsed (None when it is not project code)."""

MAX_NAME_CHAIN = 60
"""Assignments followed back from one name before the overflow bound gives up."""

MAX_FOLLOW_DEPTH = 4

MAX_ANALYSES = 64
"""Analyses of followed functions one top-level analysis may make (a budget: past it,
a call is assumed to need Python values, so big code bases stay fast)."""


def _key(
    function: FunctionNode, *parts: Collection[str] | Mapping[str, object]
) -> tuple[object, ...]:
    return (
        function,
        *(frozenset(p.items()) if isinstance(p, Mapping) else frozenset(p) for p in parts),
    )


"""How deep calls into project functions are followed before assuming the worst."""


@dataclass
class _Context:
    """What one analysis shares with the analyses of the project functions it follows."""

    wrapper: MetadataWrapper
    stack: tuple[FunctionNode, ...] = ()
    cache: dict[tuple[object, ...], _Analysis] = field(default_factory=dict)
    collectors: dict[FunctionNode, _Collector] = field(default_factory=dict)
    modules: ModuleResolver | None = None
    """Parses another project module by dotted name (None: same-module calls only)."""
    others: dict[str, MetadataWrapper | None] = field(default_factory=dict)
    memo: dict[tuple[str, int], object] = field(default_factory=dict)
    """Per-module and per-class tables (overrides, attribute values, module constants)."""
    optimistic: bool = False
    """Assume what cannot be decided is a tensor: a call autosig cannot follow returns
    one, an index into something not evidently a Python container gives one. Run only
    to see whether the uses left are all undecidable (``NumberUses.undecided``)."""

    def for_module(self, name: str) -> _Context | None:
        """A context over project module ``name`` (same stack and cache), if it resolves."""
        if self.modules is None:
            return None
        if name not in self.others:
            try:
                self.others[name] = self.modules(name)
            except Exception:  # an unreadable or unparsable module: not followed
                self.others[name] = None
        wrapper = self.others[name]
        if wrapper is None:
            return None
        return replace(self, wrapper=wrapper)

    def function_named(self, qualname: str) -> FunctionNode | None:
        """``find_function`` in this module, remembered."""
        key = ("function " + qualname, id(self.wrapper.module))
        if key not in self.memo:
            self.memo[key] = find_function(self.wrapper.module, qualname)
        return self.memo[key]  # type: ignore[return-value]

    def overridden(self, owner: cst.ClassDef, method: str) -> bool:
        """A class of this module deriving from ``owner`` defines ``method`` again."""
        key = ("overrides", id(self.wrapper.module))
        table = self.memo.get(key)
        if table is None:
            table = {}
            for node in _walk_all(self.wrapper.module):
                if isinstance(node, cst.ClassDef):
                    methods = {
                        s.name.value for s in node.body.body if isinstance(s, cst.FunctionDef)
                    }
                    for base in node.bases:
                        name = short_code(base.value, 200).rsplit(".", 1)[-1]
                        table.setdefault(name, []).append((node, methods))
            self.memo[key] = table
        assert isinstance(table, dict)
        return any(
            sub is not owner and method in methods
            for sub, methods in table.get(owner.name.value, [])
        )

    def init_values(self, owner: cst.ClassDef) -> dict[str, list[cst.BaseExpression]]:
        """``self.<attr>`` -> values assigned to it in the methods of ``owner``."""
        key = ("attributes", id(owner))
        table = self.memo.get(key)
        if table is None:
            table = {}
            for statement in owner.body.body:
                if not isinstance(statement, cst.FunctionDef):
                    continue
                for node in _walk_all(statement):
                    targets: list[cst.BaseExpression] = []
                    value: cst.BaseExpression | None = None
                    if isinstance(node, cst.Assign):
                        targets, value = [t.target for t in node.targets], node.value
                    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                        targets, value = [node.target], node.value or cst.Name("None")
                    for t in targets:
                        if isinstance(t, cst.Attribute) and value is not None:
                            table.setdefault(t.attr.value, []).append(value)
            self.memo[key] = table
        assert isinstance(table, dict)
        return table

    def module_values(self, name: str) -> list[cst.BaseExpression]:
        """Values assigned to ``name`` at the top level of the module."""
        key = ("module", id(self.wrapper.module))
        table = self.memo.get(key)
        if table is None:
            table = {}
            for statement in self.wrapper.module.body:
                if not isinstance(statement, cst.SimpleStatementLine):
                    continue
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            for bound in target_names(target.target):
                                table.setdefault(bound, []).append(small.value)
                    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and isinstance(
                        small.target, cst.Name
                    ):
                        table.setdefault(small.target.value, []).append(
                            small.value or cst.Name("None")
                        )
            self.memo[key] = table
        assert isinstance(table, dict)
        return table.get(name, [])

    def collector(self, function: FunctionNode) -> _Collector:
        found = self.collectors.get(function)
        if found is None:
            found = _Collector()
            with found.resolve(self.wrapper):
                function.visit(found)
            self.collectors[function] = found
        return found

    def enclosing_class(self, function: FunctionNode) -> cst.ClassDef | None:
        """The class whose body defines ``function`` directly, if any (None for a
        function of another module)."""
        key = ("view", id(self.wrapper.module))
        view = self.memo.get(key)
        if view is None:
            view = self.memo[key] = MetadataView(self.wrapper)
        assert isinstance(view, MetadataView)
        return view.enclosing_class(function) if isinstance(function, cst.FunctionDef) else None

    def cached(self, function: FunctionNode, *rest: Collection[str] | Mapping[str, object]) -> bool:
        return _key(function, *rest) in self.cache

    def analysis(
        self,
        function: FunctionNode,
        params: Collection[str],
        tensor_params: Collection[str],
        dtypes: Mapping[str, str],
        bounds: Mapping[str, float],
        converted: Mapping[str, str],
    ) -> _Analysis:
        key = _key(function, params, tensor_params, dtypes, bounds, converted)
        found = self.cache.get(key)
        if found is None:
            inner = replace(self, stack=(*self.stack, function))
            found = _Analysis(
                function,
                set(params),
                set(tensor_params),
                self.collector(function),
                dict(dtypes),
                inner,
                dict(bounds),
                dict(converted),
            )
            self.cache[key] = found
        return found

    def qualified(self, node: cst.CSTNode) -> Collection[QualifiedName]:
        """Qualified names of ``node`` anywhere in the module (code outside the function)."""
        found: object = self.wrapper.resolve(QualifiedNameProvider).get(node, set())
        if isinstance(found, LazyValue):
            found = found()
        return found if isinstance(found, (set, frozenset)) else set()


def _walk_all(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def plausible_bound(observed: int | None) -> float:
    """The magnitude up to which a Python int parameter is checked for overflow."""
    return float(max(PLAUSIBLE_INT, 2 * abs(observed or 0)))


def python_only_uses(
    wrapper: MetadataWrapper,
    function: FunctionNode,
    params: Collection[str],
    tensor_params: Collection[str] = (),
    dtypes: Mapping[str, str] | None = None,
    observed: Mapping[str, int] | None = None,
    converted: Mapping[str, str] | None = None,
    modules: ModuleResolver | None = None,
    optimistic: bool = False,
) -> dict[str, list[PythonUse]]:
    """For each of ``params``, the uses in ``function`` where it must stay a Python value.

    ``function`` must be a node of ``wrapper.module``. ``tensor_params`` are parameters
    known (from the profile) to be tensors: indexing them with a parameter is fine.
    ``dtypes`` maps parameters to their dtype: the planned spec dtype of each of
    ``params`` and the observed dtype of tensor parameters. With it, arithmetic that
    mixes a parameter with a tensor of another dtype is reported (TensorFlow does not
    promote: an int32 scalar times a float32 tensor fails, where the Python int would
    have been converted). ``observed`` maps int parameters to the largest magnitude the
    profile saw (overflow is checked at ``plausible_bound`` of it); ``converted`` maps
    parameters to the dtype their Python values convert to on their own (int32 for
    small ints): a parameter planned wider than that (int64) must not reach an op whose
    result dtype follows it. ``modules`` parses other project modules by dotted name:
    with it, calls into functions imported from them are followed too. A parameter with
    an empty list can be tensorized. ``optimistic``: see ``_Context.optimistic``.
    """
    context = _Context(wrapper, modules=modules, optimistic=optimistic)
    bounds = {p: plausible_bound((observed or {}).get(p)) for p in params}
    analysis = context.analysis(
        function, params, tensor_params, dict(dtypes or {}), bounds, dict(converted or {})
    )
    return analysis.report()


def required_dtypes(
    wrapper: MetadataWrapper,
    function: FunctionNode,
    params: Collection[str],
    observed: Mapping[str, int] | None = None,
    dtypes: Mapping[str, str] | None = None,
    tensor_params: Collection[str] = (),
    modules: ModuleResolver | None = None,
) -> dict[str, str]:
    """Parameters that flow into a TensorFlow argument needing one integer dtype.

    ``tf.summary.*(step=...)`` takes int64 only: an int32 scalar spec for a step counter
    would fail to trace ("Tensor conversion requested dtype int64"), where the Python
    int converted fine. An int that flows into Python arithmetic whose result may leave
    int32 range (``step * 1000003``; checked at ``plausible_bound`` of the largest value
    seen, ``observed``) needs int64 too: an int32 tensor would silently wrap around.
    """
    context = _Context(wrapper, modules=modules)
    bounds = {p: plausible_bound((observed or {}).get(p)) for p in params}
    planned = dict.fromkeys(params, "int32")
    planned.update(dtypes or {})
    analysis = context.analysis(function, params, tensor_params, planned, bounds, {})
    return analysis.required_dtypes()


@dataclass(frozen=True)
class NumberUses:
    """The uses that keep Python numbers Python values, for the dtypes asked
    (``NumberFacts.uses_with``)."""

    uses: dict[str, list[PythonUse]]
    """Parameter -> its uses needing a Python value (``python_only_uses``)."""
    undecided: frozenset[str]
    """Parameters the analysis cannot decide: some use is uncertain, and when everything
    it cannot decide is assumed to be a tensor (``x * table[k]`` then no longer mixes a
    Python int into a float tensor) no certain one is left (``fix --verify`` may try them)."""
    int64: frozenset[str]
    """Of the parameters asked to widen, those an int64 spec computes the same for: no
    use needs them as Python values either with their dtype or with int64."""


@dataclass(frozen=True)
class NumberFacts:
    """What the analysis finds for a function's Python-number parameters (``params``)
    before their dtypes are settled (``number_facts``): the dtypes TensorFlow arguments
    and int32 overflow require, and how each is read by name (``number_reads``). The
    uses follow once the caller has planned the dtypes (``uses_with``)."""

    wrapper: MetadataWrapper
    function: FunctionNode
    params: tuple[str, ...]
    tensor_params: tuple[str, ...]
    observed: Mapping[str, int]
    modules: ModuleResolver | None
    required: dict[str, str]
    """Parameter -> the integer dtype it needs (``required_dtypes``)."""
    reads: dict[str, NumberReads]

    def uses_with(
        self,
        dtypes: Mapping[str, str],
        converted: Mapping[str, str],
        widen: Collection[str] = (),
    ) -> NumberUses:
        """The uses with the planned ``dtypes`` (``converted``: the dtypes the Python
        values convert to on their own; see ``python_only_uses``). ``widen``: int
        parameters to plan int64 where that changes no use (``NumberUses.int64``), before
        the uses are found."""
        planned = dict(dtypes)
        int64: list[str] = []
        if widen:
            args = (self.tensor_params, planned, self.observed, converted, self.modules)
            wide = dict(planned, **dict.fromkeys(widen, "int64"))
            base = python_only_uses(self.wrapper, self.function, widen, *args)
            args = (self.tensor_params, wide, self.observed, converted, self.modules)
            widened = python_only_uses(self.wrapper, self.function, widen, *args)
            int64 = [p for p in widen if not base.get(p) and not widened.get(p)]
            planned.update(dict.fromkeys(int64, "int64"))
        args = (self.tensor_params, planned, self.observed, converted, self.modules)
        found = python_only_uses(self.wrapper, self.function, self.params, *args)
        optimistic: dict[str, list[PythonUse]] = {}
        if any(not u.certain for uses in found.values() for u in uses):
            optimistic = python_only_uses(
                self.wrapper, self.function, self.params, *args, optimistic=True
            )
        undecided = {
            p
            for p in self.params
            if any(not u.certain for u in found.get(p, []))
            and all(not u.certain for u in optimistic.get(p, []))
        }
        return NumberUses(found, frozenset(undecided), frozenset(int64))


def number_facts(
    wrapper: MetadataWrapper,
    function: FunctionNode,
    params: Collection[str],
    tensor_params: Collection[str],
    dtypes: Mapping[str, str],
    observed: Mapping[str, int],
    modules: ModuleResolver | None = None,
) -> NumberFacts:
    """The facts of Python-number parameters ``params`` of ``function`` (a node of
    ``wrapper.module``) before their dtypes are settled: ``dtypes`` maps them to the
    dtype their Python values convert to and tensor parameters to theirs; the rest as in
    ``python_only_uses``."""
    required = required_dtypes(wrapper, function, params, observed, dtypes, tensor_params, modules)
    return NumberFacts(
        wrapper,
        function,
        tuple(params),
        tuple(tensor_params),
        observed,
        modules,
        required,
        number_reads(wrapper, function, params),
    )


def find_function(module: cst.Module, qualname: str) -> FunctionNode | None:
    """The FunctionDef named by ``qualname`` (``C.m``, ``f.<locals>.g``), None if absent."""
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    candidates: list[cst.CSTNode] = [module]
    for index, part in enumerate(parts):
        found: list[cst.CSTNode] = []
        for scope in candidates:
            for node in _direct_definitions(scope):
                name = node.name.value if not isinstance(node, cst.Lambda) else "<lambda>"
                if name == part:
                    found.append(node)
        if not found:
            return None
        candidates = found
        if index == len(parts) - 1:
            last = candidates[0]
            return last if isinstance(last, (cst.FunctionDef, cst.Lambda)) else None
    return None


def _direct_definitions(
    scope: cst.CSTNode,
) -> Iterator[cst.FunctionDef | cst.ClassDef | cst.Lambda]:
    """Definitions whose qualname is one level below ``scope``."""
    stack = list(scope.children)
    while stack:
        node = stack.pop(0)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            yield node
            continue
        stack[:0] = list(node.children)


# -- the analysis proper (pure, over CST nodes) ---------------------------------------


def target_names(target: cst.CSTNode) -> Iterator[str]:
    """The names an assignment target binds (``a``, ``a, (b, *c)``)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def _needs_int64(api: str, keyword: str | None, index: int) -> bool:
    """Whether argument ``keyword`` (or positional ``index``) of ``tf.<api>`` is int64-only."""
    if api.startswith("summary.") and keyword == "step":
        return True
    if api == "summary.experimental.set_step" and (keyword == "step" or index == 0):
        return True
    if api in ("SparseTensor", "sparse.SparseTensor"):
        return keyword in ("indices", "dense_shape") or index in (0, 2)
    return False


def _wider(dtype: str, than: str) -> bool:
    """TensorFlow would need a cast to combine ``than`` with ``dtype``, the wider one."""
    if than.startswith("int") and dtype.startswith("float"):
        return True
    return than == "int32" and dtype == "int64"


def _int64_neutral(api: str, keyword: str | None, index: int) -> bool:
    """Whether an int64 tensor at this argument gives what an int32 one would."""
    if api.startswith(STATELESS_SEED) and (keyword in ("seed", "shape") or index in (0, 1)):
        return True
    found = INT64_NEUTRAL.get(api)
    if found is None:
        return False
    position, name = found
    return position == -1 or index == position or keyword == name


def _logs_tracing(call: cst.Call) -> bool:
    """A print whose string literals mention tracing (as AS101 decides)."""
    for node in _walk_all(call):
        if isinstance(node, (cst.SimpleString, cst.FormattedStringText)) and TRACE_WORDS.search(
            node.value
        ):
            return True
    return False


def _dtype_name(node: cst.BaseExpression) -> str | None:
    """``tf.float32`` / ``tf.dtypes.int64`` / ``"float32"`` -> the dtype's name."""
    name: object = None
    if isinstance(node, cst.Attribute):
        name = node.attr.value
    elif isinstance(node, cst.SimpleString):
        name = node.evaluated_value
    return name if isinstance(name, str) and name in TF_DTYPES else None


def short_code(node: cst.CSTNode, limit: int = 60) -> str:
    """``node``'s source on one line, shortened to ``limit`` characters for reports."""
    text = " ".join(cst.Module([]).code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_sequence_literal(node: cst.BaseExpression) -> bool:
    return isinstance(
        node,
        (
            cst.List,
            cst.Tuple,
            cst.ListComp,
            cst.SimpleString,
            cst.ConcatenatedString,
            cst.FormattedString,
        ),
    )


def _is_string_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _effects_only(block: cst.BaseSuite) -> bool:
    """A branch that only calls things (``tf.print``, ``v.assign_add``): any cond is fine."""
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for statement in statements:
        small = (
            statement.body
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
            else None
        )
        if small is None:
            return False
        for item in small:
            if isinstance(item, cst.Pass):
                continue
            if not (isinstance(item, cst.Expr) and isinstance(item.value, cst.Call)):
                return False
    return True


_AUG_TO_BINARY: dict[type, type] = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.PowerAssign: cst.Power,
    cst.LeftShiftAssign: cst.LeftShift,
    cst.RightShiftAssign: cst.RightShift,
    cst.FloorDivideAssign: cst.FloorDivide,
    cst.ModuloAssign: cst.Modulo,
    cst.BitOrAssign: cst.BitOr,
    cst.BitXorAssign: cst.BitXor,
    cst.BitAndAssign: cst.BitAnd,
}

_HUGE = 1e300


def _combine(operator: cst.CSTNode, left: float, right: float) -> float | None:
    """Bound of ``|left op right|`` from bounds of its operands (None: not an int)."""
    if isinstance(operator, (cst.Add, cst.Subtract)):
        out = left + right
    elif isinstance(operator, cst.Multiply):
        out = left * right
    elif isinstance(operator, cst.Power):
        if left <= 1:
            out = left
        elif right > 1100:
            out = _HUGE
        else:
            try:
                out = left**right
            except OverflowError:
                out = _HUGE
    elif isinstance(operator, cst.LeftShift):
        out = _HUGE if right > 1000 else left * 2.0**right
    elif isinstance(operator, (cst.FloorDivide, cst.RightShift, cst.BitAnd)):
        out = left
    elif isinstance(operator, cst.Modulo):
        out = min(left, right)
    elif isinstance(operator, (cst.BitOr, cst.BitXor)):
        out = 2 * max(left, right)
    else:
        return None  # true division, @: not an int
    return min(out, _HUGE)


def _plain_function(function: cst.FunctionDef) -> bool:
    """No decorator but tf.function: calling it runs its body as written."""
    for decorator in function.decorators:
        name = short_code(decorator.decorator, 200).split("(")[0]
        if name != "function" and not name.endswith(".function"):
            return False
    return True


def _bind(
    callee: cst.FunctionDef, call: cst.Call, method: bool
) -> dict[str, cst.BaseExpression] | None:
    """Callee parameter -> argument expression, None when the binding is not plain."""
    params = callee.params
    positional = [*params.posonly_params, *params.params]
    if method:
        if not positional:
            return None
        positional = positional[1:]
    keywords = {p.name.value for p in [*params.params, *params.kwonly_params]}
    keywords -= {p.name.value for p in params.posonly_params}
    if method and params.params and not params.posonly_params:
        keywords.discard(params.params[0].name.value)
    binding: dict[str, cst.BaseExpression] = {}
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if index >= len(positional):
                return None
            binding[positional[index].name.value] = arg.value
            index += 1
        else:
            name = arg.keyword.value
            if name not in keywords or name in binding:
                return None
            binding[name] = arg.value
    return binding


def _keras_class(api: str, prefixes: tuple[str, ...]) -> bool:
    """``keras.losses.MeanSquaredError`` (a class: its instances take tensors)."""
    return api.startswith(prefixes) and api.rsplit(".", 1)[-1][:1].isupper()


def _keras_tensor_function(api: str) -> bool:
    """``keras.losses.mean_squared_error``: a loss or metric function of tensors."""
    last = api.rsplit(".", 1)[-1]
    return (
        api.startswith(KERAS_LOSS_PREFIXES + KERAS_METRIC_PREFIXES)
        and last[:1].islower()
        and last not in ("get", "serialize", "deserialize")
    )


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    return [
        *params.posonly_params,
        *params.params,
        *params.kwonly_params,
        *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)),
    ]


def _free_names(function: FunctionNode) -> set[str]:
    """Names ``function`` reads that it does not bind itself (parameters, assignments)."""
    bound: set[str] = set()
    for param in _all_params(function.params):
        bound.add(param.name.value)
    read: set[str] = set()
    skip: set[int] = set()
    for node in _walk_all(function.body):
        if isinstance(node, cst.Attribute):
            skip.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skip.add(id(node.keyword))
        if id(node) in skip:
            continue
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = node.targets if isinstance(node, cst.Assign) else [node]
            for t in targets:
                bound.update(target_names(t.target))
        elif isinstance(node, (cst.For, cst.CompFor)):
            bound.update(target_names(node.target))
        elif isinstance(node, cst.NamedExpr):
            bound.update(target_names(node.target))
        elif isinstance(node, cst.Name):
            read.add(node.value)
    return read - bound


BITWISE = (cst.LeftShift, cst.RightShift, cst.BitAnd, cst.BitOr, cst.BitXor)
BITWISE_AUG = (
    cst.LeftShiftAssign,
    cst.RightShiftAssign,
    cst.BitAndAssign,
    cst.BitOrAssign,
    cst.BitXorAssign,
)
BITWISE_WHY = (
    "a Python bitwise operator: an integer tensor has no << or >> and takes & | ^ "
    "only as logical operators on bools"
)


class _Analysis:
    def __init__(
        self,
        function: FunctionNode,
        params: set[str],
        tensor_params: set[str],
        collector: _Collector,
        dtypes: dict[str, str],
        context: _Context,
        bounds: dict[str, float],
        converted: dict[str, str],
    ) -> None:
        self.function = function
        self.params = params
        self.collector = collector
        self.context = context
        self.bounds = bounds
        self.converted = converted
        self.param_dtypes = {k: v for k, v in dtypes.items() if k in params}
        self.dtypes: dict[str, str] = {k: v for k, v in dtypes.items() if k not in params}
        self.assignments: list[tuple[list[str], cst.BaseExpression]] = []
        self.sequences: set[str] = set()
        self.unpacked: dict[str, list[tuple[cst.BaseExpression, Position]]] = {}
        """Name -> (value, position) where ``a, b = value`` binds it (unpacked_positions)."""
        self.aug_assignments: dict[str, list[cst.AugAssign]] = {}
        self._collect_assignments(function)
        self.taint: dict[str, set[str]] = {p: {p} for p in params}
        self.tensors: set[str] = set(tensor_params) - params
        self._magnitudes: dict[str, float | None] = {}
        self._propagate()
        self._magnitudes.clear()  # values met while the data flow was still growing

    def report(self) -> dict[str, list[PythonUse]]:
        result: dict[str, list[PythonUse]] = {p: [] for p in self.params}
        seen: set[tuple[str, int, str]] = set()
        for use in self.uses():
            key = (use.param, use.line, use.why)
            if key not in seen:
                seen.add(key)
                result[use.param].append(use)
        for found in result.values():
            # Most specific first: ``[x] * n`` before the ``return`` that contains it.
            # A use of the parameter itself before one of a value derived from it:
            # ``range(levels)`` explains ``ksize=2**level`` on the line above.
            found.sort(key=lambda u: (u.priority, not u.direct, u.line, len(u.code)))
        return result

    def returns_tensor(self) -> bool:
        """Every ``return`` of the function gives a tensor (and there is one)."""
        if isinstance(self.function, cst.Lambda):
            return self.is_tensor(self.function.body)
        returns = [
            n for n in self._own_nodes(self.function) if isinstance(n, (cst.Return, cst.Yield))
        ]
        return bool(returns) and all(
            isinstance(r, cst.Return) and r.value is not None and self.is_tensor(r.value)
            for r in returns
        )

    def _own_nodes(self, root: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Nodes of ``root`` outside nested functions, lambdas and classes."""
        stack = list(root.children)
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                continue
            yield node
            stack.extend(reversed(node.children))

    # -- data flow -----------------------------------------------------------------
    def _collect_assignments(self, root: cst.CSTNode) -> None:
        for node in self._walk(root):
            pairs: list[tuple[cst.CSTNode, cst.BaseExpression]] = []
            if isinstance(node, cst.Assign):
                pairs = [(t.target, node.value) for t in node.targets]
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                pairs = [(node.target, node.value)]
            elif isinstance(node, cst.AugAssign):
                pairs = [(node.target, node.value), (node.target, node.target)]
                if isinstance(node.target, cst.Name):
                    self.aug_assignments.setdefault(node.target.value, []).append(node)
            elif isinstance(node, (cst.For, cst.CompFor)):
                pairs = [(node.target, node.iter)]
            elif isinstance(node, cst.NamedExpr):
                pairs = [(node.target, node.value)]
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                pairs = [(node.asname.name, node.item)]
            for target, value in pairs:
                names = list(target_names(target))
                if isinstance(node, cst.Assign):
                    for name, position in unpacked_positions(target):
                        self.unpacked.setdefault(name, []).append((value, position))
                if names:
                    self.assignments.append((names, value))
                    if isinstance(value, (cst.List, cst.ListComp, cst.Tuple)) or (
                        isinstance(value, cst.Call) and self._builtin(value) in ("list", "tuple")
                    ):
                        self.sequences.update(names)

    def _propagate(self) -> None:
        for _ in range(50):
            changed = False
            for names, value in self.assignments:
                taint = self.taint_of(value)
                for name in names:
                    current = self.taint.setdefault(name, set())
                    if not taint <= current:
                        current |= taint
                        changed = True
            candidates = {n for names, _ in self.assignments for n in names} - self.params
            tensors = set(self.tensors)
            for name in candidates - tensors:
                values = [v for names, v in self.assignments if name in names]
                if not self.taint.get(name) and all(
                    self._binds_tensor(name, v, tensors) for v in values
                ):
                    tensors.add(name)
            if tensors != self.tensors:
                self.tensors = tensors
                changed = True
            for name in tensors - self.params - set(self.dtypes):
                found = {self.dtype_of(v) for names, v in self.assignments if name in names}
                dtype = found.pop() if len(found) == 1 else None
                if dtype is not None:
                    self.dtypes[name] = dtype
                    changed = True
            if not changed:
                return

    def _binds_tensor(self, name: str, value: cst.BaseExpression, tensors: set[str]) -> bool:
        """``name = value`` or ``..., name, ... = value`` makes ``name`` a tensor."""
        for unpacked, position in self.unpacked.get(name, ()):
            if unpacked is value:
                return element_is_tensor(
                    value,
                    position,
                    lambda e: self.is_tensor(e, tensors),
                    lambda call, at: self._callee_returns_tensor_at(call, at, tensors),
                )
        return self.is_tensor(value, tensors)

    def _callee_returns_tensor_at(self, call: cst.Call, at: Position, tensors: set[str]) -> bool:
        followed = self.follow(call, tensors)
        if followed is None:
            return False
        own = followed._own_nodes(followed.function)
        return returns_tensor_at(returned_elements(own), at, followed.is_tensor)

    def _values_of(self, name: str) -> list[cst.BaseExpression]:
        """What ``name`` is bound to in the function, else at module level."""
        own = {p.name.value for p in _all_params(self.function.params)}
        if name in self.params or name in self.tensors or name in own:
            return []
        found = [v for names, v in self.assignments if name in names]
        return found or self.context.module_values(name)

    def _qualified(self, call: cst.Call) -> set[str]:
        return {q.name for q in self.collector.callees.get(call, set())}

    def _builtin(self, call: cst.Call) -> str | None:
        for q in self.collector.callees.get(call, set()):
            if q.source is QualifiedNameSource.BUILTIN:
                return q.name.removeprefix("builtins.")
        return None

    def _tf_api(self, call: cst.Call) -> str | None:
        names = self._qualified(call) if call in self.collector.callees else set()
        if call not in self.collector.callees:
            names = {q.name for q in self.context.qualified(call.func)}
        for name in names:
            if name.startswith(("tensorflow.", "keras.")):
                return name
        dotted = short_code(call.func, 200)
        if dotted.startswith("tf."):
            return "tensorflow." + dotted[3:]
        return None

    def _tf_needs_values(self, api: str) -> bool:
        if api.startswith(KERAS_TENSOR_APIS) or _keras_tensor_function(api):
            return False
        return any(api == p or api.startswith(p) for p in TF_APIS_NEEDING_VALUES)

    # -- where values come from --------------------------------------------------------
    def origin(self, node: cst.BaseExpression, depth: int = 0) -> str | None:
        """The TF/Keras API that created the object ``node`` refers to, when evident.

        ``tf.GradientTape()`` for ``tape`` of ``with tf.GradientTape() as tape``; the
        loss class for ``loss_fn = keras.losses.MeanSquaredError()`` (local, module
        level, or ``self.loss_fn`` assigned in ``__init__`` of the same class).
        """
        if depth > 3:
            return None
        if isinstance(node, cst.Call):
            return self._tf_api(node)
        values: list[cst.BaseExpression] = []
        if isinstance(node, cst.Name):
            if node.value in self.params or node.value in self.tensors:
                return None
            values = [v for names, v in self.assignments if node.value in names]
            if not values:
                values = self.context.module_values(node.value)
        elif (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == self._self_name()
        ):
            values = self._init_assignments(node.attr.value)
        found = {self.origin(v, depth + 1) if isinstance(v, cst.Call) else None for v in values}
        return found.pop() if len(found) == 1 else None

    def _self_name(self) -> str | None:
        if not isinstance(self.function, cst.FunctionDef):
            return None
        if self.context.enclosing_class(self.function) is None:
            return None
        params = self.function.params
        first = [*params.posonly_params, *params.params]
        return first[0].name.value if first else None

    def _init_assignments(self, attr: str) -> list[cst.BaseExpression]:
        assert isinstance(self.function, cst.FunctionDef)
        owner = self.context.enclosing_class(self.function)
        return [] if owner is None else self.context.init_values(owner).get(attr, [])

    def tensor_call(self, call: cst.Call) -> str | None:
        """Why ``call`` takes tensors for every argument it is given, else None."""
        func = call.func
        if isinstance(func, cst.Attribute):
            made_by = self.origin(func.value)
            method = func.attr.value
            if made_by == "tensorflow.GradientTape" and method in TAPE_METHODS:
                return "GradientTape." + method
            if made_by and _keras_class(made_by, KERAS_METRIC_PREFIXES):
                if method in METRIC_METHODS:
                    return made_by + "." + method
        made_by = self.origin(func)
        if made_by is not None and _keras_class(
            made_by, KERAS_LOSS_PREFIXES + KERAS_METRIC_PREFIXES
        ):
            return made_by
        return None

    def is_tensor(self, node: cst.CSTNode, tensors: set[str] | None = None) -> bool:
        tensors = self.tensors if tensors is None else tensors
        if isinstance(node, cst.Name):
            return node.value in tensors
        if isinstance(node, cst.Call):
            api = self._tf_api(node)
            if api is not None:
                return not self._tf_needs_values(api)
            if self.tensor_call(node) is not None:
                return True
            followed = self.follow(node, tensors)
            if followed is not None:
                return followed.returns_tensor()
            return self.context.optimistic and self._builtin(node) is None
        if isinstance(node, cst.BinaryOperation):
            return self.is_tensor(node.left, tensors) or self.is_tensor(node.right, tensors)
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self.is_tensor(node.expression, tensors)
        if isinstance(node, cst.Subscript):
            return (
                self.is_tensor(node.value, tensors)
                or self._multi_axis_on_tensor(node, tensors)
                or (
                    self.context.optimistic
                    and not evidently_python(node.value, self._values_of, self._builtin)
                )
            )
        return False

    def _multi_axis_on_tensor(self, node: cst.Subscript, tensors: set[str]) -> bool:
        """``p[:, k]`` / ``p[..., k]`` where ``p`` comes from a call given a tensor.

        A list or tuple refuses a tuple index and a dict has no slice keys: such a
        subscript can only be on an array, and an array computed from a symbolic tensor
        inside a tf.function is a tensor (NumPy cannot take one).
        """
        if len(node.slice) < 2 or not any(
            isinstance(e.slice, cst.Slice)
            or (isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Ellipsis))
            or (
                isinstance(e.slice, cst.Index)
                and isinstance(e.slice.value, cst.Name)
                and e.slice.value.value == "None"
            )
            for e in node.slice
        ):
            return False
        value = node.value
        calls: list[cst.BaseExpression] = [value]
        if isinstance(value, cst.Name) and value.value not in self.params:
            calls = [v for names, v in self.assignments if value.value in names]
        return bool(calls) and all(
            isinstance(c, cst.Call)
            and any(self.is_tensor(a.value, tensors) for a in c.args)
            and not any(self.taint_of_in(a.value, tensors) for a in c.args)
            for c in calls
        )

    def taint_of_in(self, node: cst.CSTNode, tensors: set[str]) -> set[str]:
        if isinstance(node, cst.BaseExpression) and self.is_tensor(node, tensors):
            return set()
        return self.taint_of(node)

    def dtype_of(self, node: cst.CSTNode) -> str | None:
        """The dtype of a tensor expression when it is evident from the code, else None."""
        if isinstance(node, cst.Name):
            return self.dtypes.get(node.value)
        if isinstance(node, cst.BinaryOperation):
            for side in (node.left, node.right):
                if self.is_tensor(side):
                    return self.dtype_of(side)
            return None
        if isinstance(node, cst.UnaryOperation):
            return self.dtype_of(node.expression)
        if isinstance(node, cst.Subscript):
            return self.dtype_of(node.value)
        if isinstance(node, cst.Call):
            return self._call_dtype(node)
        return None

    def _call_dtype(self, call: cst.Call) -> str | None:
        api = self._tf_api(call)
        if api is None:
            return None
        short = api.removeprefix("tensorflow.")
        explicit = next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == "dtype"),
            None,
        )
        if short in ("cast", "saturate_cast", "dtypes.cast") and len(call.args) > 1:
            explicit = call.args[1].value
        if explicit is not None:
            return _dtype_name(explicit)
        if short in FLOAT32_DEFAULT_APIS:
            return "float32"
        if short in DTYPE_CHANGING_APIS or short.startswith(("strings.", "io.", "math.is_")):
            return None
        positional = [a.value for a in call.args if a.keyword is None]
        if positional and self.is_tensor(positional[0]):
            return self.dtype_of(positional[0])
        return None

    def taint_of(self, node: cst.CSTNode) -> set[str]:
        """Parameters whose Python value flows into ``node``'s value."""
        if isinstance(node, cst.BaseExpression) and self.is_tensor(node):
            return set()
        if isinstance(node, cst.Name):
            return set(self.taint.get(node.value, ()))
        if isinstance(node, cst.Attribute):
            return self.taint_of(node.value)
        if isinstance(node, cst.Arg):
            return self.taint_of(node.value)
        if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.Param, cst.Parameters)):
            return set()
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            # The loop's own use (range(n), ...) is reported where it happens.
            return self.taint_of(node.elt)
        if isinstance(node, cst.DictComp):
            return self.taint_of(node.key) | self.taint_of(node.value)
        out: set[str] = set()
        for child in node.children:
            out |= self.taint_of(child)
        return out

    # -- integer magnitudes (overflow) ------------------------------------------------
    def _int_params(self, taint: set[str]) -> set[str]:
        return {p for p in taint & self.params if self.param_dtypes.get(p, "").startswith("int")}

    def magnitude(self, node: cst.CSTNode, seen: frozenset[str] = frozenset()) -> float | None:
        if len(seen) > MAX_NAME_CHAIN:
            return float(PLAUSIBLE_INT) * 2**31  # too long to follow: assume it may overflow
        return self._magnitude(node, seen)

    def _magnitude(self, node: cst.CSTNode, seen: frozenset[str]) -> float | None:
        """An upper bound of ``|value|`` of a Python int expression, None if not one.

        Parameters count at their plausible bound; values autosig cannot see (an
        attribute, a call) count as a plausible int; a tensor is None (its arithmetic
        wraps in the original too).
        """
        if isinstance(node, cst.BaseExpression) and self.is_tensor(node):
            return None
        if isinstance(node, cst.Integer):
            return float(abs(int(node.evaluated_value)))
        if isinstance(node, (cst.Float, cst.Imaginary, cst.SimpleString)):
            return None
        if isinstance(node, cst.Name):
            return self._name_magnitude(node.value, seen)
        if isinstance(node, cst.BinaryOperation):
            left = self.magnitude(node.left, seen)
            right = self.magnitude(node.right, seen)
            if left is None or right is None:
                return None
            return _combine(node.operator, left, right)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return None
            inner = self.magnitude(node.expression, seen)
            return None if inner is None else inner + 1
        return float(PLAUSIBLE_INT)

    def _name_magnitude(self, name: str, seen: frozenset[str]) -> float | None:
        if not seen and name in self._magnitudes:
            return self._magnitudes[name]
        found = self._name_magnitude_uncached(name, seen)
        if not seen:
            self._magnitudes[name] = found
        return found

    def _name_magnitude_uncached(self, name: str, seen: frozenset[str]) -> float | None:
        if name in self.params:
            if not self.param_dtypes.get(name, "int").startswith("int"):
                return None
            return self.bounds.get(name, float(PLAUSIBLE_INT))
        if name in seen:
            return 0.0
        inner = seen | {name}
        values = [
            v
            for names, v in self.assignments
            if name in names
            and not (isinstance(v, cst.Name) and v.value == name)
            and not any(v is a.value for a in self.aug_assignments.get(name, ()))
        ]
        if not values:
            values = self.context.module_values(name)
            if not values:
                return float(PLAUSIBLE_INT) if not self.is_tensor(cst.Name(name)) else None
        found = [m for m in (self.magnitude(v, inner) for v in values) if m is not None]
        if not found:
            return None
        total = max(found)
        for aug in self.aug_assignments.get(name, ()):
            other = self.magnitude(aug.value, inner)
            if other is None:
                return None
            total = _combine(_AUG_TO_BINARY.get(type(aug.operator), cst.Add)(), total, other)
        return total

    def _overflows(self) -> Iterator[tuple[cst.CSTNode, set[str], float, str]]:
        """(node, int parameters in it, bound of its value, wording) where it may pass int32."""
        for node in self._walk(self.function):
            if isinstance(node, cst.BinaryOperation):
                expression: cst.CSTNode = node
            elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                expression = node.target
            else:
                continue
            params = self._int_params(self.taint_of(expression))
            if not params:
                continue
            size = self.magnitude(expression)
            if size is None or size <= INT32_MAX:
                continue
            shown = ", ".join(
                f"`{p}` up to {int(self.bounds.get(p, PLAUSIBLE_INT)):,}" for p in sorted(params)
            )
            yield node, params, size, shown

    def overflow_uses(self) -> Iterator[PythonUse]:
        """Python int arithmetic on a parameter that may leave int32 (or int64) range.

        Listed after the structural uses (priority 1 and 2): ``range(n)`` explains more
        than the ``2**level`` beside it.
        """
        for node, params, size, shown in self._overflows():
            if size > INT64_MAX:
                yield from self._use(
                    params,
                    node,
                    f"Python int arithmetic that may exceed int64 (with {shown}): Python "
                    "ints are unbounded, a tensor would wrap around",
                    priority=1,
                )
                continue
            for param in params:
                if self.param_dtypes.get(param) == "int32":
                    yield from self._use(
                        {param},
                        node,
                        f"Python int arithmetic that may exceed int32 (with {shown}): an "
                        "int32 tensor would wrap around (int64 would not)",
                        priority=2,
                    )

    # -- following calls into project code ---------------------------------------------
    def _callee(self, call: cst.Call) -> tuple[cst.FunctionDef, bool, _Context] | None:
        key = ("callee", id(call))
        if key not in self.context.memo:
            self.context.memo[key] = self._find_callee(call)
        return self.context.memo[key]  # type: ignore[return-value]

    def _find_callee(self, call: cst.Call) -> tuple[cst.FunctionDef, bool, _Context] | None:
        """The project function ``call`` runs, whether it is a method, and its module.

        Functions of this module, ``self.`` methods of the same class (not overridden
        by a subclass in the module) and, with a module resolver, functions imported
        from other project modules.
        """
        func = call.func
        names = {q for q in self.collector.callees.get(call, set())}
        if isinstance(func, cst.Name):
            local = [q.name for q in names if q.source is QualifiedNameSource.LOCAL]
            if len(local) == 1 and len(names) == 1:
                found = self.context.function_named(local[0])
                if (
                    isinstance(found, cst.FunctionDef)
                    and self.context.enclosing_class(found) is None
                    and _plain_function(found)
                ):
                    return found, False, self.context
                return None
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == self._self_name()
        ):
            assert isinstance(self.function, cst.FunctionDef)
            owner = self.context.enclosing_class(self.function)
            if owner is None or self.context.overridden(owner, func.attr.value):
                return None
            for statement in owner.body.body:
                if (
                    isinstance(statement, cst.FunctionDef)
                    and statement.name.value == func.attr.value
                ):
                    if _plain_function(statement):
                        return statement, True, self.context
                    return None
            return None
        imported = [q.name for q in names if q.source is QualifiedNameSource.IMPORT]
        if len(imported) != 1 or len(names) != 1 or "." not in imported[0]:
            return None
        module_name, _, function_name = imported[0].rpartition(".")
        other = self.context.for_module(module_name)
        if other is None:
            return None
        found = other.function_named(function_name)
        if (
            isinstance(found, cst.FunctionDef)
            and other.enclosing_class(found) is None
            and _plain_function(found)
        ):
            return found, False, other
        return None

    def _follow(
        self, call: cst.Call, tensors: set[str] | None = None, bounded: bool = False
    ) -> tuple[_Analysis, dict[str, cst.BaseExpression]] | None:
        """The callee's analysis with its parameters bound to this call's arguments.

        ``bounded``: pass the arguments' magnitudes for the callee's overflow check
        (only for its uses: whether it returns a tensor does not depend on them, and
        computing them from ``is_tensor`` would go round in circles).
        """
        tensors = self.tensors if tensors is None else tensors
        target = self._callee(call)
        if target is None:
            return None
        callee, method, context = target
        if (
            callee is self.function
            or callee in self.context.stack
            or len(self.context.stack) >= MAX_FOLLOW_DEPTH
        ):
            return None
        binding = _bind(callee, call, method)
        if binding is None:
            return None
        params: set[str] = set()
        tensor_params: set[str] = set()
        dtypes: dict[str, str] = {}
        bounds: dict[str, float] = {}
        converted: dict[str, str] = {}
        for name, expr in binding.items():
            if self.is_tensor(expr, tensors):
                tensor_params.add(name)
                dtype = self.dtype_of(expr)
                if dtype is not None:
                    dtypes[name] = dtype
                continue
            taint = self.taint_of(expr) & self.params
            if not taint:
                continue
            params.add(name)
            if len(taint) == 1:
                (source,) = taint
                if source in self.param_dtypes:
                    dtypes[name] = self.param_dtypes[source]
                if isinstance(expr, cst.Name) and source in self.converted:
                    converted[name] = self.converted[source]
            size = self.magnitude(expr) if bounded else None
            if size is not None:
                bounds[name] = size
        if len(context.cache) >= MAX_ANALYSES and not context.cached(
            callee, params, tensor_params, dtypes, bounds, converted
        ):
            return None  # too much code behind this call: assume the worst
        analysis = context.analysis(callee, params, tensor_params, dtypes, bounds, converted)
        return analysis, binding

    def follow(self, call: cst.Call, tensors: set[str] | None = None) -> _Analysis | None:
        found = self._follow(call, tensors)
        return None if found is None else found[0]

    def _followed_uses(self, call: cst.Call) -> Iterator[PythonUse] | None:
        found = self._follow(call, bounded=True)
        if found is None:
            return None
        analysis, binding = found
        name = short_code(call.func, 40)
        out: list[PythonUse] = []
        for param, inner in analysis.report().items():
            taint = self.taint_of(binding[param]) & self.params
            for use in inner:
                if use.why.startswith("returned as a Python value"):
                    continue  # the caller sees the result: its own uses of it count
                for mine in self._use(
                    taint,
                    call,
                    f"passed to `{name}(...)`, where `{param}` {use.why.split(': ')[0]} "
                    f"(`{use.code}`, line {use.line})",
                    use.priority,
                    use.certain,
                ):
                    out.append(mine)
        return iter(out)

    # -- uses ------------------------------------------------------------------------
    def _walk(self, root: cst.CSTNode) -> Iterator[cst.CSTNode]:
        stack = [root]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def _use(
        self,
        params: set[str],
        node: cst.CSTNode,
        why: str,
        priority: int = 0,
        certain: bool = True,
    ) -> Iterator[PythonUse]:
        line = self.collector.lines.get(node, 0)
        wanted = params & self.params
        if not wanted:
            return
        named = {n.value for n in _walk_all(node) if isinstance(n, cst.Name)}
        for param in sorted(wanted):
            yield PythonUse(param, line, short_code(node), why, priority, param in named, certain)

    def uses(self) -> Iterator[PythonUse]:
        if isinstance(self.function, cst.Lambda):
            body = self.function.body
            yield from self._use(self.taint_of(body), body, "returned as a Python value")
        for node in self._walk(self.function):
            if node is not self.function and isinstance(node, (cst.FunctionDef, cst.Lambda)):
                yield from self._capture_uses(node)
            yield from self._uses_at(node)
        yield from self.overflow_uses()

    def _capture_uses(self, nested: FunctionNode) -> Iterator[PythonUse]:
        """A nested function or lambda that reads a parameter: it may run as Python."""
        taint: set[str] = set()
        for name in _free_names(nested):
            taint |= self.taint.get(name, set())
        for param in _all_params(nested.params):
            if param.default is not None:  # evaluated once, as a Python value
                taint |= self.taint_of(param.default)
        kind = "a lambda" if isinstance(nested, cst.Lambda) else f"nested `{nested.name.value}`"
        yield from self._use(
            taint,
            nested,
            f"captured by {kind}, which may run as Python (a callback, at trace time)",
        )

    def _uses_at(self, node: cst.CSTNode) -> Iterator[PythonUse]:
        if isinstance(node, cst.Call):
            yield from self._call_uses(node)
        elif isinstance(node, cst.Subscript):
            index_taint: set[str] = set()
            for element in node.slice:
                index_taint |= self.taint_of(element)
            if (
                index_taint
                and not self.is_tensor(node.value)
                and not self._multi_axis_on_tensor(node, self.tensors)
            ):
                yield from self._use(
                    index_taint,
                    node,
                    "indexes or slices a Python sequence or dict",
                    certain=evidently_python(node.value, self._values_of, self._builtin),
                )
        elif isinstance(node, cst.BinaryOperation):
            yield from self._binary_uses(node)
        elif isinstance(node, cst.AugAssign) and isinstance(node.operator, BITWISE_AUG):
            yield from self._use(self.taint_of(node), node, BITWISE_WHY)
        elif isinstance(node, cst.FormattedStringExpression):
            yield from self._use(
                self.taint_of(node.expression), node, "formatted into a Python string"
            )
        elif isinstance(node, cst.DictElement):
            yield from self._use(self.taint_of(node.key), node, "used as a dict key")
        elif isinstance(node, cst.Set):
            yield from self._use(self.taint_of(node), node, "put in a Python set")
        elif isinstance(node, cst.If):
            taint = self.taint_of(node.test)
            branches_simple = _effects_only(node.body) and (
                node.orelse is None
                or (isinstance(node.orelse, cst.Else) and _effects_only(node.orelse.body))
            )
            if taint and not branches_simple:
                yield from self._use(
                    taint, node.test, "decides a Python `if` (what the function does or returns)"
                )
        elif isinstance(node, cst.While):
            yield from self._use(
                self.taint_of(node.test), node.test, "decides a Python `while` loop"
            )
        elif isinstance(node, cst.IfExp):
            yield from self._use(
                self.taint_of(node.test), node, "chooses between values in a conditional expression"
            )
        elif isinstance(node, cst.Assert):
            yield from self._use(self.taint_of(node.test), node, "checked by a Python `assert`")
        elif isinstance(node, cst.BooleanOperation):
            yield from self._use(self.taint_of(node), node, "combined with Python `and`/`or`")
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            yield from self._use(self.taint_of(node.expression), node, "negated with Python `not`")
        elif isinstance(node, cst.Comparison):
            if len(node.comparisons) > 1:
                yield from self._use(
                    self.taint_of(node), node, "in a chained comparison (Python `and`)"
                )
            left = node.left
            pairs = []
            for target in node.comparisons:
                pairs.append((left, target.comparator))
                left = target.comparator
            yield from self._mixing_uses(node, pairs)
        elif isinstance(node, (cst.Return, cst.Yield)) and node.value is not None:
            value = node.value
            if isinstance(value, cst.BaseExpression):
                taint = self.taint_of(value)
                strings = {p for p in taint if self.param_dtypes.get(p) == "string"}
                yield from self._use(taint - strings, node, "returned as a Python value")
                yield from self._use(strings, node, RETURNED_STRING)
        elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = (
                [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            )
            if node.value is not None and any(
                isinstance(t, (cst.Attribute, cst.Subscript)) for t in targets
            ):
                yield from self._use(self.taint_of(node.value), node, "stored in Python state")
        elif isinstance(node, (cst.For, cst.CompFor)) and not isinstance(node.iter, cst.Call):
            yield from self._use(self.taint_of(node.iter), node.iter, "iterated by a Python loop")

    def _call_uses(self, call: cst.Call) -> Iterator[PythonUse]:
        func = call.func
        if isinstance(func, cst.Attribute) and not self.is_tensor(func.value):
            receiver = self.taint_of(func.value)
            yield from self._use(
                receiver, call, f"calls the Python method .{func.attr.value}() on it"
            )
        taint: set[str] = set()
        for arg in call.args:
            taint |= self.taint_of(arg.value)
        if not taint:
            return
        builtin = self._builtin(call)
        if builtin is not None:
            if builtin == "print" and _logs_tracing(call):
                yield from self._use(
                    taint,
                    call,
                    "printed by a trace-log print (it shows the Python value at each trace; "
                    "a tensor prints as a symbolic Tensor, once)",
                )
                return
            if builtin in BUILTINS_TENSOR_SAFE:
                return
            why = BUILTINS_NEEDING_VALUES.get(builtin, f"Python {builtin}() needs a Python value")
            yield from self._use(taint, call, why)
            return
        api = self._tf_api(call)
        if api is not None:
            if self._tf_needs_values(api):
                name = api.removeprefix("tensorflow.")
                yield from self._use(taint, call, f"tf.{name}() takes a Python value")
                return
            yield from self._tf_argument_uses(call, api)
            return
        if isinstance(func, cst.Attribute) and func.attr.value in TENSOR_SAFE_METHODS:
            yield from self._use(
                self._widened(taint),
                call,
                f"an int64 tensor for .{func.attr.value}() of a variable of unknown dtype "
                "(a small Python int converts to the variable's dtype)",
            )
            return
        known = self.tensor_call(call)
        if known is not None:
            yield from self._keras_argument_uses(call, known, TENSOR_ARGUMENTS)
            yield from self._use(
                self._widened(taint), call, f"an int64 tensor where {known}() had an int32"
            )
            return
        followed = self._followed_uses(call)
        if followed is not None:
            yield from followed
            return
        yield from self._use(
            taint,
            call,
            f"passed to `{short_code(func, 40)}(...)`, which may need a Python value",
            certain=False,
        )

    def _keras_argument_uses(
        self, call: cst.Call, what: str, allowed: tuple[int | str, ...]
    ) -> Iterator[PythonUse]:
        """Arguments of a tensor-taking Keras call outside its tensor ones (``k=``, ``delta=``)."""
        for index, arg in enumerate(call.args):
            where: int | str = arg.keyword.value if arg.keyword is not None else index
            if where not in allowed:
                yield from self._use(
                    self.taint_of(arg.value),
                    call,
                    f"passed to {what}() as `{where}`, an argument autosig does not know "
                    "to take a tensor",
                    certain=False,
                )

    def _widened(self, taint: set[str]) -> set[str]:
        """Parameters planned int64 whose Python values would have converted to int32."""
        return {
            p
            for p in taint & self.params
            if self.param_dtypes.get(p) == "int64" and self.converted.get(p, "int64") != "int64"
        }

    def _tf_argument_uses(self, call: cst.Call, api: str) -> Iterator[PythonUse]:
        """Configuration arguments (axis, seed, name, dtype) and int64-sensitive ones."""
        short = api.removeprefix("tensorflow.")
        if _keras_tensor_function(api):
            yield from self._keras_argument_uses(call, short, (0, 1, "y_true", "y_pred"))
        stateless = short.startswith(STATELESS_SEED)
        axis_at = AXIS_POSITION.get(short)
        for index, arg in enumerate(call.args):
            taint = self.taint_of(arg.value) & self.params
            if not taint:
                continue
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword in CONFIG_KEYWORDS and not (keyword == "seed" and stateless):
                yield from self._use(
                    taint,
                    call,
                    f"tf.{short}({keyword}=...) takes a Python value (configuration, not data)",
                )
                continue
            if keyword is None and index == axis_at:
                yield from self._use(taint, call, f"tf.{short}() takes its axis as a Python value")
                continue
            if _int64_neutral(short, keyword, index) or _needs_int64(short, keyword, index):
                continue
            yield from self._use(
                self._widened(taint),
                call,
                f"reaches tf.{short}(), whose result dtype would change: a small Python int "
                "converts to int32, an int64 tensor stays int64",
            )

    def required_dtypes(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for _, params, size, _ in self._overflows():
            if size <= INT64_MAX:
                out.update(dict.fromkeys(params, "int64"))
        for node in self._walk(self.function):
            if not isinstance(node, cst.Call):
                continue
            api = self._tf_api(node)
            if api is None:
                continue
            short = api.removeprefix("tensorflow.")
            for index, arg in enumerate(node.args):
                keyword = arg.keyword.value if arg.keyword is not None else None
                if _needs_int64(short, keyword, index):
                    for param in self.taint_of(arg.value) & self.params:
                        out[param] = "int64"
        return out

    def _mixing_uses(
        self, node: cst.CSTNode, pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]]
    ) -> Iterator[PythonUse]:
        """A parameter meeting a tensor or literal its planned dtype does not combine with."""
        for a, b in pairs:
            for python_side, other in ((a, b), (b, a)):
                taint = self.taint_of(python_side) & set(self.param_dtypes)
                for param in sorted(taint):
                    planned = self.param_dtypes[param]
                    if self.is_tensor(other):
                        dtype = self.dtype_of(other)
                        if dtype == planned or (dtype is None and planned.startswith("float")):
                            continue
                        what = f"a {dtype} tensor" if dtype else "a tensor of unknown dtype"
                        yield from self._use(
                            {param},
                            node,
                            f"meets {what}: as a {planned} tensor it would need tf.cast",
                            priority=1,
                        )
                    elif planned.startswith("int") and isinstance(other, cst.Float):
                        yield from self._use(
                            {param},
                            node,
                            f"meets a float: as a {planned} tensor this fails",
                            priority=1,
                        )
                    else:
                        # Another parameter planned wider: this one stays Python (a
                        # Python int converts to the other's dtype; two tensors fail).
                        wider = sorted(
                            q
                            for q in self.taint_of(other) & set(self.param_dtypes)
                            if _wider(self.param_dtypes[q], planned)
                        )
                        for q in wider[:1]:
                            yield from self._use(
                                {param},
                                node,
                                f"meets `{q}` (planned {self.param_dtypes[q]}): as a "
                                f"{planned} tensor it would need tf.cast",
                                priority=1,
                            )

    def _binary_uses(self, node: cst.BinaryOperation) -> Iterator[PythonUse]:
        left, right = node.left, node.right
        if isinstance(node.operator, ARITHMETIC):
            yield from self._mixing_uses(node, [(left, right)])
        if isinstance(node.operator, cst.Divide) and not (
            self.is_tensor(left) or self.is_tensor(right)
        ):
            ints = {
                p
                for p in self.taint_of(node) & set(self.param_dtypes)
                if self.param_dtypes[p].startswith("int")
            }
            yield from self._use(
                ints, node, "true division: a Python float here, a float64 tensor in TensorFlow"
            )
        if isinstance(node.operator, cst.Multiply):
            for seq, count in ((left, right), (right, left)):
                if _is_sequence_literal(seq) or (
                    isinstance(seq, cst.Name) and seq.value in self.sequences
                ):
                    yield from self._use(
                        self.taint_of(count), node, "repeats a Python list or string"
                    )
        elif isinstance(node.operator, BITWISE) and not (
            self.is_tensor(left) or self.is_tensor(right)
        ):
            yield from self._use(self.taint_of(node), node, BITWISE_WHY)
        elif isinstance(node.operator, cst.Modulo) and _is_string_literal(left):
            yield from self._use(self.taint_of(right), node, "formatted into a Python string")
        elif isinstance(node.operator, cst.Add) and (
            _is_string_literal(left) or _is_string_literal(right)
        ):
            yield from self._use(self.taint_of(node), node, "joined into a Python string")
