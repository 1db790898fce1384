"""AS103: Python state (``self.n += 1``, ``global``) mutated inside a tf.function."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import libcst as cst
from libcst.metadata import ScopeProvider

from autosig.rules.base import Invalid, Rule
from autosig.rules.context import RuleContext
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite
from autosig.source.metadata import iter_tree
from autosig.source.skeleton import Keep

MESSAGE = (
    "`{target}` in tf.function `{name}` changes Python state only while tracing, not on "
    "every call; keep it in a tf.Variable created {where} and update it with {method}"
)
NO_FIX = " ({reason})"

METHODS = {cst.AddAssign: "assign_add", cst.SubtractAssign: "assign_sub"}


class PythonState(Rule):
    """## What it does
    Finds Python state changed inside a `tf.function`: attributes of `self`
    (`self.step += 1`) and module globals (`global counter; counter += 1`).

    ## Why is this bad?
    A `tf.function` runs its Python code only while tracing. A Python counter is
    incremented once per trace, not once per call: after 1,000 training steps
    `self.step` may still be 1. Worse, an assignment like `self.last = x` stores a
    symbolic graph tensor that is useless (or an error) outside the function.
    TensorFlow state lives in `tf.Variable`s, whose `assign_add`/`assign` run as graph
    ops on every call.

    ## Example
    ```python
    class Trainer(tf.Module):
        def __init__(self):
            self.steps = 0

        @tf.function
        def train_step(self, x):
            self.steps += 1
            return x
    ```

    ## Use instead
    ```python
    class Trainer(tf.Module):
        def __init__(self):
            self.steps = tf.Variable(0)

        @tf.function
        def train_step(self, x):
            self.steps.assign_add(1)
            return x
    ```

    ## Fix safety
    Unsafe: the state becomes a `tf.Variable` (int32 for an integer start value,
    float32 for a float), so code that reads it as a Python number (`range(self.steps)`,
    JSON dumps, comparisons in Python `if`s outside the function) may need `.numpy()`.
    Fixed only in the simple case: `self.x += v` / `-= v` (or `*=` etc., via `assign`)
    where the class's `__init__` sets `self.x = <number>` (or the class body has
    `x = <number>` and an `__init__` to add it to), and `global x; x += v` where the
    module sets `x = <number>`, with no other assignment to it anywhere. Everything
    else is reported without a fix.
    """

    code = "AS103"
    name = "python-state"
    summary = "Python state (self attribute, global) mutated inside a tf.function"
    fix_safety = "unsafe"
    # every assignment of a mutated attribute; module names a def rebinds
    skeleton_keeps = frozenset({Keep.SELF_SETTERS, Keep.GLOBAL_WRITERS})
    VALID = [
        # the same code outside a tf.function
        "class C:\n    def __init__(self):\n        self.n = 0\n"
        "    def step(self, x):\n        self.n += 1\n        return x\n",
        "import tensorflow as tf\nclass C:\n    def __init__(self):\n"
        "        self.n = tf.Variable(0)\n    @tf.function\n    def step(self, x):\n"
        "        self.n.assign_add(1)\n        return x\n",
        # a local counter is fine
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    n = 0\n"
        "    for _ in range(3):\n        n += 1\n    return x * n\n",
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\nclass C(tf.Module):\n    def __init__(self):\n"
            "        self.n = 0\n    @tf.function\n    def step(self, x):\n"
            "        self.n += 1\n        return x\n",
            "import tensorflow as tf\nclass C(tf.Module):\n    def __init__(self):\n"
            "        self.n = tf.Variable(0)\n    @tf.function\n    def step(self, x):\n"
            "        self.n.assign_add(1)\n        return x\n",
            unsafe=True,
        ),
        Invalid(
            "import tensorflow as tf2\ncounter = 0.0\n@tf2.function\ndef f(x):\n"
            "    global counter\n    counter -= 0.5\n    return x\n",
            "import tensorflow as tf2\ncounter = tf2.Variable(0.0)\n@tf2.function\ndef f(x):\n"
            "    global counter\n    counter.assign_sub(0.5)\n    return x\n",
            unsafe=True,
        ),
        Invalid(
            "from tensorflow import function\nclass C:\n    total = 1\n"
            "    def __init__(self, k):\n        self.k = k\n"
            "    def _step(self, x):\n        self.total *= 2\n        return x\n"
            "    def build(self):\n        self.step = function(self._step)\n",
            "from tensorflow import function\nimport tensorflow as tf\n\nclass C:\n    total = 1\n"
            "    def __init__(self, k):\n        self.k = k\n"
            "        self.total = tf.Variable(1)\n"
            "    def _step(self, x):\n        self.total.assign(self.total * 2)\n        return x\n"
            "    def build(self):\n        self.step = function(self._step)\n",
            unsafe=True,
        ),
        Invalid(
            # reset elsewhere: a Variable would be replaced by an int, so no fix
            "import tensorflow as tf\nclass C:\n    def __init__(self):\n        self.n = 0\n"
            "    def reset(self):\n        self.n = 0\n"
            "    @tf.function\n    def step(self, x):\n        self.n += 1\n        return x\n",
            None,
        ),
        Invalid(
            # ... also when the reset assigns it as part of a tuple
            "import tensorflow as tf\nclass C:\n    def __init__(self):\n        self.n = 0\n"
            "    def reset(self):\n        self.n, self.m = 0, None\n"
            "    @tf.function\n    def step(self, x):\n        self.n += 1\n        return x\n",
            None,
        ),
        Invalid(
            "import tensorflow as tf\nclass C:\n    @tf.function\n    def step(self, x):\n"
            "        self.last = self.last + x\n        return x\n",
            None,
        ),
        Invalid(
            "import tensorflow as tf\nlast = None\n@tf.function\ndef f(x):\n"
            "    global last\n    last = x\n    return x\n",
            None,
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterable[Violation]:
        traced_augs = [(site, node) for site, node in ctx.iter_traced(cst.AugAssign)]
        traced = {id(node) for _, node in traced_augs}
        for site, node in traced_augs:
            yield from self._aug(ctx, site, node, traced)
        for site, node in ctx.iter_traced(cst.Assign):
            yield from self._assign(ctx, site, node)

    # -- x += v ---------------------------------------------------------------------
    def _aug(
        self, ctx: RuleContext, site: FunctionSite, node: cst.AugAssign, traced: set[int]
    ) -> Iterator[Violation]:
        target = node.target
        method = METHODS.get(type(node.operator), "assign")
        shown = ctx.code(node).strip()
        name = site.site.qualname
        self_name = _self_name(ctx, site)
        if _is_self_attr(target, self_name):
            attr = target.attr.value  # type: ignore[attr-defined]
            fix = _self_fix(ctx, site, node, attr, traced)
            where = "in __init__"
        elif isinstance(target, cst.Name) and _declared(ctx, node, target.value, cst.Global):
            fix = _global_fix(ctx, node, target.value, traced)
            where = "at module level"
        elif (
            isinstance(target, cst.Name)
            and ctx.enclosing_function(node) is site.function
            and _declared(ctx, node, target.value, cst.Nonlocal)
        ):
            fix = "a nonlocal variable cannot be turned into a tf.Variable automatically"
            where = "in the enclosing function"
        else:
            return
        message = MESSAGE.format(target=shown, name=name, where=where, method=method)
        if isinstance(fix, str):
            yield Violation(node, message + NO_FIX.format(reason=fix))
            return
        edits = {node: _update(ctx, node, method)}
        edits.update(fix)
        yield Violation(node, message, edits=edits, imports=ctx.tf_imports())

    # -- x = ... ------------------------------------------------------------------------
    def _assign(
        self, ctx: RuleContext, site: FunctionSite, node: cst.Assign
    ) -> Iterator[Violation]:
        self_name = _self_name(ctx, site)
        for target in node.targets:
            target_node = target.target
            if _is_self_attr(target_node, self_name):
                attr = target_node.attr.value  # type: ignore[attr-defined]
                reads_itself = any(
                    _is_attribute(n, self_name, attr)  # type: ignore[arg-type]
                    for n in iter_tree(node.value)
                )
                if not reads_itself:
                    continue  # caching a value on self: a pattern, not a counter
            elif not (
                isinstance(target_node, cst.Name)
                and _declared(ctx, node, target_node.value, cst.Global)
            ):
                continue
            shown = ctx.code(target_node)
            yield Violation(
                node,
                MESSAGE.format(
                    target=f"{shown} = ...",
                    name=site.site.qualname,
                    where="outside the function",
                    method="assign",
                )
                + NO_FIX.format(reason="not a simple counter, so not fixed automatically"),
            )


def _self_name(ctx: RuleContext, site: FunctionSite) -> str | None:
    function = site.function
    if not isinstance(function, cst.FunctionDef) or ctx.enclosing_class(function) is None:
        return None
    params = function.params.params or function.params.posonly_params
    return params[0].name.value if params else None


def _is_self_attr(node: cst.BaseExpression, self_name: str | None) -> bool:
    return (
        self_name is not None
        and isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == self_name
    )


Declaration = type[cst.Global] | type[cst.Nonlocal]


def _declared(ctx: RuleContext, node: cst.CSTNode, name: str, kind: Declaration) -> bool:
    """``name`` is declared ``global``/``nonlocal`` in the function around ``node``."""
    function = ctx.enclosing_function(node)
    if not isinstance(function, cst.FunctionDef):
        return False
    return name in _declared_names(ctx, function, kind)


def declarations(body: cst.CSTNode, kind: Declaration) -> list[cst.Global | cst.Nonlocal]:
    """Every ``global``/``nonlocal`` statement in ``body`` (one walk, no matcher import)."""
    return [node for node in iter_tree(body) if isinstance(node, kind)]


_DECLARED_CACHE: dict[tuple[int, int, str], tuple[cst.FunctionDef, frozenset[str]]] = {}


def _declared_names(
    ctx: RuleContext, function: cst.FunctionDef, kind: Declaration
) -> frozenset[str]:
    """Names declared global/nonlocal directly in ``function``, found once per function.

    Searching the body again for every assignment made check time quadratic in a
    function's length.
    """
    key = (id(ctx), id(function), kind.__name__)
    cached = _DECLARED_CACHE.get(key)
    if cached is not None and cached[0] is function:
        return cached[1]
    names = frozenset(
        item.name.value
        for declaration in declarations(function.body, kind)
        if ctx.enclosing_function(declaration) is function
        for item in declaration.names
    )
    if len(_DECLARED_CACHE) > 4096:
        _DECLARED_CACHE.clear()
    _DECLARED_CACHE[key] = (function, names)
    return names


def _update(ctx: RuleContext, node: cst.AugAssign, method: str) -> cst.Expr:
    target = ctx.code(node.target)
    value = ctx.code(node.value)
    if method == "assign":
        operator = ctx.code(node.operator).strip()[:-1]
        value = f"{target} {operator} {_paren(node.value, value)}"
    call = cst.parse_expression(f"{target}.{method}({value})")
    return cst.Expr(value=call, semicolon=node.semicolon)


def _paren(node: cst.BaseExpression, code: str) -> str:
    atoms = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)
    return code if isinstance(node, atoms) or node.lpar else f"({code})"


def _number(node: cst.BaseExpression) -> type | None:
    """int or float for a number literal, else None."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    if isinstance(node, cst.Integer):
        return int
    if isinstance(node, cst.Float):
        return float
    return None


