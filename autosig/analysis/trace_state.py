"""Python state the traced code reads while tracing, and where the project changes it.

Python code in a tf.function runs while TensorFlow traces it: a module global
(``TEMPERATURE``), an attribute (``self.settings.threshold``) or another module's
variable (``hparams.LABEL_SMOOTHING``) that it reads is baked into the graph. The
original retraced for every new shape and read the value anew at each of those traces;
a fix that stops retracing (a signature, ``reduce_retracing``, a per-instance cache, a
hoist) keeps the value of the first trace. That changes results only where something
changes the value between calls, so this module looks for such writes in the project:
in the syntax trees of the modules the analysis parsed (a setter rebinding the global
through ``global``, a scheduler mutating a module dict, a method assigning the
attribute) and, through ``analysis/project_writes``, in the tokens of the project's
other files (a driver assigning ``model.PHASE`` or ``detector.settings.threshold``).
An attribute bound in ``__init__`` to a module global (``self.config = CONFIG``) is
followed to that global (one alias level): a change to the dict is a change to what
``self.config`` reads.

The reads are collected by the shape-use walk (``shape_reads``), which already follows
the traced code into every project function it runs. Writes by the traced code itself
(``self.steps += 1`` in the step) are AS103's finding, not this one's; writes that set
up an object (its own ``__init__``, a Keras layer's ``build``) and module-level
initialisation of the traced module are not changes. What cannot be seen: writes from
outside the project (a notebook, a driver in another repository) and through aliases
deeper than one level.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import libcst as cst
from libcst.metadata import QualifiedNameSource

from autosig.analysis.attribute_writes import MUTATING_FUNCTIONS, MUTATING_METHODS
from autosig.analysis.module_view import Env, ModuleView, ProjectClass
from autosig.analysis.project_writes import OtherFiles
from autosig.source.metadata import children

StateKind = Literal["global", "imported", "attribute"]
"""``global``: a module-level variable read through its module (``TEMPERATURE``,
``hparams.X``): rebinding it changes what the trace reads; ``imported``: one read
through ``from m import X`` (only changes to the object reach it); ``attribute``: an
attribute path of ``self`` (``config`` or ``settings.threshold``)."""

SETUP_METHODS = frozenset({"__init__", "build"})
"""Methods whose writes to their own ``self`` set the object up before it is used."""


@dataclass(frozen=True)
class StateRead:
    """Python state the traced code reads while tracing."""

    code: str
    line: int
    via: str
    kind: StateKind
    name: str
    """The global's name, or the attribute path (``config``, ``settings.threshold``)."""
    view: ModuleView = field(compare=False, repr=False)
    """The module the global is in, or the class's module."""
    cls: cst.ClassDef | None = field(default=None, compare=False, repr=False)
    item: bool = False
    """Read by subscript (``self.options["clip"]``): an item of a container it holds."""

    def describe(self) -> str:
        where = f"line {self.line}" + (f", in {self.via}" if self.via else "")
        return f"`{self.code}` ({where})"


@dataclass(frozen=True)
class StateChange:
    """A read whose value the project changes somewhere."""

    read: StateRead
    place: str
    """``model.py:7``, ``train.py:12``."""
    how: str
    alias: str = ""
    """The global an attribute is bound to (``CONFIG`` for ``self.config``)."""

    def describe(self) -> str:
        bound = f", bound to `{self.alias}`," if self.alias else ","
        return f"{self.read.describe()}{bound} which {self.place} {self.how}"


STATE_REASON = (
    "it reads Python state while tracing that the project changes ({changes}): each "
    "trace keeps the value it read, so tracing fewer times keeps an old value"
)


def state_reason(changes: list[StateChange]) -> str | None:
    """The reason a fix that traces fewer times is unsafe (None: no change found)."""
    if not changes:
        return None
    shown = "; ".join(c.describe() for c in changes[:2])
    if len(changes) > 2:
        shown += f"; and {len(changes) - 2} more"
    return STATE_REASON.format(changes=shown)


SETTINGS_REASON = (
    "it reads settings while tracing ({reads}) that code outside the project (a driver, "
    "a notebook, a tuning harness) may change between calls: each trace keeps the value "
    "it read, so tracing fewer times keeps an old value"
)

