"""One module of the user's project as the static analyses read it, and what its names are.

The shape-use analysis follows traced code into the project code it runs: a helper
function, a method reached through ``self``, a project Keras layer inside
``keras.Sequential([...])``, a model held in an attribute (``self.actor =
GaussianActor(...)`` in ``__init__``, then ``self.actor(states)``), a loss object whose
class is in another module, ``Geometry.pairwise(points)`` after ``from geometry import
Geometry``. ``ModuleView`` indexes one parsed module (its classes, defs, module-level
bindings and imports, through libcst's qualified names) and ``resolve`` says what an
expression is bound to (``Bound``): a project function, class or instance, a Keras model
of known layers, a TensorFlow or other library object by qualified name, or nothing
known. The project's other modules are parsed on demand (``ModuleResolver``), never
imported.

Resolution is deliberately narrow: a name bound more than once to different things, a
parameter, or an attribute set in several places to different values resolves to
nothing (the callers then assume what they assume of code outside the project).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameSource

from autosig.analysis.python_values import short_code, target_names
from autosig.source.metadata import PositionProvider, children, qualified_names
from autosig.source.project_modules import ModuleResolver

LIBRARY_ROOTS = ("tensorflow", "keras", "tf_keras")
"""Top-level packages whose objects the analyses know by qualified name."""

KERAS_PREFIXES = ("keras.", "tensorflow.keras.", "tf_keras.", "tensorflow.compat.v1.keras.")

SEQUENTIAL = frozenset(
    {"keras.Sequential", "keras.models.Sequential", "keras.src.models.Sequential"}
)
FUNCTIONAL = frozenset({"keras.Model", "keras.models.Model", "keras.src.models.Model"})
KERAS_INPUT = frozenset({"keras.Input", "keras.layers.Input"})

MAX_RESOLVE_DEPTH = 8
"""How many bindings resolution follows (``a = b``, ``b = C()``, ...)."""


def keras_name(name: str) -> str:
    """``tensorflow.keras.losses.X`` / ``tf_keras.losses.X`` -> ``keras.losses.X``."""
    for prefix in KERAS_PREFIXES:
        if name.startswith(prefix):
            return "keras." + name[len(prefix) :]
    return name


def library_name(name: str) -> str:
    """A library object's name in one spelling: Keras under ``keras.``, TensorFlow's
    ``compat.v2`` under ``tensorflow.``."""
    name = keras_name(name)
    if name.startswith("tensorflow.compat.v2."):
        return "tensorflow." + name.removeprefix("tensorflow.compat.v2.")
    return name


# -- what an expression is bound to --------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ProjectFunction:
    """A def of the project (a module-level function or a method)."""

    view: ModuleView
    node: cst.FunctionDef
    owner: cst.ClassDef | None = None
    """The class the def is a method of."""

    @property
    def kind(self) -> str:
        """``staticmethod``, ``classmethod``, ``property`` or ``function`` (plain/method)."""
        for decorator in self.node.decorators:
            expr = decorator.decorator
            name = expr.value if isinstance(expr, cst.Name) else ""
            if name in ("staticmethod", "classmethod", "property"):
                return name
        return "function"


@dataclass(frozen=True, eq=False)
class ProjectClass:
    view: ModuleView
    node: cst.ClassDef


@dataclass(frozen=True, eq=False)
class ProjectInstance:
    """An object made by calling a project class (``GaussianActor(2)``)."""

    cls: ProjectClass


@dataclass(frozen=True)
class LibraryObject:
    """A function or class of TensorFlow, Keras or another library, by qualified name."""

    name: str


@dataclass(frozen=True)
class LibraryInstance:
    """What calling library object ``name`` returned (``tf.GradientTape()``, a Keras
    loss object, ``tf.TensorArray(...)``)."""

    name: str


@dataclass(frozen=True, eq=False)
class LayerStack:
    """A Keras ``Sequential`` or functional model built in the project: the layers a
    call runs, in order, each with whether it gets the model's input as it is."""

    layers: tuple[tuple[Bound, bool], ...]


@dataclass(frozen=True, eq=False)
class ProjectModule:
    view: ModuleView


Bound = (
    ProjectFunction
    | ProjectClass
    | ProjectInstance
    | LibraryObject
    | LibraryInstance
    | LayerStack
    | ProjectModule
)