def _compatible(start: type | None, step: cst.BaseExpression) -> bool:
    """An int32 Variable cannot take a float update."""
    return not (start is int and _number(step) is float)


def _variable(ctx: RuleContext, value: cst.BaseExpression) -> cst.Call:
    return cst.Call(func=ctx.tf_expr("Variable"), args=[cst.Arg(value)])


def _is_variable(ctx: RuleContext, value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and ctx.refers_to(
        value.func, "tensorflow.Variable", "tensorflow.compat.v2.Variable"
    )


def _self_fix(
    ctx: RuleContext, site: FunctionSite, node: cst.AugAssign, attr: str, traced: set[int]
) -> dict[cst.CSTNode, cst.CSTNode] | str:
    """Edits that create ``self.<attr>`` as a Variable in ``__init__``, or why not."""
    method = site.function
    klass = ctx.enclosing_class(method) if isinstance(method, cst.FunctionDef) else None
    if klass is None:
        return "the class is not visible here"
    init = next(
        (
            s
            for s in klass.body.body
            if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"
        ),
        None,
    )
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return "the class has no __init__ to create the tf.Variable in"
    params = init.params.params
    if not params:
        return "__init__ takes no self"
    init_self = params[0].name.value
    start: cst.Assign | None = None
    for stmt in init.body.body:
        assign = _single_assign(stmt)
        if assign is not None and _is_attribute(assign.targets[0].target, init_self, attr):
            start = assign
    writes = [
        w
        for w in iter_tree(klass)
        if isinstance(w, _BINDINGS)
        and w is not start
        and not (id(w) in traced and isinstance(w, cst.AugAssign))
        and _writes_attr(w, attr)
    ]
    if writes:
        return f"self.{attr} is also assigned elsewhere in the class"
    if start is not None:
        if _is_variable(ctx, start.value):
            return {}
        kind = _number(start.value)
        if kind is None or not _compatible(kind, node.value):
            return f"its start value in __init__ is not a number literal matching {ctx.code(node.value)}"
        return {start.value: _variable(ctx, start.value)}
    class_value = _class_number(klass, attr)
    if class_value is None:
        return f"__init__ does not set self.{attr} to a number"
    if not _compatible(_number(class_value), node.value):
        return "an int start value cannot take a float update"
    line = cst.SimpleStatementLine(
        body=[
            cst.Assign(
                targets=[cst.AssignTarget(cst.parse_expression(f"{init_self}.{attr}"))],
                value=_variable(ctx, class_value.deep_clone()),
            )
        ]
    )
    return {init.body: init.body.with_changes(body=[*init.body.body, line])}


_BINDINGS = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.Del, cst.WithItem)
"""Statements and clauses that may bind an attribute."""


