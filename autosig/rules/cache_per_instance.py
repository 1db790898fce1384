"""AS106's fix for a tf.function a method creates on every call: create it once per instance.

``predict`` defining ``@tf.function def step(x): ...`` (or calling
``tf.function(self._step)``) makes a new tf.function object, and so a new trace, on
every call. The fix keeps the first one on the instance and reuses it::

    step = getattr(self, "_autosig_Predictor_predict_step", None)
    if step is None:
        @tf.function
        def step(x): ...
        self._autosig_Predictor_predict_step = step
    return step(x)

Each instance gets its own function (as a tf.function method would), created lazily,
so ``__init__`` is not touched and a subclass that skips ``super().__init__()`` still
works; the attribute name carries the class, the method and the function's name, so
a subclass overriding the method keeps a cache of its own.

The old code traced anew on every call, so each trace read the Python values the
function reads *at that call*; the cached function reads them at its first trace
only. The fix is offered only when the creation is a statement directly in the
method's body (a decorated def, ``name = tf.function(...)``, or ``tf.function(...)(...)``
called at once), the name it binds is bound once and only called, the class has no
``__slots__`` and no ``__getattr__``/``__getattribute__``/``__setattr__``, the creation's
options and the def's defaults and annotations (evaluated once now, at the first call)
read nothing that varies and call nothing, and the traced function reads nothing of
the method's own but ``self`` and (for a nested def) locals it can take as
keyword-only parameters instead. It is *safe* when, besides:

- what the trace reads from ``self`` (directly, or through the methods of the class it
  calls) is only attributes assigned in ``__init__`` and nowhere else in the file (no
  ``.attr = ``, ``del``, item store or mutating method call on them anywhere, no
  ``setattr``), and ``self`` itself is not handed on;
- the module-level names it reads are bound once (imports, defs, constants no function
  rebinds or mutates);
- the trace has no Python effects or changing values (``print``, Python/NumPy random,
  time, stores into outside objects), draws no stateful TensorFlow random numbers (each
  trace had a fresh random state), and creates no variables or Keras objects (each
  call made new ones);
- the class derives from nothing (or ``object``): the attributes of another base are
  not visible here, and a ``tf.Module`` or Keras class tracks attributes, so
  ``tf.saved_model.save`` would export the cached function too;
- neither the class (``__copy__``, ``__getstate__``, ...) nor its module (``import copy``,
  ``pickle``, ...) copies or pickles objects: a shallow copy of an instance shares the
  cached function, which is bound to the original ``self``, and a deep copy or pickle
  of an instance fails once it holds a tf.function (measured; a tf.function made in
  ``__init__`` behaves the same);
- its only decorator is the tf.function one, and no closed-over local of the method
  had to become a parameter;
- no other file of the project (``analysis/project_writes``) writes an attribute of that
  name outside an ``__init__`` of its own ``self``, sets attributes by computed name, or
  deep-copies or pickles objects.

Otherwise the fix is *unsafe* and says why. Code outside the project (and, for text
read from stdin, outside the text) is assumed not to rebind the attributes the trace
reads, and calls of outside objects (a Keras model) to compute the same graph for the
same inputs, as AS106's loop hoist assumes.

A nested def that reads other locals of the method (``scale`` below) gets them as
keyword-only parameters, passed at each call (``step(x, scale=scale)``): a Python value
is then part of the trace key, as it was of the closure's trace, but a NumPy array or
tensor becomes a graph input instead of a constant, and 1, 1.0 and True share a trace
(measured with TensorFlow 2.21), so that fix is always unsafe.

One module, because the safety verdict and the edit are one judgement: which names the
cached function reads, which attributes the class writes, and how the creation is
spelled decide both whether the fix is offered (and how safe) and the exact code it
writes; split, the edit would re-derive what the analysis found.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import GlobalScope, ImportAssignment, ScopeProvider

from autosig.analysis.attribute_writes import MUTATORS
from autosig.analysis.shape_reads import shape_use
from autosig.rules.context import RuleContext
from autosig.rules.hoist import (
    _assignments,
    _changes_state,
    _free_loads,
    _from_elsewhere,
    _Index,
    _inside,
    _is_load,
    _names_read,
    _path,
    _stores,
    _unrecorded_bindings,
    _wrapped,
)
from autosig.source.discover import FunctionSite
from autosig.source.metadata import iter_tree
from autosig.source.sites import FixSafety

CACHE_PREFIX = "_autosig_"
"""Start of the attribute that holds a cached function (the rest names where it came from)."""

SETUP_METHODS = frozenset({"__init__"})
"""Where an attribute may be assigned and still count as fixed for the instance."""

REFLECTION = frozenset({"setattr", "delattr", "vars", "__dict__", "__setattr__", "__delattr__"})
"""Names that write attributes without naming them: any of them makes every read unsure."""

TF_CLASSES_PER_TRACE = frozenset(
    {"TensorArray", "TensorSpec", "TensorShape", "RaggedTensorSpec", "SparseTensorSpec"}
    | {"GradientTape", "SparseTensor", "IndexedSlices", "DType", "IndexedSlicesSpec"}
)
"""TensorFlow classes a trace may construct: graph values, not variables or Keras objects."""

MAGIC_ATTRIBUTE_METHODS = frozenset({"__getattr__", "__getattribute__", "__setattr__"})

COPY_METHODS = frozenset(
    {"__copy__", "__deepcopy__", "__getstate__", "__setstate__", "__reduce__", "__reduce_ex__"}
)
COPY_MODULES = frozenset({"copy", "pickle", "cloudpickle", "dill", "joblib", "copyreg"})
"""A copy of an instance shares its cached function (bound to the original ``self``), and
a deep copy or pickle of one fails once it holds a tf.function: where the class or its
module copies or pickles, the fix is unsafe."""


@dataclass(frozen=True)
class CacheFix:
    """The edits that cache one per-call creation on the instance, and how safe they are."""

    edits: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement]]
    safety: FixSafety
    why_unsafe: tuple[str, ...] = ()


@dataclass
class _Form:
    """Where and how the method creates the function."""

    statement: cst.BaseStatement
    """The statement of the method's body that creates it (replaced by the fix)."""
    name: str
    """The local name the function is called by (made up for ``tf.function(f)(x)``)."""
    kind: str
    """``def`` (decorated nested def), ``assign`` (``name = tf.function(...)``) or
    ``call`` (``tf.function(...)(...)`` called at once)."""
    creation: cst.CSTNode
    """The decorator or the ``tf.function(...)`` call expression."""


