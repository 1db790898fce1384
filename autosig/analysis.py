"""Static usage analysis: where does a function need a parameter to stay a Python value?

A Python number in an ``input_signature`` arrives as a scalar tensor. That is what we
want for learning rates and step counters, and wrong where Python needs the value
itself: ``range(n)``, ``[x] * n``, slicing a Python list, a dict key, an f-string, an
``if`` that decides what the function returns, a call into code we cannot see. This
module finds those uses with libcst (no import of the user's code), following the value
through local assignments (``m = n + 1; range(m)``). It is deliberately conservative:
a use it cannot prove tensor-safe is reported, and the caller then keeps Python
semantics (``reduce_retracing``) instead of tensorizing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    PositionProvider,
    QualifiedName,
    QualifiedNameProvider,
    QualifiedNameSource,
)

from autosig.supertype import TF_DTYPES

FunctionNode = cst.FunctionDef | cst.Lambda

BUILTINS_NEEDING_VALUES = {
    "range": "Python range() needs a Python int",
    "int": "int() needs a Python value",
    "float": "float() needs a Python value",
    "bool": "bool() needs a Python value",
    "str": "str() formats the value in Python",
    "repr": "repr() formats the value in Python",
    "format": "format() formats the value in Python",
    "len": "len() needs a Python sequence",
    "round": "round() needs a Python number",
    "min": "min() compares in Python",
    "max": "max() compares in Python",
    "sum": "sum() iterates in Python",
    "sorted": "sorted() iterates in Python",
    "enumerate": "enumerate() iterates in Python",
    "zip": "zip() iterates in Python",
    "list": "list() needs a Python iterable",
    "tuple": "tuple() needs a Python iterable",
    "dict": "dict() needs Python keys",
    "set": "set() needs hashable Python values",
    "hash": "hash() needs a Python value",
    "isinstance": "isinstance() sees a Tensor instead of a Python number",
    "type": "type() sees a Tensor instead of a Python number",
    "divmod": "divmod() needs Python numbers",
    "getattr": "getattr() needs a Python string",
    "setattr": "setattr() needs a Python string",
    "hasattr": "hasattr() needs a Python string",
    "open": "open() needs a Python path",
    "slice": "slice() of a Python sequence",
}
"""Builtins that need the Python value itself (a tensor raises or changes the result)."""

BUILTINS_TENSOR_SAFE = frozenset({"print", "abs"})
"""``print`` only logs at trace time (AS101 turns it into tf.print); ``abs`` works on tensors."""

TF_APIS_NEEDING_VALUES = (
    "tensorflow.keras.",
    "tensorflow.compat.v1.keras.",
    "tensorflow.split",
    "tensorflow.unstack",
    "tensorflow.TensorShape",
    "tensorflow.random.set_seed",
    "tensorflow.function",
    "tensorflow.name_scope",
    "tensorflow.Variable",
    "tensorflow.executing_eagerly",
    "keras.",
)
"""TensorFlow APIs whose arguments are configuration (Python ints/strings), not tensors."""

KERAS_TENSOR_APIS = ("keras.ops.", "keras.random.", "tensorflow.keras.ops.", "keras.src.ops.")
"""Keras 3 ops take and return tensors like TensorFlow's own."""

TENSOR_SAFE_METHODS = frozenset({"assign", "assign_add", "assign_sub"})

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

FLOAT32_DEFAULT_APIS = frozenset(
    {
        "ones",
        "zeros",
        "eye",
        "random.uniform",
        "random.normal",
        "random.truncated_normal",
        "random.stateless_uniform",
        "random.stateless_normal",
        "one_hot",
    }
)
"""TensorFlow constructors whose result is float32 unless a dtype is given."""

DTYPE_CHANGING_APIS = frozenset(
    {
        "shape",
        "size",
        "rank",
        "argmax",
        "argmin",
        "math.argmax",
        "math.argmin",
        "equal",
        "not_equal",
        "greater",
        "greater_equal",
        "less",
        "less_equal",
        "logical_and",
        "logical_or",
        "logical_not",
        "constant",
        "convert_to_tensor",
        "range",
        "where",
        "unique",
        "bitcast",
        "complex",
        "math.real",
        "math.imag",
        "fill",
        "reduce_any",
        "reduce_all",
        "py_function",
        "numpy_function",
    }
)
"""TensorFlow ops whose result dtype is not their first argument's (or not evident)."""
"""Methods (of tf.Variable and friends) that take a tensor value."""


