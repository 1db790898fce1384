"""Which static shape reads can become ``tf.shape(x)[i]``, so their dimension can be None.

``TensorArray(size=x.shape[0])``, ``tf.zeros([x.shape[0], d])`` or
``for t in range(x.shape[1])`` read a dimension as a Python int; a relaxed trace makes
it None and the code breaks, so the shape policy keeps such a dimension fixed (and the
function retraces once per size). Where the int flows only into TensorFlow ops that
accept a scalar tensor in its place (``SIZE_ARGUMENTS``, each entry checked against
TensorFlow in ``tests/test_dynamic_shape_tf.py``), ``tf.shape(x)[i]`` computes the same
value for every size, and the dimension can be None.

Refused, so the read keeps blocking as before: a read used as a Python value anywhere
(``if``, f-strings, dict keys, list sizes, Keras layer constructors, calls outside the
project), a read in a helper or a nested function, and a read whose tensors would then
have an unknown static dimension that the code reads later (``z.shape[0]``, ``len(z)``,
unpacking, a Keras layer or a helper that reads it). A ``for ... in range(n)`` loop is
unrolled by Python with an int and becomes a ``tf.while_loop`` with a tensor, so its body
must be one autograph converts to the same computation: only assignments of TensorFlow
ops, no ``break``/``if``/Python calls/random draws, and loop variables whose shape
cannot change from one step to the next (their rank is checked).

One module of about 1,050 lines, because it is one walk: ``_RewriteWalk`` indexes one
traced function's bindings and tensors once, and every check (a read's consumers, the
tensors built from it, a ``for`` loop's body and carried variables, their ranks) asks
the same index; split, its methods would hand that state to each other. The table of
places that take a size is data, in ``size_arguments.py``; the reads themselves are
found by ``analysis/shape_reads.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import QualifiedNameSource

from autosig.analysis.module_view import ModuleView
from autosig.analysis.python_values import short_code, target_names
from autosig.analysis.shape_reads import ShapeRead, ShapeUse, shape_use
from autosig.analysis.tf_random_apis import draws_per_trace
from autosig.infer.plan import ShapeRewrite
from autosig.infer.size_arguments import (
    ELEMENTWISE,
    RANGE_LOOP_WHY,
    SIZE_ARGUMENTS,
    SIZE_OPERATORS,
    SLICE_WHY,
    TENSOR_OPS,
    Form,
)
from autosig.source.metadata import iter_tree

_TENSOR_ARRAY_METHODS = frozenset(
    {"write", "read", "stack", "gather", "concat", "size", "scatter", "unstack", "split"}
)
_NESTED_SCOPES = (
    cst.FunctionDef,
    cst.Lambda,
    cst.ClassDef,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


class Refused(Exception):
    """A read that cannot be rewritten, and why (for the report)."""


@dataclass
class DynamicShapes:
    """The reads a fix rewrites, and those it could not."""

    rewrites: list[ShapeRewrite] = field(default_factory=list)
    nodes: set[int] = field(default_factory=set)
    """ids of the rewritten read nodes (their ShapeReads no longer block)."""
    refused: dict[int, str] = field(default_factory=dict)
    """id of a read node -> why it stays a static read."""

    def without_rewritten(self, use: ShapeUse) -> ShapeUse:
        """``use`` with the rewritten reads removed."""
        reads = {
            name: [r for r in found if r.node is None or id(r.node) not in self.nodes]
            for name, found in use.reads.items()
        }
        return dataclasses.replace(use, reads=reads, random_draws=list(use.random_draws))


def plan_rewrites(
    view: ModuleView,
    function: cst.FunctionDef | cst.Lambda,
    use: ShapeUse,
    stands_in_way: Callable[[ShapeRead], bool],
    dense: Mapping[str, int | None],
    *,
    autograph: bool = True,
    free: Callable[[str, int], bool] = lambda name, dim: True,
) -> DynamicShapes:
    """The reads of ``use`` to rewrite to ``tf.shape()``.

    ``stands_in_way`` says which reads keep a dimension from being None (the caller's
    shape policy); only those are rewritten. ``dense`` maps each parameter whose
    signature spec is a plain tensor to its rank. ``free(param, dim)``: whether an
    unpacking's element for that dimension must become dynamic.
    """
    out = DynamicShapes()
    if not isinstance(function, cst.FunctionDef):
        return out
    candidates: dict[int, cst.CSTNode] = {}
    for reads in use.reads.values():
        for read in reads:
            if read.node is None or read.via or not stands_in_way(read):
                continue
            candidates.setdefault(id(read.node), read.node)
    if not candidates:
        return out
    walk = _RewriteWalk(view, function, dense, autograph)
    accepted: dict[int, _Candidate] = {}
    for key, node in candidates.items():
        try:
            accepted[key] = walk.candidate(node, free)
        except Refused as exc:
            out.refused[key] = str(exc)
    changed = True
    while changed:  # a rewrite may rely on another (``tf.zeros([n]).shape[0]``)
        changed = False
        for key in list(accepted):
            try:
                walk.derived_ok(accepted[key], set(accepted))
            except Refused as exc:
                out.refused[key] = str(exc)
                del accepted[key]
                changed = True
    for key, found in accepted.items():
        out.nodes.add(key)
        out.rewrites.append(found.rewrite)
    out.rewrites.sort(key=lambda r: (r.line, r.column))
    return out


@dataclass
class _Candidate:
    node: cst.CSTNode
    rewrite: ShapeRewrite
    consumers: list[cst.CSTNode]
    """Expressions whose tensor now has an unknown static dimension."""
    loops: list[cst.For]


class _RewriteWalk:
    """One traced function: its bindings, its tensors, and how each value is used."""

    def __init__(
        self,
        view: ModuleView,
        function: cst.FunctionDef,
        dense: Mapping[str, int | None],
        autograph: bool,
    ) -> None:
        self.view = view
        """The function's module (its metadata, and the project modules it imports)."""
        self.function = function
        self.dense = dict(dense)
        self.autograph = autograph
        self.positions = view.positions
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        for node in iter_tree(function):
            for child in node.children:
                self.parents[child] = node
        self.bindings: dict[str, list[cst.CSTNode]] = {}
        """Name -> the nodes that bind it in this function (its own scope only)."""
        self.loads: dict[str, list[cst.Name]] = {}
        self.nested: set[str] = set()
        """Names used inside a nested function, lambda or comprehension."""
        self._collect(function.body, nested=False)
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.bindings.setdefault(param.name.value, []).insert(0, param)
        self.module_ranks = _module_variable_ranks(view.module)
        self.tensors = self._tensor_names()

    # -- names ---------------------------------------------------------------------------
    def _collect(self, node: cst.CSTNode, nested: bool) -> None:
        for child in node.children:
            inner = nested or isinstance(child, _NESTED_SCOPES)
            if isinstance(child, cst.Name):
                parent = self.parents.get(child)
                if inner:
                    self.nested.add(child.value)
                elif self._binds(child, parent):
                    self.bindings.setdefault(child.value, []).append(self._binder(child))
                elif not (isinstance(parent, cst.Attribute) and parent.attr is child) and not (
                    isinstance(parent, cst.Arg) and parent.keyword is child
                ):
                    self.loads.setdefault(child.value, []).append(child)
            if isinstance(child, (cst.Global, cst.Nonlocal)):
                for item in child.names:
                    self.bindings.setdefault(item.name.value, []).append(child)
            self._collect(child, inner)

    def _binds(self, name: cst.Name, parent: cst.CSTNode | None) -> bool:
        node: cst.CSTNode = name
        while isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
            node, parent = parent, self.parents.get(parent)
        if isinstance(parent, cst.AssignTarget):
            return True
        if isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For)):
            return getattr(parent, "target", None) is node
        if isinstance(parent, cst.AsName):
            return True
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.ExceptHandler)):
            return getattr(parent, "name", None) is node
        if isinstance(parent, (cst.ImportAlias, cst.Del)):
            return True
        return False

    def _binder(self, name: cst.Name) -> cst.CSTNode:
        """The statement (or ``for``) that binds ``name``."""
        node: cst.CSTNode = name
        while True:
            parent = self.parents.get(node)
            if parent is None or isinstance(
                parent,
                (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.With),
            ):
                return parent or node
            if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return parent
            node = parent

    def _tensor_names(self) -> set[str]:
        """Names bound only to single tensors (parameters with a tensor spec, tf ops)."""
        names = {name for name, nodes in self.bindings.items() if nodes}
        tensors: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name in names - tensors:
                if name in self.nested:
                    continue
                if all(self._binds_tensor(name, node, tensors) for node in self.bindings[name]):
                    tensors.add(name)
                    changed = True
        return tensors

    def _binds_tensor(self, name: str, node: cst.CSTNode, tensors: set[str]) -> bool:
        if isinstance(node, cst.Param):
            return name in self.dense
        if isinstance(node, cst.Assign):
            single = len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
            return single and self.is_tensor(node.value, tensors)
        if isinstance(node, cst.AugAssign):
            return self.is_tensor(node.value, tensors) or isinstance(
                node.value, (cst.Integer, cst.Float)
            )
        return False

    def is_tensor(self, expr: cst.BaseExpression, tensors: set[str] | None = None) -> bool:
        """Whether ``expr`` is one tensor (``x``, ``tf.transpose(x)``, ``x[:, 0] * 2.0``)."""
        tensors = self.tensors if tensors is None else tensors
        if isinstance(expr, cst.Name):
            return expr.value in tensors or (
                expr.value not in self.bindings and expr.value in self.module_ranks
            )
        if isinstance(expr, cst.Call):
            api = self.tf_api(expr.func)
            return api is not None and (api.removeprefix("tensorflow.") in TENSOR_OPS | ELEMENTWISE)
        if isinstance(expr, cst.Subscript):
            return self.is_tensor(expr.value, tensors)
        if isinstance(expr, cst.BinaryOperation):
            sides = (expr.left, expr.right)
            return any(self.is_tensor(s, tensors) for s in sides) and all(
                self.is_tensor(s, tensors) or isinstance(s, (cst.Integer, cst.Float)) for s in sides
            )
        if isinstance(expr, cst.UnaryOperation):
            return self.is_tensor(expr.expression, tensors)
        return False

    # -- metadata ------------------------------------------------------------------------
    def names(self, node: cst.CSTNode) -> set[tuple[str, QualifiedNameSource]]:
        return self.view.names(node)

    def tf_api(self, func: cst.BaseExpression) -> str | None:
        """``tensorflow.zeros`` for ``tf.zeros`` (None: not TensorFlow, or Keras)."""
        found = None
        for name, _ in self.names(func):
            if name.startswith("tensorflow."):
                found = name
        if found is None:
            dotted = short_code(func, 200)
            if dotted.startswith("tf."):
                found = "tensorflow." + dotted[3:]
        if found is None or ".keras" in found or found.startswith("tensorflow.compat.v1."):
            return None
        return found.replace("tensorflow.compat.v2.", "tensorflow.")

    def builtin(self, func: cst.BaseExpression) -> str | None:
        return self.view.builtin(func)

    def line(self, node: cst.CSTNode) -> int:
        return self.view.line(node)

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.positions[node]
        return where.start.line, where.start.column

    # -- the candidate read ----------------------------------------------------------------
    def candidate(self, node: cst.CSTNode, free: Callable[[str, int], bool]) -> _Candidate:
        code = short_code(node, 200)
        where = f"`{code}` (line {self.line(node)})"
        for ancestor in self._ancestors(node):
            if isinstance(ancestor, _NESTED_SCOPES):
                raise Refused(f"{where} is inside a nested function or comprehension")
        value, index = _shape_index(node)
        if value is not None and index is not None:
            self._check_tensor(value, where)
            whys, consumers, loops = self.size_uses(node, where)
            return _Candidate(node, self._rewrite(node, code, whys), consumers, loops)
        if isinstance(node, cst.Attribute) and node.attr.value == "shape":
            return self._unpacking(node, code, where, free)
        raise Refused(f"{where} is not an `x.shape[i]` read")

    def _check_tensor(self, value: cst.BaseExpression, where: str) -> None:
        if not isinstance(value, cst.Name) or value.value not in self.tensors:
            raise Refused(f"{where}: `{short_code(value)}` is not known to be one tensor")

    def _unpacking(
        self,
        node: cst.Attribute,
        code: str,
        where: str,
        free: Callable[[str, int], bool],
    ) -> _Candidate:
        statement = self.parents.get(node)
        if not (
            isinstance(statement, cst.Assign)
            and statement.value is node
            and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, (cst.Tuple, cst.List))
        ):
            raise Refused(f"{where} is used as a whole shape, not one dimension")
        self._check_tensor(node.value, where)
        elements = statement.targets[0].target.elements  # type: ignore[attr-defined]
        if not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in elements):
            raise Refused(f"{where} is unpacked into something other than names")
        names = [e.value.value for e in elements]
        param = node.value.value  # type: ignore[attr-defined]
        exact = self._is_param(param)
        dims = tuple(k for k in range(len(names)) if not exact or free(param, k))
        whys: list[str] = []
        consumers: list[cst.CSTNode] = []
        loops: list[cst.For] = []
        for k in dims:
            name = names[k]
            if len(self.bindings.get(name, [])) != 1 or name in self.nested:
                raise Refused(f"{where}: `{name}` is bound more than once")
            for load in self.loads.get(name, []):
                found, more, more_loops = self.size_uses(load, f"`{name}` (line {self.line(load)})")
                whys.extend(found)
                consumers.extend(more)
                loops.extend(more_loops)
        if not dims:
            raise Refused(f"{where}: no dimension of it needs to vary")
        line, column = self.position(node)
        rewrite = ShapeRewrite(
            line=line,
            offset=line - self.position(self.function.name)[0],
            column=column,
            code=code,
            why=_because(whys),
            dims=dims,
            rank=len(names),
        )
        return _Candidate(node, rewrite, consumers, loops)

    def _rewrite(self, node: cst.CSTNode, code: str, whys: list[str]) -> ShapeRewrite:
        line, column = self.position(node)
        return ShapeRewrite(
            line=line,
            offset=line - self.position(self.function.name)[0],
            column=column,
            code=code,
            why=_because(whys),
        )

    def _ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None and current is not self.function:
            yield current
            current = self.parents.get(current)

    # -- how a size is used ----------------------------------------------------------------
    def size_uses(
        self, node: cst.CSTNode, where: str, depth: int = 0
    ) -> tuple[list[str], list[cst.CSTNode], list[cst.For]]:
        """(whys, tensors made from the size, ``for`` loops it bounds); Refused if any use
        needs a Python int."""
        if depth > 8:
            raise Refused(f"{where} flows too far to follow")
        parent = self.parents.get(node)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, SIZE_OPERATORS):
            other = parent.right if parent.left is node else parent.left
            if not self._is_int_like(other):
                raise Refused(f"{where} is combined with `{short_code(other)}`")
            return self.size_uses(parent, where, depth + 1)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
            return self.size_uses(parent, where, depth + 1)
        if isinstance(parent, cst.Element):
            sequence = self.parents.get(parent)
            arg = self.parents.get(sequence) if sequence is not None else None
            if isinstance(sequence, (cst.List, cst.Tuple)) and isinstance(arg, cst.Arg):
                why = self._slot(arg, "shape")
                if why is not None:
                    return [why], [self.parents[arg]], []
            raise Refused(f"{where} is an element of a Python list or tuple")
        if isinstance(parent, cst.Arg) and parent.value is node:
            call = self.parents.get(parent)
            why = self._slot(parent, "scalar")
            if why is not None:
                return [why], [call], []  # type: ignore[list-item]
            loop = self.parents.get(call) if call is not None else None
            if (
                isinstance(call, cst.Call)
                and self.builtin(call.func) == "range"
                and isinstance(loop, cst.For)
                and loop.iter is call
            ):
                self.range_loop_ok(loop, call, where)
                return [RANGE_LOOP_WHY], [], [loop]
            raise Refused(f"{where} is passed to `{short_code(call.func) if call else '?'}`")
        if isinstance(parent, (cst.Index, cst.Slice)):
            element = self.parents.get(parent)
            subscript = self.parents.get(element) if element is not None else None
            if isinstance(subscript, cst.Subscript) and self.is_tensor(subscript.value):
                return [SLICE_WHY], [subscript], []
            raise Refused(f"{where} indexes something that is not known to be a tensor")
        if (
            isinstance(parent, cst.Assign)
            and parent.value is node
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            name = parent.targets[0].target.value
            if len(self.bindings.get(name, [])) != 1 or name in self.nested:
                raise Refused(f"{where} is stored in `{name}`, which is bound more than once")
            whys: list[str] = []
            consumers: list[cst.CSTNode] = []
            loops: list[cst.For] = []
            for load in self.loads.get(name, []):
                found, more, more_loops = self.size_uses(
                    load, f"`{name}` (line {self.line(load)})", depth + 1
                )
                whys.extend(found)
                consumers.extend(more)
                loops.extend(more_loops)
            return whys, consumers, loops
        raise Refused(f"{where} is used as a Python value")

    def _slot(self, arg: cst.Arg, form: Form) -> str | None:
        """Why ``arg`` of a TensorFlow call takes a scalar tensor there (None: it may not)."""
        call = self.parents.get(arg)
        if not isinstance(call, cst.Call) or arg.star:
            return None
        api = self.tf_api(call.func)
        slots = SIZE_ARGUMENTS.get(api or "", ())
        keyword = arg.keyword.value if arg.keyword is not None else None
        position = None
        if keyword is None:
            positional = [a for a in call.args if a.keyword is None]
            position = next(i for i, a in enumerate(positional) if a is arg)
        for slot in slots:
            if slot.form == form and (keyword == slot.keyword or position == slot.position):
                return slot.why
        return None

    def _is_int_like(self, expr: cst.BaseExpression) -> bool:
        """A Python int or a size: it combines with an int32 tensor as with an int."""
        if isinstance(expr, cst.Integer):
            return True
        if _shape_index(expr)[0] is not None:
            return True
        if isinstance(expr, cst.Name):
            nodes = self.bindings.get(expr.value, [])
            return bool(nodes) and all(self._binds_size(n) for n in nodes)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, SIZE_OPERATORS):
            return self._is_int_like(expr.left) and self._is_int_like(expr.right)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            return self._is_int_like(expr.expression)
        return False

    def _binds_size(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            return False
        target = node.targets[0].target
        if isinstance(target, cst.Name):
            return self._is_int_like(node.value)
        value = node.value
        return (
            isinstance(target, (cst.Tuple, cst.List))
            and isinstance(value, cst.Attribute)
            and value.attr.value == "shape"
        )

    # -- tensors whose static shape the rewrite makes unknown ------------------------------
    def derived_ok(self, found: _Candidate, accepted: set[int]) -> None:
        """Refused when a tensor made from the rewritten size has its static shape read."""
        seen: set[str] = set()
        for consumer in found.consumers:
            self.tensor_uses(consumer, accepted, seen)
        for loop in found.loops:  # the loop's variables are built step by step from it
            for name in self._assigned_in(loop.body):
                self._name_uses(name, accepted, seen)

    def _name_uses(self, name: str, accepted: set[int], seen: set[str]) -> None:
        if name in seen:
            return
        seen.add(name)
        if name in self.nested:
            raise Refused(f"`{name}` is used in a nested function")
        for load in self.loads.get(name, []):
            self.tensor_uses(load, accepted, seen)

    def tensor_uses(self, node: cst.CSTNode, accepted: set[int], seen: set[str]) -> None:
        """Follow a tensor whose static shape may now be unknown up to where it ends."""
        where = f"`{short_code(node)}` (line {self.line(node)})"
        parent = self.parents.get(node)
        if parent is None or isinstance(
            parent, (cst.Return, cst.Expr, cst.IndentedBlock, cst.SimpleStatementLine)
        ):
            return
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
            return self.tensor_uses(parent, accepted, seen)
        if isinstance(parent, cst.Subscript) and parent.value is node:
            return self.tensor_uses(parent, accepted, seen)
        if isinstance(parent, (cst.Index, cst.Slice)):
            element = self.parents.get(parent)
            subscript = self.parents.get(element) if element is not None else None
            if isinstance(subscript, cst.Subscript) and self.is_tensor(subscript.value):
                return self.tensor_uses(subscript, accepted, seen)
            raise Refused(f"{where} indexes something that is not known to be a tensor")
        if isinstance(parent, cst.Element):
            sequence = self.parents.get(parent)
            holder = self.parents.get(sequence) if sequence is not None else None
            if isinstance(holder, cst.Return):
                return
            if isinstance(holder, cst.Arg):
                return self._argument(holder, accepted, seen, where)  # type: ignore[arg-type]
            raise Refused(f"{where} goes into a Python list or tuple")
        if isinstance(parent, cst.Arg) and parent.value is node:
            return self._argument(parent, accepted, seen, where)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            attr = parent.attr.value
            if attr in ("dtype", "ndim"):
                return
            if attr == "shape":
                read = self.parents.get(parent)
                if id(parent) in accepted or (read is not None and id(read) in accepted):
                    return
                raise Refused(f"{where}: its static shape is read at line {self.line(parent)}")
            call = self.parents.get(parent)
            if attr in _TENSOR_ARRAY_METHODS and isinstance(call, cst.Call):
                return self.tensor_uses(call, accepted, seen)
            raise Refused(f"{where}: `.{attr}` of it is used")
        if isinstance(parent, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and (
            parent.value is node
        ):
            targets = (
                [t.target for t in parent.targets]
                if isinstance(parent, cst.Assign)
                else [parent.target]
            )
            for target in targets:
                if isinstance(target, cst.Name):
                    self._name_uses(target.value, accepted, seen)
                elif isinstance(target, (cst.Tuple, cst.List)) and self._returns_tuple(node):
                    for name in target_names(target):
                        self._name_uses(name, accepted, seen)
                else:
                    raise Refused(f"{where} is stored in `{short_code(target)}`")
            return
        if isinstance(parent, cst.For) and parent.iter is node and self.autograph:
            return  # autograph loops over a tensor with tf.shape, whatever its static size
        raise Refused(f"{where} is used as a Python value")

    def _argument(
        self,
        arg: cst.Arg,
        accepted: set[int],
        seen: set[str],
        where: str,
    ) -> None:
        call = self.parents.get(arg)
        if not isinstance(call, cst.Call):
            raise Refused(f"{where} is passed on")
        api = self.tf_api(call.func)
        if api is not None:
            if api == "tensorflow.unstack" or api.startswith("tensorflow.nest."):
                raise Refused(f"{where}: `{short_code(call.func)}` needs its static shape")
            return self.tensor_uses(call, accepted, seen)
        if self.builtin(call.func) == "print":
            return  # a trace-time print: shows the static shape, computes nothing
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _TENSOR_ARRAY_METHODS
            and isinstance(func.value, cst.Name)
            and self._is_tensor_array(func.value.value)
        ):
            return self.tensor_uses(call, accepted, seen)
        if self._helper_reads_nothing(call, arg):
            return self.tensor_uses(call, accepted, seen)
        raise Refused(f"{where} is passed to `{short_code(call.func)}`, which may read its shape")

    def _returns_tuple(self, value: cst.CSTNode) -> bool:
        return isinstance(value, cst.Call) and self._helper(value) is not None

    def _helper(self, call: cst.Call) -> cst.FunctionDef | None:
        """The module-level function of this module that ``call`` runs."""
        func = call.func
        if not isinstance(func, cst.Name) or func.value not in {n for n, _ in self.names(func)}:
            return None
        for statement in self.view.module.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == func.value:
                return statement
        return None

    def _helper_reads_nothing(self, call: cst.Call, arg: cst.Arg) -> bool:
        """A project function that neither reads the argument's static shape nor hands it
        to code outside the project (the shape-use analysis on that parameter)."""
        helper = self._helper(call)
        if helper is None or arg.star:
            return False
        params = helper.params
        positional = [*params.posonly_params, *params.params]
        if arg.keyword is not None:
            name = arg.keyword.value
        else:
            index = [a for a in call.args if a.keyword is None].index(arg)
            if index >= len(positional):
                return False
            name = positional[index].name.value
        use = shape_use(self.view, helper, [name], {name: None}, self.autograph)
        return not use.reads.get(name) and not use.random_draws

    # -- for ... in range(n) ---------------------------------------------------------------
    def range_loop_ok(self, loop: cst.For, call: cst.Call, where: str) -> None:
        """Refused unless autograph turns the loop into a tf.while_loop that computes what
        Python's unrolled loop did."""
        bad = f"{where} bounds a `for` loop over range() that"
        if not self.autograph:
            raise Refused(f"{bad} Python runs (autograph=False)")
        if loop.orelse is not None or loop.asynchronous is not None:
            raise Refused(f"{bad} has an else clause")
        if any(a.keyword is not None or a.star for a in call.args):
            raise Refused(f"{bad} has keyword arguments")
        if not isinstance(loop.target, cst.Name):
            raise Refused(f"{bad} unpacks its target")
        index = loop.target.value
        if len(self.bindings.get(index, [])) != 1 or index in self.nested:
            raise Refused(f"{bad} reuses its variable `{index}`")
        body = loop.body
        if not isinstance(body, cst.IndentedBlock):
            raise Refused(f"{bad} is written on one line")
        inside = {id(n) for n in iter_tree(body)}
        for load in self.loads.get(index, []):
            if id(load) not in inside:
                raise Refused(f"{bad} uses `{index}` after the loop")
            self._step_use_ok(load, bad)
        for statement in body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                raise Refused(
                    f"{bad} holds a `{type(statement).__name__.lower()}` statement "
                    f"(line {self.line(statement)})"
                )
            for small in statement.body:
                if not isinstance(small, (cst.Assign, cst.AugAssign, cst.Expr, cst.Pass)):
                    raise Refused(f"{bad} holds `{short_code(small)}` (line {self.line(small)})")
                if isinstance(small, cst.Expr) and not isinstance(small.value, cst.Call):
                    raise Refused(f"{bad} holds `{short_code(small)}`")
        for node in iter_tree(body):
            self._loop_node_ok(node, bad)
        carried = self._carried(loop, body)
        for name, updates in carried.items():
            self._carried_ok(name, updates, loop, bad)

    def _step_use_ok(self, node: cst.CSTNode, bad: str, depth: int = 0) -> None:
        """The loop variable becomes an int32 tensor: it may index tensors and
        TensorArrays or be a size, not meet floats or other tensors in arithmetic
        (``x * i`` works with an int, raises with an int32 tensor)."""
        parent = self.parents.get(node)
        where = (
            f"{bad} uses its variable in `{short_code(parent or node)}` (line {self.line(node)})"
        )
        if depth > 8:
            raise Refused(where)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, SIZE_OPERATORS):
            other = parent.right if parent.left is node else parent.left
            if not self._is_int_like(other):
                raise Refused(where)
            return self._step_use_ok(parent, bad, depth + 1)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
            return self._step_use_ok(parent, bad, depth + 1)
        if isinstance(parent, (cst.Index, cst.Slice)):
            element = self.parents.get(parent)
            subscript = self.parents.get(element) if element is not None else None
            if isinstance(subscript, cst.Subscript) and self.is_tensor(subscript.value):
                return
            raise Refused(where)
        if isinstance(parent, cst.Arg) and parent.value is node:
            call = self.parents.get(parent)
            func = call.func if isinstance(call, cst.Call) else None
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value in ("write", "read")
                and isinstance(func.value, cst.Name)
                and self._is_tensor_array(func.value.value)
                and call.args[0] is parent  # type: ignore[union-attr]
            ):
                return
            if self._slot(parent, "scalar") is not None:
                return
        if isinstance(parent, cst.Element):
            sequence = self.parents.get(parent)
            arg = self.parents.get(sequence) if sequence is not None else None
            if isinstance(arg, cst.Arg) and self._slot(arg, "shape") is not None:
                return
        raise Refused(where)

    def _loop_node_ok(self, node: cst.CSTNode, bad: str) -> None:
        if isinstance(node, (*_NESTED_SCOPES, cst.IfExp, cst.BooleanOperation, cst.Await)):
            raise Refused(f"{bad} holds `{short_code(node)}` (line {self.line(node)})")
        if isinstance(node, cst.Call):
            api = self.tf_api(node.func)
            if api is not None:
                if draws_per_trace(api):
                    # one op per unrolled iteration, each with its own stream, would become
                    # one op in a loop drawing from one stream: other numbers
                    raise Refused(f"{bad} draws random numbers (line {self.line(node)})")
                return
            func = node.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value in _TENSOR_ARRAY_METHODS
                and isinstance(func.value, cst.Name)
                and self._is_tensor_array(func.value.value)
            ):
                return
            raise Refused(
                f"{bad} calls `{short_code(func)}` (line {self.line(node)}), which may have "
                "Python side effects that would run once instead of once a step"
            )
        if isinstance(node, cst.Subscript) and not self.is_tensor(node.value):
            raise Refused(f"{bad} indexes `{short_code(node.value)}`, not known to be a tensor")
        if isinstance(node, (cst.Assign, cst.AugAssign)):
            targets = (
                [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            )
            for target in targets:
                if not all(isinstance(n, cst.Name) for n in _target_leaves(target)):
                    raise Refused(f"{bad} stores into `{short_code(target)}`")

    def _is_tensor_array(self, name: str) -> bool:
        nodes = self.bindings.get(name, [])
        for node in nodes:
            if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call):
                return False
            value = node.value
            if self.tf_api(value.func) == "tensorflow.TensorArray":
                continue
            func = value.func
            if not (
                isinstance(func, cst.Attribute)
                and func.attr.value in ("write", "scatter", "unstack", "split")
                and isinstance(func.value, cst.Name)
                and func.value.value == name
            ):
                return False
        return bool(nodes)

    def _assigned_in(self, body: cst.CSTNode) -> list[str]:
        names: list[str] = []
        for node in iter_tree(body):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    names.extend(target_names(target.target))
            elif isinstance(node, cst.AugAssign):
                names.extend(target_names(node.target))
        return list(dict.fromkeys(names))

    def _carried(self, loop: cst.For, body: cst.IndentedBlock) -> dict[str, list[cst.CSTNode]]:
        """Names the body assigns that also hold a value from before the loop."""
        inside = {id(n) for n in iter_tree(body)}
        out: dict[str, list[cst.CSTNode]] = {}
        for name in self._assigned_in(body):
            updates = [n for n in self.bindings.get(name, []) if id(n) in inside]
            outside = [n for n in self.bindings.get(name, []) if id(n) not in inside]
            used_after = any(
                id(load) not in inside and self.line(load) > self.line(loop)
                for load in self.loads.get(name, [])
            )
            if outside:
                out[name] = updates
            elif used_after:
                raise Refused(f"`{name}` is first set inside the loop and used after it")
            elif self._read_before_set(name, body):
                raise Refused(f"`{name}` is read in the loop before it is set")
        return out

    def _read_before_set(self, name: str, body: cst.IndentedBlock) -> bool:
        for statement in body.body:
            loads = [
                n
                for n in iter_tree(statement)
                if isinstance(n, cst.Name) and n.value == name and n in self._load_set
            ]
            if loads:
                return True
            if name in self._assigned_in(statement):
                return False
        return False

    @property
    def _load_set(self) -> set[cst.Name]:
        return {n for loads in self.loads.values() for n in loads}

    def _carried_ok(self, name: str, updates: list[cst.CSTNode], loop: cst.For, bad: str) -> None:
        """A loop variable keeps its dtype and rank from one step to the next."""
        inside = {id(n) for n in updates}
        before = [n for n in self.bindings.get(name, []) if id(n) not in inside]
        if self._is_tensor_array(name):
            return
        if len(before) != 1 or not isinstance(before[0], cst.Assign):
            raise Refused(f"{bad} updates `{name}`, which is not set once before it")
        initial = before[0].value
        rank = self._initial_rank(initial)
        if rank is None:
            raise Refused(
                f"{bad} updates `{name}`, whose start value `{short_code(initial)}` may "
                "change shape in the loop"
            )
        for update in updates:
            if isinstance(update, cst.Assign):
                value = update.value
            elif isinstance(update, cst.AugAssign) and isinstance(
                update.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign)
            ):
                value = cst.BinaryOperation(
                    cst.Name(name),
                    cst.Add(),
                    update.value,  # same rank rules as +=
                )
            else:
                raise Refused(f"{bad} updates `{name}` with `{short_code(update)}`")
            if not _mentions(value, name):
                raise Refused(f"{bad} replaces `{name}` by a value of another origin")
            got = self.rank(value, {name: rank}, loop)
            if got != rank:
                raise Refused(
                    f"{bad} may change the rank of `{name}` (line {self.line(update)}): a "
                    "tf.while_loop needs the same shape at every step"
                )

    def _initial_rank(self, value: cst.BaseExpression) -> int | None:
        """Rank of ``tf.zeros([a, b])``-like start values whose sizes cannot broadcast."""
        if not isinstance(value, cst.Call):
            return None
        api = self.tf_api(value.func)
        if api in ("tensorflow.zeros", "tensorflow.ones", "tensorflow.fill") and value.args:
            shape = value.args[0].value
            if isinstance(shape, (cst.List, cst.Tuple)) and shape.elements:
                for element in shape.elements:
                    if isinstance(element.value, cst.Integer) and element.value.value in ("0", "1"):
                        return None  # a dimension of 0 grows, one of 1 broadcasts
                    if isinstance(element, cst.StarredElement):
                        return None
                return len(shape.elements)
        if api in ("tensorflow.zeros_like", "tensorflow.ones_like") and value.args:
            arg = value.args[0].value
            if isinstance(arg, cst.Name):
                return self.dense.get(arg.value) if self._is_param(arg.value) else None
        return None

    def _is_param(self, name: str) -> bool:
        nodes = self.bindings.get(name, [])
        return len(nodes) == 1 and isinstance(nodes[0], cst.Param)

    def rank(
        self, expr: cst.BaseExpression, known: dict[str, int], loop: cst.For, depth: int = 0
    ) -> int | None:
        """The rank of a loop-step value, when the code says it (None: not known)."""
        if depth > 12:
            return None
        if isinstance(expr, (cst.Integer, cst.Float)):
            return 0
        if isinstance(expr, cst.Name):
            if expr.value in known:
                return known[expr.value]
            if self._is_param(expr.value) and expr.value in self.dense:
                return self.dense[expr.value]
            if expr.value not in self.bindings and expr.value in self.module_ranks:
                return self.module_ranks[expr.value]
            return self._local_rank(expr.value, known, loop, depth)
        if isinstance(expr, cst.Subscript):
            base = self.rank(expr.value, known, loop, depth + 1)
            if base is None:
                return None
            for element in expr.slice:
                item = element.slice
                if isinstance(item, cst.Slice):
                    continue
                value = item.value
                if isinstance(value, cst.Ellipsis):
                    return None
                if isinstance(value, cst.Name) and value.value == "None":
                    base += 1
                elif short_code(value).endswith("newaxis"):
                    base += 1
                else:
                    base -= 1
            return base if base >= 0 else None
        if isinstance(expr, cst.UnaryOperation):
            return self.rank(expr.expression, known, loop, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            left = self.rank(expr.left, known, loop, depth + 1)
            right = self.rank(expr.right, known, loop, depth + 1)
            if left is None or right is None:
                return None
            if isinstance(expr.operator, cst.MatrixMultiply):
                return max(left, right) if min(left, right) >= 2 else None
            return max(left, right)
        if isinstance(expr, cst.Call):
            api = (self.tf_api(expr.func) or "").removeprefix("tensorflow.")
            args = [a.value for a in expr.args if a.keyword is None and not a.star]
            if api in ("matmul", "linalg.matmul") and len(args) == 2:
                return self.rank(
                    cst.BinaryOperation(args[0], cst.MatrixMultiply(), args[1]),
                    known,
                    loop,
                    depth + 1,
                )
            if api in ELEMENTWISE and args:
                ranks = [self.rank(a, known, loop, depth + 1) for a in args]
                if None in ranks:
                    return None
                return max(r for r in ranks if r is not None)
        return None

    def _local_rank(
        self, name: str, known: dict[str, int], loop: cst.For, depth: int
    ) -> int | None:
        """A temporary set once inside the loop body."""
        inside = {id(n) for n in iter_tree(loop.body)}
        nodes = self.bindings.get(name, [])
        if len(nodes) != 1 or id(nodes[0]) not in inside or not isinstance(nodes[0], cst.Assign):
            return None
        return self.rank(nodes[0].value, known, loop, depth + 1)


def _shape_index(node: cst.CSTNode) -> tuple[cst.BaseExpression | None, int | None]:
    """(``x``, ``i``) for ``x.shape[i]`` with a literal ``i``; (None, None) otherwise."""
    if not (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Attribute)
        and node.value.attr.value == "shape"
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
    ):
        return None, None
    index = node.slice[0].slice.value
    if isinstance(index, cst.Integer):
        return node.value.value, int(index.evaluated_value)
    if (
        isinstance(index, cst.UnaryOperation)
        and isinstance(index.operator, cst.Minus)
        and isinstance(index.expression, cst.Integer)
    ):
        return node.value.value, -int(index.expression.evaluated_value)
    return None, None