@dataclass
class _Verdict:
    """What the analysis found: reasons the fix is unsafe (empty: safe)."""

    unsafe: list[str] = field(default_factory=list)

    def add(self, reason: str) -> None:
        if reason not in self.unsafe:
            self.unsafe.append(reason)


class CacheNames:
    """Names the fixes of one pass made up, so two creations never share one."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.taken: set[str] = set()

    def fresh(self, base: str, used: set[str] | None = None) -> str:
        """``base``, or ``base_2``, ... : a name not in ``used`` (default: the file's text)."""
        name, n = base, 2
        while name in self.taken or (name in used if used is not None else name in self.ctx.text):
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name


def plan_cache(
    ctx: RuleContext,
    index: _Index,
    names: CacheNames,
    site: FunctionSite,
    creation: cst.CSTNode,
    method: cst.FunctionDef,
) -> CacheFix | None:
    """The fix caching ``creation`` (made on every call of ``method``), or None if none
    keeps the program (a report only)."""
    cls = ctx.enclosing_class(method)
    if cls is None or method.asynchronous is not None or method.decorators:
        return None
    self_name = _self_parameter(method)
    if self_name is None or _class_blocks_attributes(cls):
        return None
    form = _form(ctx, site, creation, method, names)
    if form is None or ctx.parent(form.statement) is not method.body:
        return None
    if not _bound_once(ctx, index, form, method, self_name):
        return None
    verdict = _Verdict()
    _judge_class(cls, verdict)
    _judge_copies(ctx, cls, verdict)
    _judge_project_copies(ctx, verdict)
    analysis = _Analysis(ctx, index, cls, method, self_name, verdict)
    closed = analysis.creation(form, site)
    if closed is None:
        return None
    if closed and form.kind != "def":
        return None  # a lambda or wrapped def closing over the method's locals: report
    calls = _call_sites(ctx, index, form, method)
    if calls is None:
        return None
    if closed:
        verdict.add(
            "passes " + ", ".join(f"`{n}`" for n in closed) + " as keyword arguments: "
            "a NumPy array or tensor there becomes a graph input instead of a constant, "
            "and Python numbers equal in value (1, 1.0, True) share a trace"
        )
    edits = _edits(ctx, form, method, cls, self_name, closed, calls, names)
    safety: FixSafety = "unsafe" if verdict.unsafe else "safe"
    return CacheFix(edits, safety, tuple(verdict.unsafe))


# -- where the creation is ------------------------------------------------------------


def _self_parameter(method: cst.FunctionDef) -> str | None:
    params = method.params
    first = (*params.posonly_params, *params.params)
    return first[0].name.value if first else None


def _class_blocks_attributes(cls: cst.ClassDef) -> bool:
    """``__slots__``, attribute hooks or a frozen or slotted dataclass: setting the cache
    may fail."""
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef) and (
            statement.name.value in MAGIC_ATTRIBUTE_METHODS
        ):
            return True
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                targets = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets = [small.target]
                if any(isinstance(t, cst.Name) and t.value == "__slots__" for t in targets):
                    return True
    for decorator in cls.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call) and any(
            a.keyword is not None and a.keyword.value in ("frozen", "slots") for a in expr.args
        ):
            return True
    return False