LocalValues = Callable[[str], "list[cst.BaseExpression] | None"]
"""A function's own name -> the values bound to it there ([] for a parameter or a
binding that cannot be read); None when the name is not the function's own."""


@dataclass(frozen=True)
class Env:
    """Where an expression is resolved: its module, the function it is in (its locals),
    and the class whose instance ``self`` is there."""

    view: ModuleView
    local: LocalValues | None = None
    self_name: str | None = None
    self_class: ProjectClass | None = None


def is_stub(function: cst.FunctionDef) -> bool:
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


def first_param(function: cst.FunctionDef) -> str | None:
    params = (*function.params.posonly_params, *function.params.params)
    return params[0].name.value if params else None


class ModuleView:
    """One parsed module: its defs, classes, module-level bindings and imports."""

    def __init__(
        self, wrapper: MetadataWrapper, modules: ModuleResolver | None = None, name: str = ""
    ) -> None:
        self.wrapper = wrapper
        self.modules = modules
        self.name = name
        """The module's dotted name when it was reached through an import ('' for the first)."""
        self.module = wrapper.module
        self._others: dict[tuple[str, str | None], ModuleView | None] = {}
        self._classes: dict[str, cst.ClassDef] = {}
        self._functions: dict[str, cst.FunctionDef] = {}
        self._bindings: dict[str, list[cst.BaseExpression]] = {}
        self._statements: list[cst.BaseSmallStatement] = []
        self._imported: set[str] = set()
        self._indexed = False

    # -- metadata (resolved when first asked: many views only answer a name or two) ----------
    @functools.cached_property
    def positions(self) -> Mapping[cst.CSTNode, Any]:
        return self.wrapper.resolve(PositionProvider)

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

    # -- index ---------------------------------------------------------------------------
    def _index(self) -> None:
        if self._indexed:
            return
        self._indexed = True
        for statement in self.module.body:
            if isinstance(statement, cst.ClassDef):
                self._classes[statement.name.value] = statement
            elif isinstance(statement, cst.FunctionDef):
                self._functions[statement.name.value] = statement
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    self._statements.append(small)
                    for name, value in _bound_names(small):
                        self._bindings.setdefault(name, []).append(value)
                    if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                        small.names, cst.ImportStar
                    ):
                        for alias in small.names:
                            bound = alias.asname.name if alias.asname is not None else alias.name
                            while isinstance(bound, cst.Attribute):
                                bound = bound.value
                            if isinstance(bound, cst.Name):
                                self._imported.add(bound.value)

    def module_function(self, name: str) -> cst.FunctionDef | None:
        self._index()
        function = self._functions.get(name)
        return None if function is None or is_stub(function) else function

    def class_def(self, name: str) -> cst.ClassDef | None:
        self._index()
        return self._classes.get(name)

    def bindings(self, name: str) -> list[cst.BaseExpression]:
        """Values bound to a module-level name by assignments at module level."""
        self._index()
        return self._bindings.get(name, [])

    def is_bound_at_module_level(self, name: str) -> bool:
        """``name`` is assigned by a module-level statement (a variable, not a def)."""
        self._index()
        return name in self._bindings

    def is_imported(self, name: str) -> bool:
        """``name`` is bound by a module-level import."""
        self._index()
        return name in self._imported

    def module_statements(self) -> list[cst.BaseSmallStatement]:
        """Module-level small statements, in order (functional models are built there)."""
        self._index()
        return self._statements

    def enclosing_class(self, function: cst.CSTNode) -> cst.ClassDef | None:
        """The module-level class ``function`` is a method of."""
        self._index()
        for cls in self._classes.values():
            if isinstance(cls.body, cst.IndentedBlock) and any(
                s is function for s in cls.body.body
            ):
                return cls
        return None

    # -- other modules ---------------------------------------------------------------------
    def other(self, module_name: str, reach: str | None = None) -> ModuleView | None:
        """The project module of that dotted name (None: not the project's); with
        ``reach``, cut down to what its top-level name ``reach`` can reach
        (``skeleton.reached_skeleton``: module-level statements, the defs and classes
        they and ``reach`` name, again and again, and the defs with ``global``): a
        large module is not parsed and resolved whole to answer about one name."""
        if self.modules is None:
            return None
        key = (module_name, reach)
        if key not in self._others:
            wrapper = self.modules(module_name, reach)
            self._others[key] = (
                None if wrapper is None else type(self)(wrapper, self.modules, module_name)
            )
        return self._others[key]

    def locate(self, dotted: str) -> Bound | None:
        """What a qualified name of an import names in the project: a def, a class, a
        method of a class, a module-level binding, or the module itself."""
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            view = self.other(".".join(parts[:cut]), parts[cut] if cut < len(parts) else None)
            if view is None:
                continue
            rest = parts[cut:]
            if not rest:
                return ProjectModule(view)
            found = view.top_level(rest[0])
            for attribute in rest[1:]:
                found = view.attribute_of(found, attribute) if found is not None else None
            return found
        return None

    def top_level(self, name: str, depth: int = 0) -> Bound | None:
        """What a module-level name of this module is bound to."""
        self._index()
        if name in self._classes:
            return ProjectClass(self, self._classes[name])
        function = self.module_function(name)
        if function is not None:
            return ProjectFunction(self, function)
        values = self.bindings(name)
        if len(values) == 1:
            return self.resolve(values[0], Env(self), depth + 1)
        return None

    # -- classes ---------------------------------------------------------------------------
    def bases(self, cls: ProjectClass) -> Iterator[Bound]:
        for base in cls.node.bases:
            if base.keyword is None:
                found = cls.view.resolve(base.value, Env(cls.view))
                if found is not None:
                    yield found

    def mro(self, cls: ProjectClass, seen: set[int] | None = None) -> Iterator[ProjectClass]:
        """The class and its project base classes, depth first (a plain MRO)."""
        seen = set() if seen is None else seen
        if id(cls.node) in seen:
            return
        seen.add(id(cls.node))
        yield cls
        for base in self.bases(cls):
            if isinstance(base, ProjectClass):
                yield from base.view.mro(base, seen)

    def method(self, cls: ProjectClass, name: str) -> ProjectFunction | None:
        """The def ``name`` an instance of ``cls`` runs, through project base classes."""
        for klass in self.mro(cls):
            if not isinstance(klass.node.body, cst.IndentedBlock):
                continue
            for statement in klass.node.body.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                    if is_stub(statement):
                        return None
                    return ProjectFunction(klass.view, statement, klass.node)
        return None

    def library_bases(self, cls: ProjectClass) -> list[str]:
        """Qualified names of the library classes ``cls`` derives from (through project
        base classes)."""
        out = []
        for klass in self.mro(cls):
            for base in klass.view.bases(klass):
                if isinstance(base, LibraryObject):
                    out.append(base.name)
        return out

    def is_keras(self, cls: ProjectClass) -> bool:
        """A Keras layer or model: calling an instance runs its ``call``."""
        return any(name.startswith("keras.") for name in self.library_bases(cls))

    def call_methods(self, cls: ProjectClass) -> list[ProjectFunction]:
        """What calling an instance runs: its ``__call__``, or a Keras class's ``call``
        (Keras's ``__call__`` runs ``build`` first when the layer is not built yet)."""
        own = self.method(cls, "__call__")
        if own is not None:
            return [own]
        if self.is_keras(cls):
            call = self.method(cls, "call")
            return [call] if call is not None else []
        return []

    def attribute_values(
        self, cls: ProjectClass, attribute: str
    ) -> list[tuple[cst.BaseExpression, Env]]:
        """Values assigned to ``self.<attribute>`` in the class's methods (and to
        ``<attribute>`` in its body), through project base classes, each with where to
        resolve it."""
        out: list[tuple[cst.BaseExpression, Env]] = []
        for klass in self.mro(cls):
            body = klass.node.body
            if not isinstance(body, cst.IndentedBlock):
                continue
            for statement in body.body:
                if isinstance(statement, cst.SimpleStatementLine):
                    for small in statement.body:
                        for name, value in _bound_names(small):
                            if name == attribute:
                                out.append((value, Env(klass.view)))
                elif isinstance(statement, cst.FunctionDef):
                    own = first_param(statement)
                    if own is None or not _stores_attribute(statement, own, attribute):
                        continue
                    local = function_locals(statement)
                    env = Env(klass.view, local, own, cls)
                    for value in _attribute_stores(statement, own, attribute):
                        out.append((value, env))
        return out

    def attribute_of(self, bound: Bound, attribute: str, depth: int = 0) -> Bound | None:
        """What ``<bound>.<attribute>`` is."""
        if depth > MAX_RESOLVE_DEPTH:
            return None
        if isinstance(bound, ProjectModule):
            return bound.view.top_level(attribute, depth)
        if isinstance(bound, (ProjectClass, ProjectInstance)):
            cls = bound if isinstance(bound, ProjectClass) else bound.cls
            method = self.method(cls, attribute)
            if method is not None:
                return method
            values = cls.view.attribute_values(cls, attribute)
            return _one(v[1].view.resolve(v[0], v[1], depth + 1) for v in values)
        if isinstance(bound, LibraryObject):
            return LibraryObject(f"{bound.name}.{attribute}")
        return None

    # -- resolving expressions ---------------------------------------------------------------
    def resolve(self, expr: cst.BaseExpression, env: Env, depth: int = 0) -> Bound | None:
        """What ``expr`` evaluates to, as far as the project's source shows (None: not
        known)."""
        if depth > MAX_RESOLVE_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            return self._resolve_name(expr, env, depth)
        if isinstance(expr, cst.Attribute):
            if (
                env.self_name is not None
                and isinstance(expr.value, cst.Name)
                and expr.value.value == env.self_name
                and env.self_class is not None
            ):
                return self.attribute_of(ProjectInstance(env.self_class), expr.attr.value, depth)
            named = self._by_qualified_name(expr)
            if named is not None:
                return named
            owner = self.resolve(expr.value, env, depth + 1)
            return self.attribute_of(owner, expr.attr.value, depth) if owner is not None else None
        if isinstance(expr, cst.Call):
            return self._resolve_call(expr, env, depth)
        return None

    def _resolve_name(self, name: cst.Name, env: Env, depth: int) -> Bound | None:
        if env.self_name is not None and name.value == env.self_name:
            return ProjectInstance(env.self_class) if env.self_class is not None else None
        if env.local is not None:
            values = env.local(name.value)
            if values is not None:
                return _one(self.resolve(v, env, depth + 1) for v in values)
        named = self._by_qualified_name(name)
        if named is not None:
            return named
        for qualified, source in self.names(name):
            if source is QualifiedNameSource.LOCAL and "." not in qualified:
                return self.top_level(qualified, depth)
        return None

    def _by_qualified_name(self, node: cst.BaseExpression) -> Bound | None:
        """An imported name: a project def/class/module, or a library object."""
        for qualified, source in self.names(node):
            if source is not QualifiedNameSource.IMPORT:
                continue
            located = self.locate(qualified)
            if located is not None:
                return located
            if qualified.split(".", 1)[0] in LIBRARY_ROOTS:
                return LibraryObject(library_name(qualified))
        dotted = short_code(node, 200)
        if dotted.startswith("tf.") and "(" not in dotted:
            return LibraryObject(library_name("tensorflow." + dotted[3:]))
        return None

    def _resolve_call(self, call: cst.Call, env: Env, depth: int) -> Bound | None:
        func = self.resolve(call.func, env, depth + 1)
        if isinstance(func, ProjectClass):
            return ProjectInstance(func)
        if isinstance(func, LibraryObject):
            if func.name in SEQUENTIAL:
                return self._sequential(call, env, depth)
            if func.name in FUNCTIONAL:
                return self._functional(call, env, depth)
            return LibraryInstance(func.name)
        if isinstance(func, ProjectFunction) and func.kind == "function":
            returns = [r.value for r in _own_nodes(func.node, cst.Return) if r.value is not None]
            if not returns:
                return None
            inner = Env(func.view, function_locals(func.node))
            return _one(func.view.resolve(r, inner, depth + 1) for r in returns)
        return None

    def _sequential(self, call: cst.Call, env: Env, depth: int) -> LayerStack | None:
        """``keras.Sequential([a, b, ...])``: its layers in order (and ``model.add``s of
        the same name at module level)."""
        items: list[cst.BaseExpression] = []
        positional = [a for a in call.args if a.keyword is None and not a.star]
        layers_arg = positional[0].value if positional else None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "layers":
                layers_arg = arg.value
        if layers_arg is not None:
            if not isinstance(layers_arg, (cst.List, cst.Tuple)):
                return None
            for element in layers_arg.elements:
                if isinstance(element, cst.StarredElement):
                    return None
                items.append(element.value)
        items.extend(self._added_layers(call))
        layers: list[tuple[Bound, bool]] = []
        for item in items:
            if isinstance(item, cst.Call) and self._is_input(item, env):
                continue  # keras.Input(...) sets the input shape; it computes nothing
            layer = self.resolve(item, env, depth + 1)
            if layer is None:
                return None
            layers.append((layer, not layers))
        return LayerStack(tuple(layers))

    def _added_layers(self, call: cst.Call) -> list[cst.BaseExpression]:
        """Layers added at module level with ``name.add(layer)`` to the model ``call``
        builds when ``name = <call>`` is a module-level statement."""
        owner = next(
            (n for n, values in self._bindings.items() if any(v is call for v in values)), None
        )
        if owner is None:
            return []
        out = []
        for small in self.module_statements():
            value = small.value if isinstance(small, cst.Expr) else None
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "add"
                and isinstance(value.func.value, cst.Name)
                and value.func.value.value == owner
                and value.args
            ):
                out.append(value.args[0].value)
        return out

    def _is_input(self, call: cst.Call, env: Env) -> bool:
        found = self.resolve(call.func, env)
        return isinstance(found, LibraryObject) and found.name in KERAS_INPUT

    def _functional(self, call: cst.Call, env: Env, depth: int) -> LayerStack | None:
        """``keras.Model(inputs, outputs)``: the layers on the way from the inputs to the
        outputs, found through the bindings of this module (or of the function it is in)."""
        outputs = None
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) >= 2:
            outputs = positional[1].value
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "outputs":
                outputs = arg.value
        if outputs is None:
            return None  # a subclassed model's super().__init__(): not a functional graph
        layers: list[tuple[Bound, bool]] = []
        if not self._graph_layers(outputs, env, layers, depth, set()):
            return None
        return LayerStack(tuple(layers))

    def _graph_layers(
        self,
        expr: cst.BaseExpression,
        env: Env,
        out: list[tuple[Bound, bool]],
        depth: int,
        seen: set[str],
    ) -> bool:
        """Collect the layer calls that compute ``expr``; False if some step is unknown."""
        if depth > 4 * MAX_RESOLVE_DEPTH:
            return False
        if isinstance(expr, (cst.List, cst.Tuple)):
            return all(
                not isinstance(e, cst.StarredElement)
                and self._graph_layers(e.value, env, out, depth + 1, seen)
                for e in expr.elements
            )
        if isinstance(expr, cst.Dict):
            return all(
                isinstance(e, cst.DictElement)
                and self._graph_layers(e.value, env, out, depth + 1, seen)
                for e in expr.elements
            )
        if isinstance(expr, cst.Name):
            if expr.value in seen:
                return True
            seen.add(expr.value)
            values = env.local(expr.value) if env.local is not None else None
            if values is None:
                values = self.bindings(expr.value)
            if len(values) != 1:
                return False
            return self._graph_layers(values[0], env, out, depth + 1, seen)
        if isinstance(expr, cst.Call):
            if self._is_input(expr, env):
                return True
            layer = self.resolve(expr.func, env, depth + 1)
            if layer is None:
                return False
            if isinstance(layer, LibraryObject) and not layer.name.startswith("keras."):
                return False  # tf.concat(...) etc. on symbolic tensors: not followed
            if isinstance(layer, LibraryObject):
                layer = LibraryInstance(layer.name)
            takes_input = any(
                isinstance(a.value, cst.Name) and self._is_input_name(a.value, env)
                for a in expr.args
            )
            out.append((layer, takes_input))
            return all(self._graph_layers(a.value, env, out, depth + 1, seen) for a in expr.args)
        return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString))

    def _is_input_name(self, name: cst.Name, env: Env) -> bool:
        values = env.local(name.value) if env.local is not None else None
        if values is None:
            values = self.bindings(name.value)
        return (
            len(values) == 1 and isinstance(values[0], cst.Call) and self._is_input(values[0], env)
        )