def _single_assign(stmt: cst.CSTNode) -> cst.Assign | None:
    """``stmt`` when it is one ``target = value`` alone on its line (one target)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        assign = stmt.body[0]
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            return assign
    return None


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _is_attribute(node: cst.CSTNode, owner: str, attr: str) -> bool:
    """``<owner>.<attr>``."""
    return (
        isinstance(node, cst.Attribute) and _is_name(node.value, owner) and node.attr.value == attr
    )


def _writes_attr(node: cst.CSTNode, attr: str) -> bool:
    """Whether ``node`` binds an attribute named ``attr``, in any target form
    (``a, self.n = ...``, ``for self.n in``, ``with x as self.n``, ``del self.n``)."""
    targets: list[cst.CSTNode] = []
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.Del)):
        targets = [node.target]
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        targets = [node.asname.name]
    return any(
        isinstance(t, cst.Attribute) and t.attr.value == attr
        for target in targets
        for t in iter_tree(target)
    )


def _class_number(klass: cst.ClassDef, attr: str) -> cst.BaseExpression | None:
    for stmt in klass.body.body:
        assign = _single_assign(stmt)
        if assign is not None and _is_name(assign.targets[0].target, attr):
            value = assign.value
            return value if _number(value) is not None else None
    return None


def _global_fix(
    ctx: RuleContext, node: cst.AugAssign, name: str, traced: set[int]
) -> dict[cst.CSTNode, cst.CSTNode] | str:
    scope = ctx.get_metadata(ScopeProvider, ctx.module)
    start: cst.Assign | None = None
    for stmt in ctx.module.body:
        assign = _single_assign(stmt)
        if assign is not None and _is_name(assign.targets[0].target, name):
            start = assign
    if start is None:
        return f"the module does not set {name} to a number"
    if not ctx.tf_bound_before(start):
        return f"{name} is set before TensorFlow is imported"
    allowed = {id(start.targets[0].target)}
    for assignment in scope.assignments[name]:
        target = assignment.node
        parent = ctx.parent(target)
        if id(target) in allowed or (isinstance(parent, cst.AugAssign) and id(parent) in traced):
            continue
        return f"{name} is also assigned elsewhere"
    if _is_variable(ctx, start.value):
        return {}
    kind = _number(start.value)
    if kind is None or not _compatible(kind, node.value):
        return f"its module-level value is not a number literal matching {ctx.code(node.value)}"
    return {start.value: _variable(ctx, start.value)}