def _judge_class(cls: cst.ClassDef, verdict: _Verdict) -> None:
    bases = [
        b for b in cls.bases if not (isinstance(b.value, cst.Name) and b.value.value == "object")
    ]
    if bases or any(b.keyword is not None for b in cls.bases):
        verdict.add(
            f"`{cls.name.value}` derives from another class: attributes it sets are not "
            "checked here, and a tf.Module or Keras class tracks the cached function "
            "(tf.saved_model.save would export it)"
        )
    for decorator in cls.decorators:
        expr = decorator.decorator
        name = expr.func if isinstance(expr, cst.Call) else expr
        if not (
            (isinstance(name, cst.Name) and name.value == "dataclass")
            or (isinstance(name, cst.Attribute) and name.attr.value == "dataclass")
        ):
            verdict.add(f"`{cls.name.value}` has a class decorator, which may change its instances")


def _judge_copies(ctx: RuleContext, cls: cst.ClassDef, verdict: _Verdict) -> None:
    hooks = [
        s.name.value
        for s in cls.body.body
        if isinstance(s, cst.FunctionDef) and s.name.value in COPY_METHODS
    ]
    modules = sorted(name for statement in ctx.module.body for name in _imported_modules(statement))
    copied = [f"`{cls.name.value}.{h}`" for h in hooks] + [f"`import {m}`" for m in modules]
    if copied:
        verdict.add(
            f"the file copies or pickles objects ({', '.join(copied)}): a copy of an instance "
            "would share the cached function (bound to the original), and a deep copy or "
            "pickle of one fails once it holds a tf.function"
        )


def _judge_project_copies(ctx: RuleContext, verdict: _Verdict) -> None:
    place = ctx.project_writes.copies()
    if place is not None:
        verdict.add(
            f"{place} deep-copies or pickles objects: "
            "a deep copy or pickle of an instance fails once it holds a tf.function"
        )


