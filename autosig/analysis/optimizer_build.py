"""Build a Keras optimizer before the first train step, so the step traces once.

A Keras 3 optimizer creates its slot variables (Adam's momentums, ...) on its first
``apply_gradients``. Inside a tf.function that is variable creation on the first call,
and TensorFlow traces the function a second time without it (the profile shows two
traces of the same call). ``optimizer.build(model.trainable_variables)`` after the
statement that sets up both creates them eagerly instead: the step then traces once.

Found statically, in the file the profile points at: the traced function's
``X.apply_gradients(zip(grads, VARS))`` (or ``X.apply(grads, VARS)``) calls, where ``X`` is a name or ``self.<attr>`` bound
once to ``tf.keras.optimizers.<Name>(...)`` / ``keras.optimizers.<Name>(...)`` and
``VARS`` is ``M.trainable_variables`` or ``M.trainable_weights`` (or a sum of those, or a
list of ``tf.Variable``\\ s) of models bound once. The build goes right after the last of
those set-up statements (and of any ``M.build(...)`` or ``M(...)`` statement after it), all
of which must be statements of one block: a module, a function body or ``__init__``.

It is written only when it gives the same training (``tests/test_optimizer_build_tf.py``
measures weights after N steps with real TensorFlow): ``build`` is idempotent in Keras 3
and makes zero-initialised slots for exactly the list the step passes, so it must run
when every model in ``VARS`` is built, i.e. created with its inputs known
(``tf.keras.Model(inputs, outputs)``, a ``Sequential`` starting with ``Input``/an
``input_shape``, ``tf.Variable``) or built by a ``M.build``/``M(...)`` statement before the
insertion; and the variable list must not change later: no ``.trainable =`` store, no
``M.add``/``M.pop`` anywhere in the file (``.trainable`` changes in the project's other
files make the fix unsafe: ``autosig.rewrite.optimizer_build_fix``), and no other call of the optimizer in the file
with another variable list (it would then be built for the one called first). An
optimizer with ``use_ema`` (its averages copy the weights at build time) or
``**kwargs`` is left alone, as is one already built.
Otherwise the reason is returned and explain keeps advising.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import Assignment, ScopeProvider

from autosig.source.metadata import MetadataView, iter_tree

KERAS3_OPTIMIZERS = frozenset(
    {"Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Lamb", "Lion"}
    | {"Muon", "Nadam", "RMSprop", "SGD"}
)
"""Keras 3 optimizer classes whose ``build(var_list)`` makes every slot (not
``LossScaleOptimizer``, which wraps another one)."""
OPTIMIZER_MODULES = ("tensorflow.keras.optimizers.", "keras.optimizers.")
"""Where Keras 3 optimizers are spelled (``tf.keras`` is Keras 3 from TensorFlow 2.16)."""

VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights"})
APPLY_METHODS = {"apply_gradients": 0, "apply": 1}
"""Keras 3 optimizer method -> position of the argument holding the variables
(zip(grads, VARS) for ``apply_gradients``; Keras 3 optimizers have no ``minimize``)."""
VARIABLE_KEYWORDS = {"apply_gradients": "grads_and_vars", "apply": "trainable_variables"}

FUNCTIONAL_MODELS = frozenset(
    f"{base}.{name}"
    for base in ("tensorflow.keras", "keras", "tensorflow.keras.models", "keras.models")
    for name in ("Model",)
)
SEQUENTIAL_MODELS = frozenset(
    f"{base}.Sequential"
    for base in ("tensorflow.keras", "keras", "tensorflow.keras.models", "keras.models")
)
INPUTS = frozenset(
    f"{base}.{name}"
    for base in ("tensorflow.keras", "keras", "tensorflow.keras.layers", "keras.layers")
    for name in ("Input", "InputLayer")
)
VARIABLES = frozenset({"tensorflow.Variable"})
CHANGES_VARIABLES = frozenset({"add", "pop"})
"""Model methods after which its trainable variables are other ones."""


@dataclass(frozen=True)
class OptimizerBuild:
    """The statements to insert and where (after ``anchor``, a statement of the file)."""

    statements: tuple[str, ...]
    anchor: cst.BaseStatement
    line: int
    """The anchor's last line: the builds go right after it."""
    edits: dict[cst.CSTNode, cst.FlattenSentinel[cst.BaseStatement]]

    def describe(self) -> str:
        return f"`{'`, `'.join(self.statements)}` after line {self.line}"


@dataclass(frozen=True)
class NoBuild:
    """Why no build is inserted."""

    reason: str