OBJECT_ATTRIBUTES = frozenset(
    {
        # tf.Module, Keras layers and models: variables, structure, dtype, build state
        "trainable_variables",
        "non_trainable_variables",
        "variables",
        "trainable_weights",
        "non_trainable_weights",
        "weights",
        "submodules",
        "layers",
        "losses",
        "metrics",
        "dtype",
        "compute_dtype",
        "variable_dtype",
        "dtype_policy",
        "built",
        "trainable",
        "input",
        "output",
        "inputs",
        "outputs",
        "input_shape",
        "output_shape",
        "name",
        "kernel",
        "bias",
        "embeddings",
        "moving_mean",
        "moving_variance",
        "gamma",
        "beta",
        # optimizers (their hyperparameters are variables the graph reads at run time)
        "iterations",
        "learning_rate",
        "lr",
        # tensors and variables
        "shape",
        "device",
        "graph",
        "op",
    }
)
"""Attributes of TensorFlow and Keras objects read through another object
(``self.model.trainable_variables``, ``self.optimizer.iterations``): variables the graph
reads when it runs, or structure set up once; not settings."""


def settings_reads(reads: list[StateRead]) -> list[StateRead]:
    """The reads of settings code outside the project may change between calls, which
    no scan of the project can rule out (the contract cases of class 22, changed by a
    harness): an attribute of another object the instance holds (``self.settings.
    threshold``, a plain settings object), a module-level dict, list or set the
    instance holds (``self.config = CONFIG`` read as ``self.config["scale"]``), and an
    item of a container it was handed (``self.options["clip"]``, ``self.options =
    options`` in ``__init__``; review7: the driver changed the dict between calls). Not: the
    instance's own attributes and the module's own names (weights, kernels, models,
    constants: what a fix may keep), nor TensorFlow and Keras attributes
    (``OBJECT_ATTRIBUTES``). Globals of other modules (``config.SCALE``) are judged where
    the fixes are (``infer/guarded_trace.state_blockers``)."""
    out = []
    for read in reads:
        if read.kind != "attribute":
            continue
        parts = read.name.split(".")
        if parts[-1] in OBJECT_ATTRIBUTES:
            continue
        if len(parts) > 1:
            out.append(read)
            continue
        values = _bound_values(read)
        if (read.item and not _set_up_here(values)) or _held_container(values):
            out.append(read)
    return out


def settings_reason(reads: list[StateRead]) -> str | None:
    """The reason a fix that traces fewer times is unsafe because of ``settings_reads``."""
    found = settings_reads(reads)
    if not found:
        return None
    shown = ", ".join(r.describe() for r in found[:2])
    return SETTINGS_REASON.format(reads=shown)


CONTAINERS = (cst.Dict, cst.List, cst.Set, cst.DictComp, cst.ListComp, cst.SetComp)


def _bound_values(read: StateRead) -> list[tuple[cst.BaseExpression, Env]]:
    """What the class binds ``self.<a>`` (the read's first attribute) to, and where."""
    if read.cls is None:
        return []
    cls = ProjectClass(read.view, read.cls)
    return read.view.attribute_values(cls, read.name.split(".")[0])


def _set_up_here(values: list[tuple[cst.BaseExpression, Env]]) -> bool:
    """Every value the class binds ``self.<a>`` to is made there (a display, a call):
    not an object the caller handed it, which the caller may go on changing. (Another
    file changing it through the instance is ``state_changes``' to find.)"""
    return bool(values) and all(
        isinstance(value, (*CONTAINERS, cst.Call, cst.Tuple, cst.SimpleString, cst.Integer))
        or (isinstance(value, cst.Name) and env.local is None)
        for value, env in values
    )


def _held_container(values: list[tuple[cst.BaseExpression, Env]]) -> bool:
    """``self.<a>`` bound in the class to a module-level dict, list or set display."""
    for value, env in values:
        target = _global_of(value, env)
        if target is None:
            continue
        view, variable = target
        if any(_is_container(bound) for bound in view.bindings(variable)):
            return True
    return False


def _is_container(value: cst.BaseExpression) -> bool:
    if isinstance(value, CONTAINERS):
        return True
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value in ("dict", "list", "set")
    )