def _imported_modules(statement: cst.CSTNode) -> Iterator[str]:
    """Top-level modules in COPY_MODULES a module-level import statement binds."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return
    for small in statement.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                root = _dotted_root(alias.name)
                if root in COPY_MODULES:
                    yield root
        elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
            root = _dotted_root(small.module)
            if root in COPY_MODULES:
                yield root


def _dotted_root(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def _form(
    ctx: RuleContext,
    site: FunctionSite,
    creation: cst.CSTNode,
    method: cst.FunctionDef,
    names: CacheNames,
) -> _Form | None:
    if isinstance(creation, cst.Decorator):
        function = site.function
        if not isinstance(function, cst.FunctionDef):
            return None
        return _Form(function, function.name.value, "def", creation)
    if not isinstance(creation, cst.Call):
        return None
    parent = ctx.parent(creation)
    if isinstance(parent, cst.Assign) and parent.value is creation:
        line = ctx.parent(parent)
        target = parent.targets[0].target if len(parent.targets) == 1 else None
        if (
            isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and isinstance(target, cst.Name)
        ):
            return _Form(line, target.value, "assign", creation)
        return None
    if isinstance(parent, cst.Call) and parent.func is creation:
        line = _plain_statement(ctx, parent, method)
        if line is None:
            return None
        used = {n.value for n in _names_in(method)}
        local = names.fresh(_local_base(_wrapped(creation)), used)
        return _Form(line, local, "call", creation)
    return None


def _plain_statement(
    ctx: RuleContext, node: cst.CSTNode, method: cst.FunctionDef
) -> cst.SimpleStatementLine | None:
    """The one-statement line directly in ``method``'s body that always evaluates ``node``
    first among its calls' side effects (no lambda, comprehension, ``if`` expression or
    short-circuit between them)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.SimpleStatementLine):
            ok = len(ancestor.body) == 1 and ctx.parent(ancestor) is method.body
            return ancestor if ok else None
        if isinstance(
            ancestor,
            (
                cst.Lambda,
                cst.IfExp,
                cst.BooleanOperation,
                cst.ListComp,
                cst.SetComp,
                cst.DictComp,
                cst.GeneratorExp,
                cst.Await,
                cst.Yield,
                cst.BaseCompoundStatement,
            ),
        ):
            return None
    return None


def _local_base(wrapped: cst.BaseExpression | None) -> str:
    if isinstance(wrapped, cst.Attribute):
        stem = wrapped.attr.value.strip("_")
    elif isinstance(wrapped, cst.Name):
        stem = wrapped.value.strip("_")
    else:
        stem = ""
    return f"{stem}_fn" if stem else "traced_fn"


def _names_in(node: cst.CSTNode) -> Iterator[cst.Name]:
    return (n for n in iter_tree(node) if isinstance(n, cst.Name))


def _bound_once(
    ctx: RuleContext, index: _Index, form: _Form, method: cst.FunctionDef, self_name: str
) -> bool:
    """The function's name and ``self`` have one binding each in the method."""
    unrecorded = _unrecorded_bindings(index, method)
    if form.name in unrecorded or self_name in unrecorded:
        return False
    scope = ctx.get_metadata(ScopeProvider, form.statement)
    if scope is None:
        return False
    own = [a for a in scope[form.name] if getattr(a, "scope", None) is scope]
    if form.kind == "call":
        if own:
            return False
    elif len(own) != 1:
        return False
    selves = [a for a in scope[self_name] if getattr(a, "scope", None) is scope]
    return len(selves) == 1 and isinstance(selves[0].node, cst.Param)


def _call_sites(
    ctx: RuleContext, index: _Index, form: _Form, method: cst.FunctionDef
) -> list[cst.Call] | None:
    """The calls of the function: every use of its name must be one (AS106 checked)."""
    if form.kind == "call":
        parent = ctx.parent(form.creation)
        return [parent] if isinstance(parent, cst.Call) else None
    calls = []
    for name in index.find(method.body, cst.Name):
        if name.value != form.name or not _is_load(ctx, name):
            continue
        parent = ctx.parent(name)
        if isinstance(parent, cst.AssignTarget) and _inside(ctx, parent, form.statement):
            continue  # name = tf.function(...)
        if isinstance(parent, cst.Call) and parent.func is name:
            if any(arg.star == "**" for arg in parent.args):
                return None  # the keyword it would get might be in there
            calls.append(parent)
        elif not (isinstance(parent, cst.FunctionDef) and parent.name is name):
            return None
    return calls


# -- what the trace reads ------------------------------------------------------------------