# -- the facts about the module, collected in one pass -------------------------------------------


@dataclass(frozen=True)
class MethodCall:
    """``receiver.method(...)`` somewhere in the file."""

    call: cst.Call
    receiver: str
    """The receiver's code."""
    method: str
    line: int
    order: int
    """When the pass met it (``iter_tree``'s order, not the file's)."""


@dataclass(frozen=True)
class Store:
    """An attribute stored to: ``X.attr = ...``, ``X.attr += ...``, ``X.attr: T``,
    ``del X.attr``."""

    node: cst.Attribute
    line: int
    order: int


@dataclass
class StoresAndCalls:
    """What the build analyses (this module's and ``model_build``'s) ask of the whole
    file, gathered in one pass over its tree (``stores_and_calls``): the attribute stores and
    the method calls, each in the order the pass met them (``iter_tree``'s, which the
    questions walked the file in before: the one they report first is unchanged). The
    questions below are answered from these instead of walking the file again."""

    stores: dict[str, list[Store]] = field(default_factory=lambda: defaultdict(list))
    """Attribute name -> its stores."""
    calls: dict[str, list[MethodCall]] = field(default_factory=lambda: defaultdict(list))
    """Method name -> its calls."""

    def is_store(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Attribute) and any(
            s.node is node for s in self.stores.get(node.attr.value, ())
        )

    def method_calls(self, methods: Iterable[str]) -> list[MethodCall]:
        """The calls of any of ``methods``, in the order the pass met them."""
        found = [c for m in methods for c in self.calls.get(m, ())]
        return sorted(found, key=lambda c: c.order)


_FACTS: weakref.WeakKeyDictionary[MetadataView, StoresAndCalls] = weakref.WeakKeyDictionary()


def stores_and_calls(ctx: MetadataView) -> StoresAndCalls:
    """The facts of ``ctx``'s module (collected once per view, then shared)."""
    facts = _FACTS.get(ctx)
    if facts is None:
        facts = _FACTS[ctx] = _collect(ctx)
    return facts


def _collect(ctx: MetadataView) -> StoresAndCalls:
    facts = StoresAndCalls()
    targets: set[int] = set()
    for index, node in enumerate(iter_tree(ctx.module)):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del)):
            targets.add(id(node.target))
        elif isinstance(node, cst.Attribute) and id(node) in targets:
            facts.stores[node.attr.value].append(Store(node, ctx.position(node)[0], index))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method, receiver = node.func.attr.value, ctx.code(node.func.value)
            line = ctx.position(node)[0]
            facts.calls[method].append(MethodCall(node, receiver, method, line, index))
    return facts


@dataclass(frozen=True)
class Ref:
    """A name or ``self.<attr>`` the traced function reads, and the statement binding it."""

    code: str
    statement: cst.SimpleStatementLine
    value: cst.BaseExpression


def applies_gradients(function: cst.FunctionDef | cst.Lambda) -> bool:
    """``function`` calls an optimizer's ``apply_gradients``/``apply``."""
    return any(
        isinstance(c, cst.Call)
        and isinstance(c.func, cst.Attribute)
        and c.func.attr.value in APPLY_METHODS
        for c in iter_tree(function)
    )


def plan_optimizer_build(
    ctx: MetadataView, function: cst.FunctionDef | cst.Lambda
) -> OptimizerBuild | NoBuild:
    """Where ``optimizer.build(...)`` makes ``function``'s optimizers' variables before its
    first call, or why it cannot be written here."""
    calls = sorted(
        (
            c
            for c in iter_tree(function)
            if isinstance(c, cst.Call)
            and isinstance(c.func, cst.Attribute)
            and c.func.attr.value in APPLY_METHODS
        ),
        key=ctx.position,
    )
    if not calls:
        return NoBuild(
            "no `apply_gradients(...)` of an optimizer in the function: the variables it "
            "creates on its first call are others (a layer or model built there?)"
        )
    builds: dict[str, str] = {}
    anchors: list[cst.SimpleStatementLine] = []
    for call in calls:
        found = _one_optimizer(ctx, function, call)
        if isinstance(found, NoBuild):
            return found
        code, statement, block_anchor = found
        builds.setdefault(code, statement)
        anchors.append(block_anchor)
    blocks = {id(ctx.parent(a)) for a in anchors}
    if len(blocks) != 1:
        return NoBuild("the optimizers are set up in different blocks: build each by hand")
    anchor = max(anchors, key=lambda a: ctx.position(a))
    config = ctx.module.config_for_parsing
    new = [cst.parse_statement(f"{text}\n", config=config) for text in builds.values()]
    line = ctx.line_span(anchor)[-1]
    return OptimizerBuild(
        tuple(builds.values()), anchor, line, {anchor: cst.FlattenSentinel([anchor, *new])}
    )