def _target_leaves(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_leaves(element.value)
    else:
        yield target


def _mentions(expr: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in iter_tree(expr))


def _because(whys: Sequence[str]) -> str:
    unique = list(dict.fromkeys(whys))
    if not unique:
        return "it is never used"
    if len(unique) == 1:
        return f"it only {unique[0]}"
    return f"it only {', '.join(unique[:-1])} and {unique[-1]}"


def _module_variable_ranks(module: cst.Module) -> dict[str, int]:
    """Module-level ``W = tf.Variable(tf.random.normal([a, b]))``: name -> rank."""
    out: dict[str, int] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, cst.Call)
            ):
                continue
            rank = _literal_rank(small.value)
            if rank is not None:
                out[small.targets[0].target.value] = rank
    return out


def _literal_rank(call: cst.Call) -> int | None:
    """``tf.Variable(tf.zeros([3, 4]))`` -> 2 (None: not written out)."""
    func = get_full_name_for_node(call.func) or ""
    if not call.args:
        return None
    first = call.args[0].value
    while isinstance(first, cst.BinaryOperation):  # tf.random.normal([a, b]) * 0.1
        numbers = (cst.Integer, cst.Float)
        if isinstance(first.right, numbers):
            first = first.left
        elif isinstance(first.left, numbers):
            first = first.right
        else:
            return None
    if func.endswith(("Variable", "constant")) and isinstance(first, cst.Call):
        return _literal_rank(first)
    if func.endswith(("Variable", "constant")) and isinstance(first, (cst.List, cst.Tuple)):
        depth = 0
        node: cst.BaseExpression = first
        while isinstance(node, (cst.List, cst.Tuple)) and node.elements:
            depth += 1
            node = node.elements[0].value
        return depth
    if func.endswith(("zeros", "ones", "normal", "uniform", "truncated_normal", "fill")) and (
        isinstance(first, (cst.List, cst.Tuple))
    ):
        return len(first.elements)
    return None