def _one(found: Iterator[Bound | None]) -> Bound | None:
    """The one thing every value resolves to (None if any is unknown or they differ)."""
    result: Bound | None = None
    for bound in found:
        if bound is None:
            return None
        if result is None:
            result = bound
        elif not _same(result, bound):
            return None
    return result


def _same(a: Bound, b: Bound) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, ProjectInstance) and isinstance(b, ProjectInstance):
        return a.cls.node is b.cls.node
    if isinstance(a, (ProjectClass, ProjectFunction)):
        return a.node is b.node  # type: ignore[union-attr]
    if isinstance(a, (LibraryObject, LibraryInstance)):
        return a == b
    return a is b


def _bound_names(small: cst.BaseSmallStatement) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(name, value) of ``name = value`` / ``name: T = value`` (every plain target)."""
    if isinstance(small, cst.Assign):
        for target in small.targets:
            if isinstance(target.target, cst.Name):
                yield target.target.value, small.value
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        if isinstance(small.target, cst.Name):
            yield small.target.value, small.value


def _own_nodes(function: cst.FunctionDef, kind: type) -> Iterator[Any]:
    """Nodes of ``kind`` in the def's body, not inside nested defs, lambdas or classes."""
    return iter(_own_nodes_of(function, kind))


@functools.lru_cache(maxsize=4096)
def _own_nodes_of(function: cst.FunctionDef, kind: type) -> tuple[Any, ...]:
    """``_own_nodes``' answer, kept: asked again for every attribute a question follows."""
    return tuple(node for node in _own_node_list(function) if isinstance(node, kind))