def _one_optimizer(
    ctx: MetadataView, function: cst.FunctionDef | cst.Lambda, call: cst.Call
) -> tuple[str, str, cst.SimpleStatementLine] | NoBuild:
    """(optimizer code, the build statement, the statement it goes after) for one call."""
    method = call.func.attr.value  # type: ignore[attr-defined]
    receiver = call.func.value  # type: ignore[attr-defined]
    optimizer = resolve_reference(ctx, function, receiver)
    if isinstance(optimizer, NoBuild):
        return optimizer
    why = _not_a_keras3_optimizer(ctx, optimizer)
    if why is not None:
        return NoBuild(why)
    built = _existing_build(ctx, optimizer.code)
    if built is not None:
        return NoBuild(
            f"`{optimizer.code}` is already built (line {built}): profile again if that "
            "line is newer than the profile; otherwise the variables created on the first "
            "call are others (a layer or model built in the step?)"
        )
    variables = _variables_argument(function, call, method)
    if variables is None:
        return NoBuild(
            f"`{optimizer.code}.{method}(...)` does not name the variables in a form "
            "autosig follows (`zip(grads, model.trainable_variables)`)"
        )
    models = _models(ctx, function, variables)
    if isinstance(models, NoBuild):
        return models
    other = _other_variables(ctx, function, optimizer.code, ctx.code(variables))
    if other is not None:
        return NoBuild(
            f"`{optimizer.code}` also applies gradients to other variables (line {other}): "
            "which list it is built for first is not known here"
        )
    block = ctx.parent(optimizer.statement)
    anchor: cst.SimpleStatementLine = optimizer.statement
    for model in models:
        if ctx.parent(model.statement) is not block:
            return NoBuild(
                f"`{model.code}` and `{optimizer.code}` are set up in different blocks: "
                f"call {optimizer.code}.build(...) by hand once both exist"
            )
        last = built_by(ctx, model, block)
        if last is None:
            return NoBuild(
                f"`{model.code}` may not be built when `{optimizer.code}` is set up (a "
                "subclassed or Sequential model without an Input builds on its first "
                f"call): build it first ({model.code}.build(input_shape)), then "
                f"{optimizer.code}.build({ctx.code(variables)})"
            )
        anchor = max(anchor, last, key=lambda s: ctx.position(s))
    changed = _variables_changed_later(ctx, models)
    if changed is not None:
        return NoBuild(changed)
    return optimizer.code, f"{optimizer.code}.build({ctx.code(variables)})", anchor


# -- what a name or self.<attr> is bound to ----------------------------------------------------


def resolve_reference(
    ctx: MetadataView, function: cst.FunctionDef | cst.Lambda, node: cst.BaseExpression
) -> Ref | NoBuild:
    code = ctx.code(node)
    if isinstance(node, cst.Name):
        scope = ctx.get_metadata(ScopeProvider, node)
        assignments = [a for a in scope[node.value] if isinstance(a, Assignment)] if scope else []
        if len(assignments) != 1 or ctx.is_within(assignments[0].node, function):
            return NoBuild(f"`{code}` is not bound once outside the function")
        return _statement_of(ctx, assignments[0].node, code)
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and isinstance(function, cst.FunctionDef)
        and first_parameter(function) == node.value.value
    ):
        return _init_attribute(ctx, function, node.attr.value, code)
    return NoBuild(f"`{code}` is neither a name nor an attribute of self")


def _statement_of(ctx: MetadataView, target: cst.CSTNode, code: str) -> Ref | NoBuild:
    """The ``name = value`` line a binding comes from (one target, a line of its own)."""
    assign = ctx.parent(target)
    if isinstance(assign, cst.AssignTarget):
        assign = ctx.parent(assign)
    line = ctx.parent(assign) if assign is not None else None
    if (
        not isinstance(assign, cst.Assign)
        or len(assign.targets) != 1
        or not isinstance(line, cst.SimpleStatementLine)
        or len(line.body) != 1
    ):
        return NoBuild(f"`{code}` is not set by a plain `{code} = ...` statement")
    return Ref(code, line, assign.value)