def state_changes(
    reads: list[StateRead],
    root: ModuleView,
    walked: set[int],
    project: OtherFiles | None,
    display: str,
) -> list[StateChange]:
    """The reads whose value the project changes, each with the first place found.

    ``root`` is the traced function's module (shown as ``display``); ``walked`` the ids of
    the defs the analysis walked (their own writes are the traced code's: AS103's);
    ``project`` the project's other files (None: text from stdin).
    """
    finder = _Finder(root, walked, project, display)
    out: list[StateChange] = []
    seen: set[tuple[str, str]] = set()
    for read in reads:
        change = finder.change(read)
        if change is not None and (read.code, change.place) not in seen:
            seen.add((read.code, change.place))
            out.append(change)
    return out


@dataclass
class _Place:
    line: int
    function: cst.FunctionDef | None


@dataclass
class _ModuleWrites:
    """What one module's code changes, from its syntax tree."""

    rebinds: dict[str, list[_Place]] = field(default_factory=dict)
    """Module names rebound after their first binding (``global`` in a def, or a
    second module-level assignment)."""
    mutations: dict[str, list[_Place]] = field(default_factory=dict)
    """Names whose object a def changes in place (``CFG["k"] = 1``, ``CFG.update()``)."""
    attributes: dict[str, list[_Place]] = field(default_factory=dict)
    """Attribute names stored, deleted or changed in place on any object, but an
    object's own set-up (``__init__``/``build`` on its own ``self``)."""


class _Finder:
    def __init__(
        self, root: ModuleView, walked: set[int], project: OtherFiles | None, display: str
    ) -> None:
        self.root = root
        self.walked = walked
        self.project = project
        self.display = display
        self._writes: dict[int, _ModuleWrites] = {}

    def writes(self, view: ModuleView) -> _ModuleWrites:
        found = self._writes.get(id(view))
        if found is None:
            found = self._writes[id(view)] = _Scanner(view).scan()
        return found

    def where(self, view: ModuleView, place: _Place) -> str:
        return f"{self._file(view)}:{place.line}"

    def _file(self, view: ModuleView) -> str:
        if view is self.root or not view.name:
            return self.display
        path_of = getattr(view.modules, "path_of", None)
        path = path_of(view.name) if path_of is not None else None
        origin = getattr(self.root.modules, "origin", None)
        if isinstance(path, Path) and isinstance(origin, Path):
            try:
                return path.relative_to(origin.parent).as_posix()
            except ValueError:
                return path.name
        return view.name.replace(".", "/") + ".py"

    def _first(self, view: ModuleView, places: list[_Place]) -> str | None:
        for place in places:
            if place.function is None or id(place.function) not in self.walked:
                return self.where(view, place)
        return None

    def _elsewhere(self, name: str) -> str | None:
        if self.project is None:
            return None
        found = self.project.changes(name)
        return found.place if found is not None else None

    def change(self, read: StateRead) -> StateChange | None:
        if read.kind == "attribute":
            return self._attribute(read)
        return self._global(read, read.view, read.name, read.kind == "imported")

    def _global(
        self, read: StateRead, view: ModuleView, name: str, objects_only: bool, alias: str = ""
    ) -> StateChange | None:
        """A module-level variable ``name`` of ``view``: rebound (unless only its object
        is shared) or changed in place, in its module, in the traced module (through the
        module's name) or in another file of the project."""
        own = self.writes(view)
        if not objects_only:
            place = self._first(view, own.rebinds.get(name, []))
            if place is not None:
                return StateChange(read, place, "rebinds", alias)
        place = self._first(view, own.mutations.get(name, []))
        if place is not None:
            return StateChange(read, place, "changes", alias)
        if view is not self.root:
            place = self._first(self.root, self.writes(self.root).attributes.get(name, []))
            if place is not None:
                return StateChange(read, place, "changes", alias)
        place = self._elsewhere(name)
        if place is not None:
            return StateChange(read, place, "may change", alias)
        return None

    def _attribute(self, read: StateRead) -> StateChange | None:
        """``self.<a>`` or ``self.<a>.<b>``: a write of either attribute outside an
        object's set-up; and ``<a>``'s value when ``__init__`` binds it to a global."""
        for attribute in reversed(read.name.split(".")):
            change = self.member(read, attribute)
            if change is not None:
                return change
        return self.alias(read)

    def member(self, read: StateRead, attribute: str) -> StateChange | None:
        """A write of ``attribute`` (one part of the read's path) outside set-up."""
        verb = "changes"
        place = self._first(read.view, self.writes(read.view).attributes.get(attribute, []))
        if place is None:
            place, verb = self._elsewhere(attribute), "may change"
        if place is None:
            return None
        last = read.name.rsplit(".", 1)[-1]
        how = verb if attribute == last else f"{verb} through `.{attribute}`"
        return StateChange(read, place, how)

    def alias(self, read: StateRead) -> StateChange | None:
        """``self.<a>`` bound in the class to a module variable: that object's changes."""
        parts = read.name.split(".")
        if read.cls is None:
            return None
        cls = ProjectClass(read.view, read.cls)
        for value, env in read.view.attribute_values(cls, parts[0]):
            target = _global_of(value, env)
            if target is None:
                continue
            view, name = target
            change = self._global(read, view, name, True, name)
            if change is not None:
                return change
        return None