@functools.lru_cache(maxsize=4096)
def _own_node_list(function: cst.FunctionDef) -> tuple[cst.CSTNode, ...]:
    """Every node of the def's body outside nested defs, lambdas and classes: asked
    again for every attribute a question follows, so listed once per def."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        found.append(node)
        for child in children(node):
            if not isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                stack.append(child)
    return tuple(found)


def _attribute_targets(function: cst.FunctionDef) -> Iterator[tuple[cst.Attribute, Any]]:
    """(``x.attr`` target, value) of every assignment in the def (not nested defs)."""
    for assign in _own_nodes(function, cst.Assign):
        for target in assign.targets:
            if isinstance(target.target, cst.Attribute):
                yield target.target, assign.value
    for assign in _own_nodes(function, cst.AnnAssign):
        if isinstance(assign.target, cst.Attribute) and assign.value is not None:
            yield assign.target, assign.value


def _stores_attribute(function: cst.FunctionDef, own: str, attribute: str) -> bool:
    return any(
        isinstance(t.value, cst.Name) and t.value.value == own and t.attr.value == attribute
        for t, _ in _attribute_targets(function)
    )


def _attribute_stores(
    function: cst.FunctionDef, own: str, attribute: str
) -> Iterator[cst.BaseExpression]:
    for target, value in _attribute_targets(function):
        if (
            isinstance(target.value, cst.Name)
            and target.value.value == own
            and target.attr.value == attribute
        ):
            yield value


def function_locals(function: cst.FunctionDef | cst.Lambda) -> LocalValues:
    """The def's own names -> the values bound to them there (``[]`` for parameters,
    loop targets and other bindings whose value cannot be read)."""
    values: dict[str, list[cst.BaseExpression]] = {}
    params = function.params
    for param in (
        *params.posonly_params,
        *params.params,
        *params.kwonly_params,
        params.star_arg,
        params.star_kwarg,
    ):
        if isinstance(param, cst.Param):
            values.setdefault(param.name.value, [])
    if isinstance(function, cst.FunctionDef):
        for assign in _own_nodes(function, cst.Assign):
            for target in assign.targets:
                if isinstance(target.target, cst.Name):
                    values.setdefault(target.target.value, []).append(assign.value)
                else:
                    for name in target_names(target.target):
                        values.setdefault(name, []).append(cst.Ellipsis())
        for item in _own_nodes(function, cst.WithItem):
            if item.asname is not None and isinstance(item.asname.name, cst.Name):
                values.setdefault(item.asname.name.value, []).append(item.item)
        for kind in (cst.For, cst.AugAssign, cst.NamedExpr, cst.AnnAssign):
            for node in _own_nodes(function, kind):
                for name in target_names(node.target):
                    if isinstance(node, cst.AnnAssign) and node.value is not None:
                        values.setdefault(name, []).append(node.value)
                    else:
                        values.setdefault(name, []).append(cst.Ellipsis())

    def local(name: str) -> list[cst.BaseExpression] | None:
        return values.get(name)

    return local