def _init_attribute(
    ctx: MetadataView, method: cst.FunctionDef, attr: str, code: str
) -> Ref | NoBuild:
    """``self.<attr> = value``: once, as a statement of the class's ``__init__``, and
    stored nowhere else in the file."""
    cls = ctx.enclosing_class(method)
    stores = [s.node for s in stores_and_calls(ctx).stores.get(attr, ())]
    init = next(
        (
            s
            for s in (cls.body.body if cls is not None else ())
            if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"
        ),
        None,
    )
    if init is None or len(stores) != 1:
        return NoBuild(f"`{code}` is not set once, in `__init__`")
    ref = _statement_of(ctx, stores[0], code)
    if isinstance(ref, NoBuild) or ctx.parent(ref.statement) is not init.body:
        return NoBuild(f"`{code}` is not set by a statement of `__init__`'s own body")
    own = first_parameter(init)
    target = stores[0]
    if not (isinstance(target.value, cst.Name) and target.value.value == own):
        return NoBuild(f"`{code}` is not set on `__init__`'s self")
    return Ref(f"{own}.{attr}", ref.statement, ref.value)


def first_parameter(function: cst.FunctionDef) -> str | None:
    params = (*function.params.posonly_params, *function.params.params)
    return params[0].name.value if params else None


# -- the optimizer -------------------------------------------------------------------------------


def _not_a_keras3_optimizer(ctx: MetadataView, ref: Ref) -> str | None:
    value = ref.value
    if not isinstance(value, cst.Call):
        return f"`{ref.code}` is not created by a Keras optimizer class here"
    names = ctx.qualified_names(value.func)
    keras3 = any(
        n.startswith(prefix) and n[len(prefix) :] in KERAS3_OPTIMIZERS
        for n in names
        for prefix in OPTIMIZER_MODULES
    )
    if not keras3:
        return f"`{ref.code}` is not a Keras 3 optimizer (tf.keras.optimizers.Adam, ...)"
    for arg in value.args:
        if arg.star:
            return f"`{ref.code}` is created with `*`/`**` arguments autosig cannot read"
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "use_ema" and ctx.code(arg.value) != "False":
            return (
                f"`{ref.code}` keeps moving averages (use_ema), which copy the weights at "
                "build time"
            )
    return None


def _other_variables(
    ctx: MetadataView, function: cst.FunctionDef | cst.Lambda, code: str, variables: str
) -> int | None:
    """The line of an optimizer call elsewhere in the file with another variable list."""
    for c in stores_and_calls(ctx).method_calls(APPLY_METHODS):
        if same_reference(c.receiver, code):
            enclosing = ctx.enclosing_function(c.call) or function
            found = _variables_argument(enclosing, c.call, c.method)
            if found is None or ctx.code(found) != variables:
                return c.line
    return None


def _existing_build(ctx: MetadataView, code: str) -> int | None:
    for c in stores_and_calls(ctx).method_calls(["build"]):
        if same_reference(c.receiver, code):
            return c.line
    return None


def same_reference(a: str, b: str) -> bool:
    """``self.opt`` in ``__init__`` and ``self.opt`` in the step: the attribute counts."""
    return a == b or ("." in a and "." in b and a.split(".", 1)[1] == b.split(".", 1)[1])


# -- the variables and their models --------------------------------------------------------------


def _variables_argument(
    function: cst.FunctionDef | cst.Lambda, call: cst.Call, method: str
) -> cst.BaseExpression | None:
    """The expression naming the variables in an optimizer call (local aliases followed)."""
    position, keyword = APPLY_METHODS[method], VARIABLE_KEYWORDS[method]
    positional = [a for a in call.args if a.keyword is None and not a.star]
    chosen = next((a.value for a in call.args if a.keyword and a.keyword.value == keyword), None)
    if chosen is None and len(positional) > position:
        chosen = positional[position].value
    if chosen is None:
        return None
    if method == "apply_gradients":
        if (
            isinstance(chosen, cst.Call)
            and isinstance(chosen.func, cst.Name)
            and chosen.func.value == "list"
            and len(chosen.args) == 1
        ):
            chosen = chosen.args[0].value
        if not (
            isinstance(chosen, cst.Call)
            and isinstance(chosen.func, cst.Name)
            and chosen.func.value == "zip"
            and len(chosen.args) == 2
            and not any(a.star or a.keyword for a in chosen.args)
        ):
            return None
        chosen = chosen.args[1].value
    return _local_alias(function, chosen)