def choose_rewrites(
    view: ModuleView,
    function: cst.FunctionDef | cst.Lambda,
    use: ShapeUse,
    to_free: set[tuple[str, int]],
    varying: set[tuple[str, int]],
    dense: Mapping[str, int | None],
    *,
    autograph: bool = True,
) -> DynamicShapes:
    """The rewrites that let dimensions in ``to_free`` (parameter, dimension) be None.

    ``varying``: those that varied in the profile (a callee's read does not block them,
    as in the shape policy). A dimension another read still blocks gets no rewrite:
    it stays fixed either way. A read that steers Python control flow forbids every
    free dimension, so then nothing is rewritten.
    """
    if use.control():
        return DynamicShapes()
    blocked: set[tuple[str, int]] = set()
    while True:
        wanted = to_free - blocked

        def stands(read: ShapeRead, wanted: set[tuple[str, int]] = wanted) -> bool:
            return read.definite and any(
                read.reads_dim(dim) for param, dim in wanted if param == read.param
            )

        def free(param: str, dim: int, wanted: set[tuple[str, int]] = wanted) -> bool:
            return (param, dim) in wanted

        found = plan_rewrites(view, function, use, stands, dense, autograph=autograph, free=free)
        left = found.without_rewritten(use)
        still = {
            (param, dim)
            for param, dim in wanted
            for read in left.reads.get(param, [])
            if read.reads_dim(dim) and (read.definite or (param, dim) not in varying)
        }
        if not still:
            return found
        blocked |= still