@dataclass(frozen=True)
class PythonUse:
    """A place where the function needs ``param`` as a Python value."""

    param: str
    line: int
    code: str
    """The offending expression, shortened."""
    why: str
    priority: int = 0
    """0: Python needs the value itself; 1: only a dtype mismatch (fixable with tf.cast)."""

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


def python_only_uses(
    wrapper: MetadataWrapper,
    function: FunctionNode,
    params: Collection[str],
    tensor_params: Collection[str] = (),
    dtypes: Mapping[str, str] | None = None,
) -> dict[str, list[PythonUse]]:
    """For each of ``params``, the uses in ``function`` where it must stay a Python value.

    ``function`` must be a node of ``wrapper.module``. ``tensor_params`` are parameters
    known (from the profile) to be tensors: indexing them with a parameter is fine.
    ``dtypes`` maps parameters to their dtype: the planned spec dtype of each of
    ``params`` and the observed dtype of tensor parameters. With it, arithmetic that
    mixes a parameter with a tensor of another dtype is reported (TensorFlow does not
    promote: an int32 scalar times a float32 tensor fails, where the Python int would
    have been converted). A parameter with an empty list can be tensorized.
    """
    collector = _Collector()
    with collector.resolve(wrapper):
        function.visit(collector)
    analysis = _Analysis(function, set(params), set(tensor_params), collector, dict(dtypes or {}))
    result: dict[str, list[PythonUse]] = {p: [] for p in params}
    seen: set[tuple[str, int, str]] = set()
    for use in analysis.uses():
        key = (use.param, use.line, use.why)
        if key not in seen:
            seen.add(key)
            result[use.param].append(use)
    for found in result.values():
        # Most specific first: ``[x] * n`` before the ``return`` that contains it.
        found.sort(key=lambda u: (u.priority, u.line, len(u.code)))
    return result


def required_dtypes(
    wrapper: MetadataWrapper, function: FunctionNode, params: Collection[str]
) -> dict[str, str]:
    """Parameters that flow into a TensorFlow argument needing one integer dtype.

    ``tf.summary.*(step=...)`` takes int64 only: an int32 scalar spec for a step counter
    would fail to trace ("Tensor conversion requested dtype int64"), where the Python
    int converted fine.
    """
    collector = _Collector()
    with collector.resolve(wrapper):
        function.visit(collector)
    analysis = _Analysis(function, set(params), set(), collector, {})
    return analysis.required_dtypes()


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


def python_only_uses_in_text(
    text: str,
    qualname: str,
    params: Collection[str],
    tensor_params: Collection[str] = (),
    dtypes: Mapping[str, str] | None = None,
) -> dict[str, list[PythonUse]]:
    """``python_only_uses`` for the function ``qualname`` of a module's source text."""
    from autosig.discover import parse_module

    wrapper = MetadataWrapper(parse_module(text), unsafe_skip_copy=True)
    function = find_function(wrapper.module, qualname)
    if function is None:
        raise LookupError(f"no function {qualname!r} in the source")
    return python_only_uses(wrapper, function, params, tensor_params, dtypes)


# -- the analysis proper (pure, over CST nodes) ---------------------------------------


def _target_names(target: cst.CSTNode) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


def _needs_int64(api: str, keyword: str | None, index: int) -> bool:
    """Whether argument ``keyword`` (or positional ``index``) of ``tf.<api>`` is int64-only."""
    if api.startswith("summary.") and keyword == "step":
        return True
    if api == "summary.experimental.set_step" and (keyword == "step" or index == 0):
        return True
    if api in ("SparseTensor", "sparse.SparseTensor"):
        return keyword in ("indices", "dense_shape") or index in (0, 2)
    return False


def _dtype_name(node: cst.BaseExpression) -> str | None:
    """``tf.float32`` / ``tf.dtypes.int64`` / ``"float32"`` -> the dtype's name."""
    name: object = None
    if isinstance(node, cst.Attribute):
        name = node.attr.value
    elif isinstance(node, cst.SimpleString):
        name = node.evaluated_value
    return name if isinstance(name, str) and name in TF_DTYPES else None


def _code(node: cst.CSTNode, limit: int = 60) -> str:
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