def _local_alias(
    function: cst.FunctionDef | cst.Lambda, expr: cst.BaseExpression
) -> cst.BaseExpression:
    """``variables`` assigned once in the function (``variables = model.trainable_variables``)
    stands for its value."""
    if not isinstance(expr, cst.Name):
        return expr
    values = [
        node.value
        for node in iter_tree(function)
        if isinstance(node, cst.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0].target, cst.Name)
        and node.targets[0].target.value == expr.value
    ]
    return values[0] if len(values) == 1 else expr


def _models(
    ctx: MetadataView, function: cst.FunctionDef | cst.Lambda, variables: cst.BaseExpression
) -> list[Ref] | NoBuild:
    """The models (or variables) whose variables ``variables`` lists."""
    parts = list(_summands(variables))
    refs: list[Ref] = []
    for part in parts:
        if isinstance(part, cst.Attribute) and part.attr.value in VARIABLE_LISTS:
            ref = resolve_reference(ctx, function, part.value)
            if isinstance(ref, NoBuild):
                return ref
            refs.append(ref)
        elif isinstance(part, (cst.Name, cst.Attribute)):
            ref = resolve_reference(ctx, function, part)
            if isinstance(ref, NoBuild):
                return ref
            if not _calls(ctx, ref.value, VARIABLES):
                return NoBuild(f"`{ref.code}` is not a tf.Variable nor a model's variables")
            refs.append(ref)
        else:
            return NoBuild(
                f"`{ctx.code(variables)}` is not a model's trainable_variables (or a sum or "
                "list of them)"
            )
    return refs


def _summands(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        yield from _summands(expr.left)
        yield from _summands(expr.right)
    elif isinstance(expr, (cst.List, cst.Tuple)):
        for element in expr.elements:
            if isinstance(element, cst.StarredElement):
                yield element  # type: ignore[misc]
            else:
                yield element.value
    else:
        yield expr


def _calls(ctx: MetadataView, value: cst.BaseExpression, names: frozenset[str]) -> bool:
    return isinstance(value, cst.Call) and bool(ctx.qualified_names(value.func) & names)


def built_by(
    ctx: MetadataView, model: Ref, block: cst.CSTNode | None
) -> cst.SimpleStatementLine | None:
    """The statement after which ``model`` has all its variables, or None if unknown."""
    last: cst.SimpleStatementLine | None = None
    if built_when_created(ctx, model.value):
        last = model.statement
    body = getattr(block, "body", ())
    after = False
    for statement in body:
        if statement is model.statement:
            after = True
            continue
        if after and _builds(ctx, statement, model.code):
            last = statement  # type: ignore[assignment]
    return last


def built_when_created(ctx: MetadataView, value: cst.BaseExpression) -> bool:
    if not isinstance(value, cst.Call):
        return False
    names = ctx.qualified_names(value.func)
    if names & VARIABLES:
        return True
    if names & FUNCTIONAL_MODELS:
        keywords = {a.keyword.value for a in value.args if a.keyword is not None}
        positional = [a for a in value.args if a.keyword is None and not a.star]
        return len(positional) >= 2 or {"inputs", "outputs"} <= keywords
    if names & SEQUENTIAL_MODELS:
        layers = next(
            (a.value for a in value.args if a.keyword is None or a.keyword.value == "layers"), None
        )
        if not isinstance(layers, (cst.List, cst.Tuple)) or not layers.elements:
            return False
        first = layers.elements[0].value
        if not isinstance(first, cst.Call):
            return False
        if ctx.qualified_names(first.func) & INPUTS:
            return True
        return any(
            a.keyword is not None and a.keyword.value in ("input_shape", "input_dim")
            for a in first.args
        )
    return False


def _builds(ctx: MetadataView, statement: cst.CSTNode, code: str) -> bool:
    """``model.build(...)`` or ``model(...)`` as a statement (or assigned): it has its
    variables afterwards."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "build":
        return ctx.code(func.value) == code
    return ctx.code(func) == code


def _variables_changed_later(ctx: MetadataView, models: list[Ref]) -> str | None:
    """A reason the list of trainable variables may differ at the first step."""
    facts = stores_and_calls(ctx)
    changes = [
        c
        for c in facts.method_calls(CHANGES_VARIABLES)
        if any(same_reference(c.receiver, m.code) for m in models)
    ]
    first = min((*facts.stores.get("trainable", ()), *changes), key=lambda f: f.order, default=None)
    if isinstance(first, Store):
        return (
            f"line {first.line} changes `.trainable`: the variables to "
            "build for may differ at the first step"
        )
    if isinstance(first, MethodCall):
        return f"line {first.line} changes the layers of `{first.receiver}`"
    return None