def attribute_change(
    view: ModuleView,
    cls: cst.ClassDef,
    path: str,
    project: OtherFiles | None,
    display: str,
    walked: set[int] | None = None,
    *,
    only: Literal["alias", "member"] | None = None,
) -> StateChange | None:
    """Where the project changes what ``self.<path>`` of an instance of ``cls`` reads
    (``path``: ``a`` or ``a.b``). ``only="alias"``: only through the module variable the
    class binds ``self.<a>`` to; ``only="member"``: only writes of the last attribute.
    For AS106's per-instance cache, which judges ``self.<a>`` itself."""
    read = StateRead(f"self.{path}", 0, "", "attribute", path, view, cls)
    finder = _Finder(view, walked or set(), project, display)
    if only == "alias":
        return finder.alias(read)
    if only == "member":
        return finder.member(read, path.rsplit(".", 1)[-1])
    return finder.change(read)


def _global_of(value: cst.BaseExpression, env: Env) -> tuple[ModuleView, str] | None:
    """The module-level variable an expression names (an alias of it), if any."""
    view = env.view
    if not isinstance(value, (cst.Name, cst.Attribute)):
        return None
    if isinstance(value, cst.Name) and env.local is not None and env.local(value.value) is not None:
        return None  # a parameter or local of the method: the caller's object
    for qualified, source in view.names(value):
        if source is QualifiedNameSource.LOCAL and "." not in qualified:
            if view.bindings(qualified):
                return view, qualified
        elif source is QualifiedNameSource.IMPORT:
            module, _, name = qualified.rpartition(".")
            other = view.other(module, name) if module else None
            if other is not None and other.bindings(name):
                return other, name
    return None


# -- one module's writes, from its syntax tree -------------------------------------------