class _Analysis:
    """What the cached function's traces read, and whether it can change between calls."""

    def __init__(
        self,
        ctx: RuleContext,
        index: _Index,
        cls: cst.ClassDef,
        method: cst.FunctionDef,
        self_name: str,
        verdict: _Verdict,
    ) -> None:
        self.ctx = ctx
        self.index = index
        self.cls = cls
        self.method = method
        self.self_name = self_name
        self.verdict = verdict
        self.methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
        self._seen: set[int] = set()
        self._writes: dict[str, list[cst.CSTNode]] | None = None

    def creation(self, form: _Form, site: FunctionSite) -> list[str] | None:
        """Judge the creation; the method's locals a nested def closes over (None: no fix)."""
        options = form.creation.decorator if isinstance(form.creation, cst.Decorator) else None
        if isinstance(options, cst.Call) and not self._options(options):
            return None
        if form.kind == "def":
            function = site.function
            assert isinstance(function, cst.FunctionDef)
            if len(function.decorators) != 1:
                self.verdict.add("another decorator wraps the function: it may return any object")
            return self._traced(function, form.name)
        call = form.creation
        assert isinstance(call, cst.Call)
        if not self._options(call):
            return None
        wrapped = _wrapped(call)
        if isinstance(wrapped, cst.Lambda):
            return self._traced(wrapped, None)
        if isinstance(wrapped, cst.Attribute) and _is_name(wrapped.value, self.self_name):
            attr = wrapped.attr.value
            if attr in self.methods:
                self._method(self.methods[attr])
            else:
                self._attribute(attr)
            return []
        if isinstance(wrapped, cst.Name):
            return self._wrapped_name(wrapped)
        return None

    def _options(self, call: cst.Call) -> bool:
        """The creation's own arguments are evaluated once now: they must not vary.

        The wrapped function (``self._step``, a lambda) is judged as the trace instead.
        """
        wrapped = _wrapped(call)
        reads = _names_read(self.ctx, self.index, call)
        if reads is None:
            return False
        for name in reads:
            if wrapped is not None and _inside(self.ctx, name, wrapped):
                continue
            if not self._fixed_name(name):
                return False
        for attribute in self.index.find(call, cst.Attribute):
            if wrapped is not None and _inside(self.ctx, attribute, wrapped):
                continue
            if _is_name(attribute.value, self.self_name):
                self._self_use(attribute.value)  # type: ignore[arg-type]
        return True

    def _evaluated_once(self, expr: cst.CSTNode) -> bool:
        """A default value or annotation of the cached def: evaluated at its first
        creation only, it must read nothing that varies (and call nothing)."""
        if self.index.find(expr, cst.Call, cst.Lambda):
            return False
        for name in self.index.find(expr, cst.Name):
            parent = self.ctx.parent(name)
            if not (isinstance(parent, cst.Attribute) and parent.attr is name):
                if not self._fixed_name(name):
                    return False
                if name.value == self.self_name:
                    self._self_use(name)
        return True

    def _fixed_name(self, name: cst.Name) -> bool:
        """A name the creation reads that has the same value on every call."""
        if name.value == self.self_name:
            return True
        assignments = _assignments(self.ctx, name)
        if assignments is None:
            return False
        if any(not isinstance(a.scope, GlobalScope) for a in assignments):
            return False  # a local of the method: it may differ per call
        self._global(name, assignments)
        return True

    def _wrapped_name(self, name: cst.Name) -> list[str] | None:
        assignments = _assignments(self.ctx, name)
        if assignments is None:
            return None
        if assignments and all(isinstance(a.scope, GlobalScope) for a in assignments):
            self._global(name, assignments)
            definition = assignments[0].node if len(assignments) == 1 else None
            if isinstance(definition, cst.FunctionDef):
                self._traced(definition, None)
            return []
        if len(assignments) == 1 and isinstance(assignments[0].node, cst.FunctionDef):
            definition = assignments[0].node
            if self.ctx.parent(definition) is self.method.body:
                return self._traced(definition, None)  # a def of the method, made each call
        return None

    def _traced(
        self, function: cst.FunctionDef | cst.Lambda, own_name: str | None
    ) -> list[str] | None:
        """Free names of a nested def or lambda; the method's locals among them."""
        if self.index.find(function, cst.Nonlocal):
            return None  # it writes the method's locals: a parameter would not
        if not all(self._evaluated_once(e) for e in _definition_time(function)):
            return None
        closed: list[str] = []
        free = sorted(_free_loads(self.ctx, self.index, function), key=self.ctx.position)
        for name in free:
            if name.value in (own_name, self.self_name):
                if name.value == self.self_name:
                    self._self_use(name)
                continue
            assignments = _assignments(self.ctx, name)
            if assignments is None:
                return None
            if not assignments:
                continue  # a builtin
            if all(isinstance(a.scope, GlobalScope) for a in assignments):
                self._global(name, assignments)
            elif all(_inside(self.ctx, a.node, self.method) for a in assignments):
                if name.value not in closed:
                    closed.append(name.value)
            else:
                return None  # a closure of an enclosing function of the class
        self._effects(function, {n.value for n in free})
        return closed

    def _method(self, method: cst.FunctionDef) -> None:
        """A method of the class the trace runs: what it reads from its ``self``."""
        if id(method) in self._seen:
            return
        self._seen.add(id(method))
        self._elsewhere(method.name.value)  # another file may replace it (a monkeypatch)
        if method.decorators:
            self.verdict.add(f"the trace calls the decorated method `{method.name.value}`")
            return
        own = _self_parameter(method)
        roots = {own or ""}
        for name in _free_loads(self.ctx, self.index, method):
            roots.add(name.value)
            assignments = _assignments(self.ctx, name)
            if assignments and all(isinstance(a.scope, GlobalScope) for a in assignments):
                self._global(name, assignments)
        for name in self.index.find(method.body, cst.Name):
            if name.value == own and _is_load(self.ctx, name):
                self._self_use(name)
        self._effects(method, roots)

    def _self_use(self, name: cst.Name) -> None:
        parent = self.ctx.parent(name)
        if not (isinstance(parent, cst.Attribute) and parent.value is name):
            self.verdict.add("the trace hands `self` on, so it may read any attribute")
            return
        attr = parent.attr.value
        if attr in self.methods:
            self._method(self.methods[attr])
        else:
            self._attribute(attr)

    def _attribute(self, attr: str) -> None:
        """``self.<attr>`` is read at trace time: fixed only if set once, in ``__init__``."""
        writes = self._attribute_writes()
        if "*" in writes:
            self.verdict.add(
                f"the trace reads `self.{attr}` and the file sets attributes by name "
                "(setattr, vars, __dict__)"
            )
            return
        places = writes.get(attr, [])
        outside = [w for w in places if not self._in_setup(w)]
        if outside:
            line = self.ctx.position(outside[0])[0]
            self.verdict.add(f"the trace reads `self.{attr}`, which line {line} changes")
        elif not places and not self._class_level(attr):
            self.verdict.add(f"the trace reads `self.{attr}`, which `__init__` does not set")
        else:
            self._elsewhere(attr)

    def _elsewhere(self, attr: str) -> None:
        """``self.<attr>`` is set once in this file: the project's other files must not
        change it either (``predictor.threshold = 0.9`` in a training script)."""
        found = self.ctx.project_writes.changes(attr)
        if found is None:
            return  # text from stdin: no project to look in
        if found.place is not None:
            self.verdict.add(f"the trace reads `self.{attr}`, which {found.place} may change")
        elif found.unchecked:
            self.verdict.add(
                f"the trace reads `self.{attr}`, and not every file of the project could "
                "be checked for writes to it (too many, too large or unreadable)"
            )

    def _in_setup(self, node: cst.CSTNode) -> bool:
        function = self.ctx.enclosing_function(node)
        return (
            isinstance(function, cst.FunctionDef)
            and function.name.value in SETUP_METHODS
            and self.ctx.enclosing_class(function) is self.cls
            and _stores_on_own_self(node, function)
        )

    def _class_level(self, attr: str) -> bool:
        for statement in self.cls.body.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    targets = (
                        [t.target for t in small.targets]
                        if isinstance(small, cst.Assign)
                        else [small.target]
                        if isinstance(small, cst.AnnAssign)
                        else []
                    )
                    if any(isinstance(t, cst.Name) and t.value == attr for t in targets):
                        return True
        return False

    def _attribute_writes(self) -> dict[str, list[cst.CSTNode]]:
        """Attribute name -> places in the file that store, delete or mutate it."""
        if self._writes is None:
            self._writes = _attribute_writes(self.ctx, self.index)
        return self._writes

    def _global(self, name: cst.Name, assignments: list) -> None:
        if not assignments:
            return
        if len(assignments) > 1 or any(_from_elsewhere(self.ctx, a) for a in assignments):
            self.verdict.add(f"the trace reads `{name.value}`, which is bound more than once")
            return
        node = assignments[0].node
        if isinstance(node, cst.FunctionDef):
            self._helper(node)  # a def of this file the trace calls
        elif not isinstance(node, cst.ClassDef) and not isinstance(
            assignments[0], ImportAssignment
        ):
            if self._mutated(name.value):
                self.verdict.add(f"the trace reads `{name.value}`, which this file changes")

    def _helper(self, function: cst.FunctionDef) -> None:
        """A module-level def the trace calls: what it reads and does counts too."""
        if id(function) in self._seen:
            return
        self._seen.add(id(function))
        free = _free_loads(self.ctx, self.index, function)
        for name in free:
            assignments = _assignments(self.ctx, name)
            if assignments and all(isinstance(a.scope, GlobalScope) for a in assignments):
                self._global(name, assignments)
        self._effects(function, {n.value for n in free})

    def _mutated(self, root: str) -> bool:
        for store in _stores(self.index, self.ctx.module):
            if store.split(".", 1)[0] == root:
                return True
        for call in self.index.find(self.ctx.module, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS:
                path = _path(func.value)
                if path is not None and path.split(".", 1)[0] == root:
                    return True
        return False

    def _effects(self, function: cst.FunctionDef | cst.Lambda, roots: set[str]) -> None:
        """Python effects, variables and random state a trace has: the old code had them
        on every call."""
        if _changes_state(self.ctx, self.index, function, roots - {""}):
            self.verdict.add(
                "the trace has Python effects or reads changing values (print, Python "
                "random, time, stores), which the old code had on every call"
            )
        for call in self.index.find(function, cst.Call):
            for qualified in self.ctx.qualified_names(call.func):
                last = qualified.rsplit(".", 1)[-1]
                creates = last[:1].isupper() and last not in TF_CLASSES_PER_TRACE
                if creates and qualified.startswith(("tensorflow.", "keras.", "tf_keras.")):
                    self.verdict.add(
                        f"the trace creates `{self.ctx.code(call.func)}` objects, which "
                        "the old code made anew (new variables) on every call"
                    )
        draws = shape_use(self.ctx.wrapper, function, ()).random_draws
        if draws:
            self.verdict.add(
                f"the trace draws stateful random numbers ({draws[0].describe()}), from a "
                "random state of its own per trace"
            )


def _definition_time(function: cst.FunctionDef | cst.Lambda) -> Iterator[cst.CSTNode]:
    """What Python evaluates when the def statement or lambda runs: defaults (and, for a
    def, its annotations)."""
    params = function.params
    every = (*params.posonly_params, *params.params, *params.kwonly_params)
    for param in every:
        if param.default is not None:
            yield param.default
    for param in (*every, params.star_arg, params.star_kwarg):
        annotation = getattr(param, "annotation", None)
        if annotation is not None:
            yield annotation.annotation
    returns = getattr(function, "returns", None)
    if returns is not None:
        yield returns.annotation


def _is_name(node: cst.BaseExpression, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


def _attribute_paths(index: _Index, node: cst.CSTNode, self_name: str) -> list[str]:
    """``x`` for every ``<self>.x`` read in ``node``."""
    return [a.attr.value for a in index.find(node, cst.Attribute) if _is_name(a.value, self_name)]


def _stores_on_own_self(node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """A write in ``__init__`` that goes to its own ``self`` (not to another object)."""
    own = _self_parameter(function)
    root = node
    while isinstance(root, (cst.Attribute, cst.Subscript)):
        root = root.value
    return isinstance(root, cst.Name) and root.value == own


def _attribute_writes(ctx: RuleContext, index: _Index) -> dict[str, list[cst.CSTNode]]:
    """Every attribute the file may change, by name: stores, deletions, item stores and
    mutating calls on an attribute path (``a.b.c = 1`` changes what ``.b`` and ``.c``
    lead to). ``"*"``: the file uses setattr/vars/__dict__ (any attribute)."""
    writes: dict[str, list[cst.CSTNode]] = {}

    def note(target: cst.BaseExpression) -> None:
        node: cst.BaseExpression = target
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            if isinstance(node, cst.Attribute):
                writes.setdefault(node.attr.value, []).append(target)
            node = node.value

    for target in _write_targets(index, ctx.module):
        for part in [target, *index.find(target, cst.Attribute, cst.Subscript)]:
            if isinstance(part, (cst.Attribute, cst.Subscript)):
                note(part)
    for call in index.find(ctx.module, cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS:
            note(func.value)
    for name in index.find(ctx.module, cst.Name):
        if name.value in REFLECTION:
            writes.setdefault("*", []).append(name)
    return writes


def _write_targets(index: _Index, node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    for assign in index.find(node, cst.Assign):
        yield from (t.target for t in assign.targets)
    for found in index.find(node, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor):
        yield found.target
    for name in index.find(node, cst.AsName):
        yield name.name  # type: ignore[misc]
    for deletion in index.find(node, cst.Del):
        yield deletion.target
    for walrus in index.find(node, cst.NamedExpr):
        yield walrus.target


# -- the edits -------------------------------------------------------------------------------


def _edits(
    ctx: RuleContext,
    form: _Form,
    method: cst.FunctionDef,
    cls: cst.ClassDef,
    self_name: str,
    closed: list[str],
    calls: list[cst.Call],
    names: CacheNames,
) -> dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement]]:
    attribute = names.fresh(
        f"{CACHE_PREFIX}{cls.name.value}_{method.name.value.strip('_')}_{form.name.strip('_')}"
    )
    config = ctx.module.config_for_parsing
    local = form.name
    lookup = cst.parse_statement(
        f'{local} = getattr({self_name}, "{attribute}", None)\n', config=config
    )
    keep = cst.parse_statement(f"{self_name}.{attribute} = {local}\n", config=config)
    statement = form.statement
    edits: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement]] = {}
    if form.kind == "def":
        assert isinstance(statement, cst.FunctionDef)
        inner_calls = [c for c in calls if _inside(ctx, c, statement)]
        create: cst.BaseStatement = statement.visit(_AddKeywords(closed, inner_calls))  # type: ignore[assignment]
        create = create.with_changes(params=_with_keyword_only(create.params, closed))  # type: ignore[attr-defined]
        for call in calls:
            if call not in inner_calls and closed:
                edits[call] = _add_keywords(call, closed)
        after = statement
    elif form.kind == "assign":
        create = statement
        after = statement
    else:
        create = cst.parse_statement(f"{local} = placeholder\n", config=config)
        assign = create.body[0]  # type: ignore[attr-defined]
        create = create.with_changes(body=[assign.with_changes(value=form.creation)])  # type: ignore[attr-defined]
        after = statement.deep_replace(form.creation, cst.Name(local))  # type: ignore[assignment]
    leading = statement.leading_lines
    create = create.with_changes(leading_lines=())  # type: ignore[attr-defined]
    block = cst.If(
        test=cst.parse_expression(f"{local} is None"),
        body=cst.IndentedBlock(body=[create, keep]),
    )
    parts: list[cst.BaseStatement] = [lookup.with_changes(leading_lines=leading), block]  # type: ignore[list-item]
    if form.kind == "call":
        parts.append(after.with_changes(leading_lines=()))  # type: ignore[attr-defined]
    edits[statement] = cst.FlattenSentinel(parts)
    return edits


def _with_keyword_only(params: cst.Parameters, names: list[str]) -> cst.Parameters:
    if not names:
        return params
    star = params.star_arg
    if not isinstance(star, (cst.Param, cst.ParamStar)):
        star = cst.ParamStar()
    extra = [cst.Param(cst.Name(n)) for n in names]
    return params.with_changes(star_arg=star, kwonly_params=[*params.kwonly_params, *extra])


def _add_keywords(call: cst.Call, names: list[str]) -> cst.Call:
    args = list(call.args)
    if args and isinstance(args[-1].comma, cst.Comma):
        pass  # a trailing comma stays where it is: the new arguments follow it
    extra = [
        cst.Arg(
            value=cst.Name(n),
            keyword=cst.Name(n),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""),
                whitespace_after=cst.SimpleWhitespace(""),
            ),
        )
        for n in names
    ]
    return call.with_changes(args=[*args, *extra])


class _AddKeywords(cst.CSTTransformer):
    """Pass the closed-over locals to the calls inside the def (recursion)."""

    def __init__(self, names: list[str], calls: list[cst.Call]) -> None:
        super().__init__()
        self.names = names
        self.calls = {id(c) for c in calls}

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if id(original_node) in self.calls and self.names:
            return _add_keywords(updated_node, self.names)
        return updated_node