class _Analysis:
    def __init__(
        self,
        function: FunctionNode,
        params: set[str],
        tensor_params: set[str],
        collector: _Collector,
        dtypes: dict[str, str],
    ) -> None:
        self.function = function
        self.params = params
        self.collector = collector
        self.param_dtypes = {k: v for k, v in dtypes.items() if k in params}
        self.dtypes: dict[str, str] = {k: v for k, v in dtypes.items() if k not in params}
        self.assignments: list[tuple[list[str], cst.BaseExpression]] = []
        self.sequences: set[str] = set()
        self._collect_assignments(function)
        self.taint: dict[str, set[str]] = {p: {p} for p in params}
        self.tensors: set[str] = set(tensor_params) - params
        self._propagate()

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
            elif isinstance(node, (cst.For, cst.CompFor)):
                pairs = [(node.target, node.iter)]
            elif isinstance(node, cst.NamedExpr):
                pairs = [(node.target, node.value)]
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                pairs = [(node.asname.name, node.item)]
            for target, value in pairs:
                names = list(_target_names(target))
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
                if not self.taint.get(name) and all(self.is_tensor(v, tensors) for v in values):
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

    def _qualified(self, call: cst.Call) -> set[str]:
        return {q.name for q in self.collector.callees.get(call, set())}

    def _builtin(self, call: cst.Call) -> str | None:
        for q in self.collector.callees.get(call, set()):
            if q.source is QualifiedNameSource.BUILTIN:
                return q.name.removeprefix("builtins.")
        return None

    def _tf_api(self, call: cst.Call) -> str | None:
        for name in self._qualified(call):
            if name.startswith(("tensorflow.", "keras.")):
                return name
        dotted = _code(call.func, 200)
        if dotted.startswith("tf."):
            return "tensorflow." + dotted[3:]
        return None

    def _tf_needs_values(self, api: str) -> bool:
        if api.startswith(KERAS_TENSOR_APIS):
            return False
        return any(api == p or api.startswith(p) for p in TF_APIS_NEEDING_VALUES)

    def is_tensor(self, node: cst.CSTNode, tensors: set[str] | None = None) -> bool:
        tensors = self.tensors if tensors is None else tensors
        if isinstance(node, cst.Name):
            return node.value in tensors
        if isinstance(node, cst.Call):
            api = self._tf_api(node)
            return api is not None and not self._tf_needs_values(api)
        if isinstance(node, cst.BinaryOperation):
            return self.is_tensor(node.left, tensors) or self.is_tensor(node.right, tensors)
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self.is_tensor(node.expression, tensors)
        if isinstance(node, cst.Subscript):
            return self.is_tensor(node.value, tensors)
        return False

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

    # -- uses ------------------------------------------------------------------------
    def _walk(self, root: cst.CSTNode) -> Iterator[cst.CSTNode]:
        stack = [root]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def _use(
        self, params: set[str], node: cst.CSTNode, why: str, priority: int = 0
    ) -> Iterator[PythonUse]:
        line = self.collector.lines.get(node, 0)
        for param in sorted(params & self.params):
            yield PythonUse(param, line, _code(node), why, priority)

    def uses(self) -> Iterator[PythonUse]:
        if isinstance(self.function, cst.Lambda):
            body = self.function.body
            yield from self._use(self.taint_of(body), body, "returned as a Python value")
        for node in self._walk(self.function):
            yield from self._uses_at(node)

    def _uses_at(self, node: cst.CSTNode) -> Iterator[PythonUse]:
        if isinstance(node, cst.Call):
            yield from self._call_uses(node)
        elif isinstance(node, cst.Subscript):
            index_taint: set[str] = set()
            for element in node.slice:
                index_taint |= self.taint_of(element)
            if index_taint and not self.is_tensor(node.value):
                yield from self._use(
                    index_taint, node, "indexes or slices a Python sequence or dict"
                )
        elif isinstance(node, cst.BinaryOperation):
            yield from self._binary_uses(node)
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
                yield from self._use(self.taint_of(value), node, "returned as a Python value")
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
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in TENSOR_SAFE_METHODS:
            return
        yield from self._use(
            taint, call, f"passed to `{_code(func, 40)}(...)`, which may need a Python value"
        )

    def required_dtypes(self) -> dict[str, str]:
        out: dict[str, str] = {}
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
        elif isinstance(node.operator, cst.Modulo) and _is_string_literal(left):
            yield from self._use(self.taint_of(right), node, "formatted into a Python string")
        elif isinstance(node.operator, cst.Add) and (
            _is_string_literal(left) or _is_string_literal(right)
        ):
            yield from self._use(self.taint_of(node), node, "joined into a Python string")