class _Scanner:
    """Collects one module's writes (``_ModuleWrites``)."""

    def __init__(self, view: ModuleView) -> None:
        self.view = view
        self.found = _ModuleWrites()
        self.bound: set[str] = set()

    def scan(self) -> _ModuleWrites:
        for statement in self.view.module.body:
            self._module_statement(statement)
        return self.found

    def _module_statement(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.FunctionDef):
            self._function(statement, None)
            return
        if isinstance(statement, cst.ClassDef):
            if isinstance(statement.body, cst.IndentedBlock):
                for item in statement.body.body:
                    if isinstance(item, cst.FunctionDef):
                        self._function(item, statement)
            return
        for node in _own(statement):
            for target in _targets(node):
                if isinstance(target, cst.Name):
                    if target.value in self.bound:
                        place = _Place(self.view.line(target), None)
                        self.found.rebinds.setdefault(target.value, []).append(place)
                    self.bound.add(target.value)
                else:
                    self._chain(target, self.view.line(target), None)
            if isinstance(node, cst.Call):
                self._call(node, None)

    def _function(self, function: cst.FunctionDef, cls: cst.ClassDef | None) -> None:
        declared = {
            name.name.value
            for node in _own(function.body)
            if isinstance(node, cst.Global)
            for name in node.names
        }
        params = function.params
        local = {
            p.name.value
            for p in (
                *params.posonly_params,
                *params.params,
                *params.kwonly_params,
                params.star_arg,
                params.star_kwarg,
            )
            if isinstance(p, cst.Param)
        }
        for node in _own(function.body):
            for target in _targets(node):
                if isinstance(target, cst.Name) and target.value not in declared:
                    local.add(target.value)
        setup_self = None
        if cls is not None and function.name.value in SETUP_METHODS:
            own = (*params.posonly_params, *params.params)
            setup_self = own[0].name.value if own else None
        for node in _own(function.body):
            for target in _targets(node):
                if isinstance(target, cst.Name):
                    if target.value in declared:
                        place = _Place(self.view.line(target), function)
                        self.found.rebinds.setdefault(target.value, []).append(place)
                else:
                    self._chain(target, self.view.line(target), function, local, setup_self)
            if isinstance(node, cst.Call):
                self._call(node, function, local, setup_self)
        for nested in _nested_defs(function.body):
            self._function(nested, None)

    def _chain(
        self,
        target: cst.BaseExpression,
        line: int,
        function: cst.FunctionDef | None,
        local: set[str] | None = None,
        setup_self: str | None = None,
    ) -> None:
        """A store, deletion or in-place change through ``a.b[k].c``: attributes ``b``
        and ``c`` change, and, in a def, ``a``'s object (unless ``a`` is its local)."""
        node = target
        attributes: list[str] = []
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            if isinstance(node, cst.Attribute):
                attributes.append(node.attr.value)
            node = node.value
        root = node.value if isinstance(node, cst.Name) else None
        for index, attribute in enumerate(attributes):
            if root is not None and root == setup_self and index == len(attributes) - 1:
                continue  # self.<attr> = ... in __init__/build: the object's own set-up
            self.found.attributes.setdefault(attribute, []).append(_Place(line, function))
        if root is not None and local is not None and root not in local:
            self.found.mutations.setdefault(root, []).append(_Place(line, function))

    def _call(
        self,
        call: cst.Call,
        function: cst.FunctionDef | None,
        local: set[str] | None = None,
        setup_self: str | None = None,
    ) -> None:
        """``x.items.append(1)``, ``CFG.update(...)``, ``setattr(obj, "name", v)``,
        ``random.shuffle(x.order)``: changes in place, like a store into an item."""
        func = call.func
        line = self.view.line(call)
        changed: cst.BaseExpression | None = None
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATING_METHODS:
            changed = func.value
        else:
            name = func.attr.value if isinstance(func, cst.Attribute) else None
            if isinstance(func, cst.Name):
                name = func.value
            if name == "setattr" and len(call.args) >= 2:
                literal = call.args[1].value
                attribute = (
                    literal.evaluated_value if isinstance(literal, cst.SimpleString) else None
                )
                if isinstance(attribute, str):
                    place = _Place(line, function)
                    self.found.attributes.setdefault(attribute, []).append(place)
                return
            if name in MUTATING_FUNCTIONS and call.args:
                changed = call.args[0].value
        if isinstance(changed, (cst.Name, cst.Attribute, cst.Subscript)):
            item = cst.Subscript(
                value=changed, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))]
            )
            self._chain(item, line, function, local, None)


def _targets(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """What a statement node binds, stores into or deletes."""
    if isinstance(node, cst.Assign):
        for target in node.targets:
            yield from target_leaves(target.target)
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        if not isinstance(node, cst.AnnAssign) or node.value is not None:
            yield from target_leaves(node.target)
    elif isinstance(node, (cst.For, cst.CompFor)):
        yield from target_leaves(node.target)
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        yield from target_leaves(node.asname.name)  # type: ignore[arg-type]
    elif isinstance(node, cst.Del):
        yield from target_leaves(node.target)
    elif isinstance(node, cst.NamedExpr):
        yield from target_leaves(node.target)


def target_leaves(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The names, attributes and subscripts an assignment target binds (through tuples,
    lists and starred elements)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_leaves(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_leaves(target.value)
    else:
        yield target


def _own(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and the nodes below it, not entering nested defs, lambdas or classes."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in children(current):
            if not isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                stack.append(child)


def _nested_defs(node: cst.CSTNode) -> Iterator[cst.FunctionDef]:
    stack = list(children(node))
    while stack:
        current = stack.pop()
        if isinstance(current, cst.FunctionDef):
            yield current
            continue
        if isinstance(current, (cst.Lambda, cst.ClassDef)):
            continue
        stack.extend(children(current))
