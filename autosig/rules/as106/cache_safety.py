"""Whether a tf.function cached on the instance still sees what each call's new one saw.

The old code traced anew on every call, so each trace read the Python values the
function reads at that call; the function ``cache.py`` caches on the instance reads
them at its first trace only. ``CachedTrace`` follows what the trace reads (through
``self``, the methods of the class it calls, the module-level names and defs it reads)
and records in a ``Verdict`` every reason it could differ: an attribute assigned outside
``__init__`` (in this file or, ``analysis/project_writes``, another file of the
project), a global rebound or mutated, Python effects or changing values, stateful
random draws, variables or Keras objects created per trace, a base class, copies or
pickles of instances. An empty verdict makes the fix safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import GlobalScope, ImportAssignment

from autosig.analysis.attribute_writes import MUTATORS
from autosig.analysis.module_view import ModuleView
from autosig.analysis.shape_reads import shape_use
from autosig.analysis.trace_state import StateRead, attribute_change, settings_reason
from autosig.rules.as106.hoist import (
    _assignments,
    _changes_state,
    _free_loads,
    _from_elsewhere,
    _Index,
    _is_load,
    _names_read,
    _path,
    _stores,
    _wrapped,
)
from autosig.rules.file_context import FileContext
from autosig.source.discover import FunctionSite

SETUP_METHODS = frozenset({"__init__"})
"""Where an attribute may be assigned and still count as fixed for the instance."""

REFLECTION = frozenset({"setattr", "delattr", "vars", "__dict__", "__setattr__", "__delattr__"})
"""Names that write attributes without naming them: any of them makes every read unsure."""

TF_CLASSES_PER_TRACE = frozenset(
    {"TensorArray", "TensorSpec", "TensorShape", "RaggedTensorSpec", "SparseTensorSpec"}
    | {"GradientTape", "SparseTensor", "IndexedSlices", "DType", "IndexedSlicesSpec"}
)
"""TensorFlow classes a trace may construct: graph values, not variables or Keras objects."""

COPY_METHODS = frozenset(
    {"__copy__", "__deepcopy__", "__getstate__", "__setstate__", "__reduce__", "__reduce_ex__"}
)
COPY_MODULES = frozenset({"copy", "pickle", "cloudpickle", "dill", "joblib", "copyreg"})
"""A copy of an instance shares its cached function (bound to the original ``self``), and
a deep copy or pickle of one fails once it holds a tf.function: where the class or its
module copies or pickles, the fix is unsafe."""


@dataclass
class CreationForm:
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
class Verdict:
    """What the analysis found: reasons the fix is unsafe (empty: safe)."""

    unsafe: list[str] = field(default_factory=list)

    def add(self, reason: str) -> None:
        if reason not in self.unsafe:
            self.unsafe.append(reason)


def judge_class(cls: cst.ClassDef, verdict: Verdict) -> None:
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


def judge_copies(ctx: FileContext, cls: cst.ClassDef, verdict: Verdict) -> None:
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


def judge_project_copies(ctx: FileContext, verdict: Verdict) -> None:
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


def self_parameter(method: cst.FunctionDef) -> str | None:
    params = method.params
    first = (*params.posonly_params, *params.params)
    return first[0].name.value if first else None


# -- what the trace reads ------------------------------------------------------------------


class CachedTrace:
    """What the cached function's traces read, and whether it can change between calls."""

    def __init__(
        self,
        ctx: FileContext,
        index: _Index,
        cls: cst.ClassDef,
        method: cst.FunctionDef,
        self_name: str,
        verdict: Verdict,
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
        self._module_view: ModuleView | None = None

    def creation(self, form: CreationForm, site: FunctionSite) -> list[str] | None:
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
            if wrapped is not None and self.ctx.is_within(name, wrapped):
                continue
            if not self._fixed_name(name):
                return False
        for attribute in self.index.find(call, cst.Attribute):
            if wrapped is not None and self.ctx.is_within(attribute, wrapped):
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
            elif all(self.ctx.is_within(a.node, self.method) for a in assignments):
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
        own = self_parameter(method)
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
            return
        self._attribute(attr)
        self._through(attr, parent)

    def _through(self, attr: str, read: cst.Attribute) -> None:
        """What ``self.<attr>`` leads to: the module variable ``__init__`` binds it to
        (``self.config = CONFIG``, changed by a scheduler), and an attribute read through
        it (``self.settings.threshold``, set by a driver), changed anywhere in the project
        but an object's own set-up."""
        view = self._view()
        change = attribute_change(
            view, self.cls, attr, self.ctx.project_writes, self._display(), only="alias"
        )
        if change is not None:
            self.verdict.add(
                f"the trace reads `self.{attr}`, bound to `{change.alias}`, which "
                f"{change.place} {change.how}"
            )
        else:
            self._settings(attr, read)
        parent = self.ctx.parent(read)
        if isinstance(parent, cst.Attribute) and parent.value is read:
            grand = self.ctx.parent(parent)
            if isinstance(grand, cst.Call) and grand.func is parent:
                return  # a method call on the object: its own business
            path = f"{attr}.{parent.attr.value}"
            change = attribute_change(
                view, self.cls, path, self.ctx.project_writes, self._display(), only="member"
            )
            if change is not None:
                self.verdict.add(
                    f"the trace reads `self.{path}`, which {change.place} {change.how}"
                )
            else:
                self._settings(path, read)

    def _settings(self, path: str, read: cst.Attribute) -> None:
        """Settings code outside the project may change (``trace_state.settings_reads``):
        a module dict the instance holds, another object's attribute."""
        line = self.ctx.position(read)[0]
        state = StateRead(f"self.{path}", line, "", "attribute", path, self._view(), self.cls)
        reason = settings_reason([state])
        if reason is not None:
            self.verdict.add(reason.replace("it reads settings", "the trace reads settings", 1))

    def _view(self) -> ModuleView:
        if self._module_view is None:
            self._module_view = ModuleView(self.ctx.wrapper, self.ctx.project_modules)
        return self._module_view

    def _display(self) -> str:
        return Path(self.ctx.path).name

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
        draws = shape_use(ModuleView(self.ctx.wrapper), function, ()).random_draws
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


def _stores_on_own_self(node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """A write in ``__init__`` that goes to its own ``self`` (not to another object)."""
    own = self_parameter(function)
    root = node
    while isinstance(root, (cst.Attribute, cst.Subscript)):
        root = root.value
    return isinstance(root, cst.Name) and root.value == own


def _attribute_writes(ctx: FileContext, index: _Index) -> dict[str, list[cst.CSTNode]]:
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
