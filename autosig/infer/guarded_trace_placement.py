"""Where the seeding call of a guarded relaxed trace may go, or why nowhere.

A guarded relaxed trace is ``f.get_concrete_function(<specs>)`` run once before the
program's own calls (``autosig.infer.guarded_trace`` chooses it). Measured on TF 2.21
(``scripts/measure_guarded_trace.py``): run right after the ``def`` it fails when the
function's globals do not exist yet; in a base class's ``__init__`` it traces before a
subclass sets its attributes, and later calls reuse that graph. So the call goes

- for a module-level function: at module level, right after the last top-level
  statement binding a name the function reads (through the module's other functions
  and classes it reads too), and after the ``def``; never inside or after an
  ``if __name__ == "__main__":`` block. A name the module's functions rebind with
  ``global`` is state the seeding trace would read too early: no placement; so is a
  name a later top-level statement (the main block included) mutates without rebinding
  it (a store into its items or attributes, a method call on it).
- for a method: as the last statement of its class's own ``__init__``, guarded by
  ``type(self) is __class__`` inside the ``try`` (a subclass sets its attributes after ``super().__init__()``:
  its instances trace as before), when every ``self.<attr>`` the method reads (through
  the ``self.`` methods it calls) is set in that ``__init__`` or in the class body and
  stored nowhere else in the file, and no ``.build``/``.load_weights``/``.set_weights``
  call outside that ``__init__`` (the seed would trace before the variables are made).

Either way the call sits in ``try``/``except Exception`` (a relaxed trace the code
cannot build raises there and leaves the function as before: measured). Pure libcst on
the file's text, never the user's code.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_full_name_for_node

from autosig.analysis.optimizer_build import first_parameter
from autosig.analysis.trace_state import target_leaves
from autosig.source.metadata import MetadataView, ancestors_in, index_tree

MAIN_GUARD = '__name__ == "__main__"'
SEED_METHOD = "get_concrete_function"
READ_ONLY_METHODS = frozenset({"get", "keys", "values", "items", "copy", "numpy"})
"""Method calls on a name the function reads that are not a change of it."""
MARK = "autosig: guarded relaxed trace"
"""The comment on the seeding statement (also how a second run finds it)."""


@dataclass(frozen=True)
class Placement:
    """Where the seeding statement goes: after ``anchor`` (module level) or at the end of
    ``init``'s body (a method)."""

    target: str
    """What ``get_concrete_function`` is called on: ``f`` or ``self.__call__``."""
    anchor: cst.BaseStatement | None
    """Module level: the top-level statement the seeding goes after."""
    init: cst.FunctionDef | None
    """A method: its class's ``__init__`` (the seeding is its last statement)."""
    class_name: str
    """A method's class (the ``type(self) is`` guard); empty for a function."""
    line: int
    """The line it goes after (the anchor's last line, or ``__init__``'s last)."""

    def describe(self) -> str:
        if self.init is not None:
            return f"at the end of `{self.class_name}.__init__` (after line {self.line})"
        return f"after line {self.line}"


@dataclass(frozen=True)
class NoPlacement:
    reason: str


@dataclass(frozen=True)
class Seeded:
    """The file already has the seeding call (an earlier run of fix, or by hand)."""

    line: int


def place_seeding(
    ctx: MetadataView, function: cst.FunctionDef | cst.Lambda
) -> Placement | NoPlacement | Seeded:
    """Where ``function``'s seeding call goes, or why nowhere."""
    if not isinstance(function, cst.FunctionDef):
        return NoPlacement("a lambda has no name to seed through")
    facts = placement_facts(ctx)
    cls = facts.classes.get(function)
    if cls is not None:
        return _method_placement(facts, cls, function)
    if facts.parents.get(function) is not ctx.module:
        return NoPlacement(
            "it is defined inside another function or block: its seeding call would run "
            "each time that code runs"
        )
    return _module_placement(facts, ctx.module, function)


# -- what the placement asks of the whole file, gathered once ----------------------------


@dataclass(frozen=True)
class AttributeUse:
    """An attribute ``x.attr`` met in the module (``PlacementFacts.attributes``)."""

    node: cst.Attribute
    line: int
    ancestors: tuple[cst.CSTNode, ...]
    """The nodes around it, innermost first."""
    assigned: bool
    """It is itself a target of ``=`` (through tuples), ``+=`` or ``: T =``."""
    changed: bool
    """It, or an item or attribute of it (``x.a[k]``, ``x.a.b``), is a target of an
    assignment or ``del``."""
    method: str | None
    """The method called on it or on an item or attribute of it (``x.a.update(...)``)."""

    def within(self, node: cst.CSTNode) -> bool:
        return any(a is node for a in self.ancestors)


@dataclass(frozen=True)
class BuildCall:
    """A ``<x>.build/load_weights/set_weights(...)`` call (``BUILD_METHODS``)."""

    method: str
    root: str
    """``x``'s root name (``_root_name``)."""
    ancestors: tuple[cst.CSTNode, ...]
    line: int


@dataclass(frozen=True)
class PlacementFacts:
    """What the placement asks of the whole file, gathered in one pass over its tree
    (``placement_facts``), in the order ``iter_tree`` meets the nodes (the order the
    questions walked the file in before: the one reported first is unchanged)."""

    attributes: tuple[AttributeUse, ...]
    builds: tuple[BuildCall, ...]
    global_names: frozenset[str]
    """Names some ``global`` statement rebinds."""
    imported: frozenset[str]
    """Top-level names bound by an import (``_imported``)."""
    names: dict[cst.CSTNode, frozenset[str]]
    """Top-level statement -> the names it reads or binds anywhere inside it."""
    seeds: dict[cst.CSTNode, frozenset[str]]
    """A ``try`` carrying ``MARK`` -> what its body calls ``get_concrete_function`` on."""
    parents: dict[cst.CSTNode, cst.CSTNode]
    classes: dict[cst.FunctionDef, cst.ClassDef]
    """Each method's class (``MetadataView.enclosing_class``)."""
    starts: dict[cst.CSTNode, int]
    """First line of each statement, attribute, subscript and call."""
    ends: dict[cst.CSTNode, int]
    """Last line of each statement."""


POSITIONED = (cst.BaseStatement, cst.Attribute, cst.Subscript, cst.Call)


def placement_facts(ctx: MetadataView) -> PlacementFacts:
    """The facts of ``ctx``'s module, in one pass (once per placement asked: the old
    questions walked the whole file 3 to 5 times each)."""
    nodes, parents, _ = index_tree(ctx.module)
    starts = {n: ctx.position(n)[0] for n in nodes if isinstance(n, POSITIONED)}
    ends = {n: ctx.line_span(n)[-1] for n in nodes if isinstance(n, cst.BaseStatement)}
    defs = [n for n in nodes if isinstance(n, cst.FunctionDef)]
    classes = {n: cls for n in defs if (cls := ctx.enclosing_class(n)) is not None}
    seed_calls = {
        n: ctx.code(n.func.value)
        for n in nodes
        if isinstance(n, cst.Call)
        and isinstance(n.func, cst.Attribute)
        and n.func.attr.value == SEED_METHOD
    }
    module = ctx.module
    top: dict[cst.CSTNode, cst.CSTNode] = {}
    names: dict[cst.CSTNode, set[str]] = {s: set() for s in module.body}
    attributes: list[AttributeUse] = []
    builds: list[BuildCall] = []
    global_names: set[str] = set()
    seeds: dict[cst.CSTNode, set[str]] = {}
    for node in nodes:
        parent = parents.get(node)
        if parent is module and node in names:
            top[node] = node
        elif parent is not None and parent in top:
            top[node] = top[parent]
        if isinstance(node, cst.Name) and node in top:
            names[top[node]].add(node.value)
        elif isinstance(node, cst.Global):
            global_names.update(name.name.value for name in node.names)
        elif isinstance(node, cst.Attribute):
            attributes.append(_attribute_use(node, parents, starts[node]))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value in BUILD_METHODS:
                method, root = node.func.attr.value, _root_name(node.func.value)
                builds.append(
                    BuildCall(method, root, tuple(ancestors_in(node, parents)), starts[node])
                )
            if node in seed_calls:
                for marked in _marked_tries(node, parents):
                    seeds.setdefault(marked, set()).add(seed_calls[node])
    return PlacementFacts(
        tuple(attributes),
        tuple(builds),
        frozenset(global_names),
        frozenset(_imported(list(module.body))),
        {s: frozenset(found) for s, found in names.items()},
        {t: frozenset(found) for t, found in seeds.items()},
        parents,
        classes,
        starts,
        ends,
    )


def _attribute_use(
    node: cst.Attribute, parents: dict[cst.CSTNode, cst.CSTNode], line: int
) -> AttributeUse:
    outer: cst.CSTNode = node
    parent = parents.get(outer)
    while isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is outer:
        outer, parent = parent, parents.get(parent)
    method = None
    if (
        outer is not node
        and isinstance(parent, cst.Call)
        and isinstance(outer, cst.Attribute)
        and parent.func is outer
    ):
        method = outer.attr.value
    kind = _target_of(node, parents)
    return AttributeUse(
        node,
        line,
        tuple(ancestors_in(node, parents)),
        assigned=kind in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign),
        changed=_target_of(outer, parents) is not None,
        method=method,
    )


def _target_of(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> type | None:
    """The kind of statement ``node`` is a target of (``AssignTarget`` through tuples,
    lists and starred elements; ``AugAssign``/``AnnAssign``; ``Del``), else None."""
    parent = parents.get(node)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        parent = parents.get(parent)
    if isinstance(parent, cst.AssignTarget):
        return cst.AssignTarget
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
        return type(parent)
    if isinstance(parent, cst.Del):
        return cst.Del
    return None


def _marked_tries(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> Iterator[cst.Try]:
    """The ``try`` statements carrying ``MARK`` whose body holds ``node``."""
    inner, current = node, parents.get(node)
    while current is not None:
        if isinstance(current, cst.Try) and current.body is inner and _marked(current):
            yield current
        inner, current = current, parents.get(current)


def _marked(node: cst.Try) -> bool:
    if not isinstance(node.body, cst.IndentedBlock):
        return False
    comment = node.body.header.comment
    return comment is not None and MARK in comment.value


# -- module-level functions ----------------------------------------------------------


def _module_placement(
    facts: PlacementFacts, module: cst.Module, function: cst.FunctionDef
) -> Placement | NoPlacement | Seeded:
    name = function.name.value
    seeded = _existing_seed(facts, module.body, name)
    if seeded is not None:
        return Seeded(seeded)
    body = list(module.body)
    bindings = _top_level_bindings(body)
    rebound = [i for i in bindings.get(name, ()) if body[i] is not function]
    if rebound:
        line = facts.starts[body[rebound[0]]]
        return NoPlacement(
            f"line {line} binds `{name}` too: the seeding call may not reach the tf.function"
        )
    globals_read = _globals_read(facts, function, body, bindings)
    by_global = facts.global_names & globals_read
    if by_global:
        first = sorted(by_global)[0]
        return NoPlacement(
            f"it reads `{first}`, which a function of the module rebinds (`global "
            f"{first}`): a seeding trace at import would read it before that"
        )
    anchor_index = body.index(function)
    for read in sorted(globals_read):
        for index in bindings.get(read, ()):
            anchor_index = max(anchor_index, index)
    anchor = body[anchor_index]
    if any(_is_main_guard(s) for s in body[: anchor_index + 1]):
        return NoPlacement(
            'a name it reads is bound in or after the `if __name__ == "__main__":` block: '
            "no place at import where it exists before the program runs"
        )
    if isinstance(anchor, cst.If) and _is_main_guard(anchor):
        return NoPlacement('a name it reads is bound in `if __name__ == "__main__":`')
    changed = _changed_later(facts, body[anchor_index + 1 :], globals_read)
    if changed is not None:
        read, at = changed
        return NoPlacement(
            f"it reads `{read}`, which line {at} changes after the seeding point (a store "
            "into it or a method call on it): a seeding trace would keep the old value"
        )
    return Placement(name, anchor, None, "", facts.ends[anchor])


def _imported(body: list[cst.BaseStatement]) -> set[str]:
    """Top-level names bound by an import (a method call on a module is not a change)."""
    out: set[str] = set()
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                out.update(_bound_names(cst.SimpleStatementLine(body=[small])))
    return out


def _changed_later(
    facts: PlacementFacts,
    later: list[cst.BaseStatement],
    reads: set[str],
) -> tuple[str, int] | None:
    """A name of ``reads`` that a top-level statement of ``later`` (the main block
    included; function and class bodies aside) mutates without rebinding it: a store into
    ``name[...]`` or ``name.attr``, an augmented assignment or ``del`` of one, or a method
    call ``name.m(...)`` (not on an imported module, not ``READ_ONLY_METHODS``)."""
    for statement in later:
        for node in _walk_outside_scopes(statement):
            targets: list[cst.CSTNode] = []
            if isinstance(node, cst.AssignTarget):
                targets = list(target_leaves(node.target))
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, cst.Del):
                targets = list(target_leaves(node.target))
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                root = _root_name(node.func.value)
                reading = node.func.attr.value in READ_ONLY_METHODS
                if root in reads and root not in facts.imported and not reading:
                    return root, facts.starts[node]
            for target in targets:
                if isinstance(target, (cst.Subscript, cst.Attribute)):
                    root = _root_name(target)
                    if root in reads:
                        return root, facts.starts[target]
    return None


def _root_name(node: cst.BaseExpression) -> str:
    """``a`` of ``a.b[c].d`` (empty when the chain starts with a call or literal)."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def _top_level_bindings(body: list[cst.BaseStatement]) -> dict[str, list[int]]:
    """Name -> indices of the top-level statements that bind it (anywhere inside them,
    nested functions and classes aside)."""
    out: dict[str, list[int]] = {}
    for index, statement in enumerate(body):
        for name in _bound_names(statement):
            out.setdefault(name, []).append(index)
    return out


def _bound_names(statement: cst.BaseStatement) -> Iterator[str]:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        yield statement.name.value
        return
    for node in _walk_outside_scopes(statement):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            yield node.name.value
        elif isinstance(node, cst.AssignTarget):
            yield from _target_names(node.target)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            yield from _target_names(node.target)
        elif isinstance(node, (cst.For, cst.CompFor)):
            yield from _target_names(node.target)
        elif isinstance(node, cst.AsName):
            yield from _target_names(node.name)
        elif isinstance(node, cst.NamedExpr):
            yield from _target_names(node.target)
        elif isinstance(node, cst.ImportAlias) and node.asname is None:
            yield (get_full_name_for_node(node.name) or "").split(".")[0]


def _target_names(node: cst.CSTNode) -> Iterator[str]:
    if isinstance(node, cst.Name):
        yield node.value
    elif isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            yield from _target_names(element.value)
    elif isinstance(node, cst.StarredElement):
        yield from _target_names(node.value)


def _walk_outside_scopes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes of ``node``, not descending into function or class bodies (their defs
    themselves are yielded)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is not node and isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            continue
        stack.extend(reversed(current.children))


def _globals_read(
    facts: PlacementFacts,
    function: cst.FunctionDef,
    body: list[cst.BaseStatement],
    bindings: dict[str, list[int]],
) -> set[str]:
    """The module's top-level names ``function`` reads, following the module's own
    functions and classes it reads (a helper's globals must exist too)."""
    found: set[str] = set()
    todo: list[cst.CSTNode] = [function]
    seen: set[int] = set()
    definitions: dict[str, list[cst.CSTNode]] = {}
    for statement in body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            definitions.setdefault(statement.name.value, []).append(statement)
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for name in facts.names[node] & bindings.keys():
            if name == function.name.value and node is function:
                continue
            found.add(name)
            todo.extend(definitions.get(name, ()))
    found.discard(function.name.value)
    return found


def _is_main_guard(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.If):
        return False
    code = cst.Module(body=[]).code_for_node(statement.test).replace("'", '"')
    return " ".join(code.split()) == MAIN_GUARD


def _existing_seed(
    facts: PlacementFacts, statements: Iterable[cst.BaseStatement], target: str
) -> int | None:
    """The line of autosig's own seeding statement among ``statements`` (top level, or
    ``__init__``'s body): a ``try`` whose header carries ``MARK`` and calls
    ``<target>.get_concrete_function``, also under an ``if`` (an older fix wrote the
    guard outside the ``try``). Another ``get_concrete_function`` call (an export
    helper's) is not a seed."""
    for statement in statements:
        tries = [statement]
        if isinstance(statement, cst.If) and isinstance(statement.body, cst.IndentedBlock):
            tries = list(statement.body.body)
        if any(target in facts.seeds.get(node, ()) for node in tries):
            return facts.starts[statement]
    return None


# -- methods ---------------------------------------------------------------------------


def _method_placement(
    facts: PlacementFacts, cls: cst.ClassDef, method: cst.FunctionDef
) -> Placement | NoPlacement | Seeded:
    name = method.name.value
    if name.startswith("__") and not name.endswith("__"):
        return NoPlacement(f"`{name}` is name-mangled")
    if any(
        isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
        for d in method.decorators
    ):
        return NoPlacement(f"`{name}` is a static or class method")
    init = next(
        (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
        None,
    )
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return NoPlacement(
            f"`{cls.name.value}` has no `__init__` of its own to seed each instance in"
        )
    own = first_parameter(init)
    if own is None:
        return NoPlacement("`__init__` has no self parameter")
    target = f"{own}.{name}"
    seeded = _existing_seed(facts, init.body.body, target)
    if seeded is not None:
        return Seeded(seeded)
    if any(isinstance(n, cst.Return) for n in _walk_outside_scopes(init.body)):
        return NoPlacement("`__init__` may return early: its last statement may not run")
    reads = _self_reads(facts, cls, method)
    set_in_init = _self_stores(facts, init, own)
    in_class = _class_body_names(cls)
    missing = sorted(reads - set_in_init - in_class)
    if missing:
        return NoPlacement(
            f"it reads `self.{missing[0]}`, which `{cls.name.value}.__init__` does not set: "
            "it may not exist, or be another value, when the instance is created"
        )
    elsewhere = _stored_outside(facts, cls, init, reads)
    if elsewhere is not None:
        attr, line = elsewhere
        return NoPlacement(
            f"it reads `self.{attr}`, which line {line} changes after `__init__`: the "
            "first call may trace with another value"
        )
    built = _built_outside(facts, init)
    if built is not None:
        method, line = built
        return NoPlacement(
            f"line {line} calls `.{method}(...)` after `__init__` (on this instance or a "
            "layer of it, maybe): a seed in `__init__` would trace before the variables "
            "exist or are loaded"
        )
    return Placement(target, None, init, cls.name.value, facts.ends[init])


BUILD_METHODS = frozenset({"build", "load_weights", "set_weights"})
"""Calls that make or replace a Keras model's variables after construction."""


def _built_outside(facts: PlacementFacts, init: cst.FunctionDef) -> tuple[str, int] | None:
    """A ``<x>.build/load_weights/set_weights(...)`` call outside ``init`` (on any object
    but an imported module: it may be the instance or one of its layers)."""
    for call in facts.builds:
        if call.root in facts.imported or any(a is init for a in call.ancestors):
            continue
        return call.method, call.line
    return None


def _self_reads(facts: PlacementFacts, cls: cst.ClassDef, method: cst.FunctionDef) -> set[str]:
    """``self.<attr>`` names ``method`` reads, following the class's methods it calls."""
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    found: set[str] = set()
    todo = [method]
    done: set[str] = set()
    while todo:
        current = todo.pop()
        if current.name.value in done:
            continue
        done.add(current.name.value)
        own = first_parameter(current)
        for attr in _attributes_of(facts, current, own):
            found.add(attr)
            if attr in methods and attr != method.name.value:
                todo.append(methods[attr])
    return found


def _attributes_of(
    facts: PlacementFacts, function: cst.FunctionDef, own: str | None
) -> Iterable[str]:
    if own is None:
        return ()
    return {use.node.attr.value for use in _own_attributes(facts, function.body, own)}


def _own_attributes(facts: PlacementFacts, body: cst.BaseSuite, own: str) -> Iterator[AttributeUse]:
    """The ``<own>.<attr>`` attributes inside ``body``."""
    for use in facts.attributes:
        value = use.node.value
        if isinstance(value, cst.Name) and value.value == own and use.within(body):
            yield use


def _self_stores(facts: PlacementFacts, init: cst.FunctionDef, own: str) -> set[str]:
    return {use.node.attr.value for use in _own_attributes(facts, init.body, own) if use.assigned}


def _class_body_names(cls: cst.ClassDef) -> set[str]:
    out: set[str] = set()
    for statement in cls.body.body:
        out.update(_bound_names(statement))
    return out


def _stored_outside(
    facts: PlacementFacts, cls: cst.ClassDef, init: cst.FunctionDef, reads: set[str]
) -> tuple[str, int] | None:
    """An attribute the method reads that the file changes outside ``__init__`` (on any
    object: ``other.scale = 2`` may be this instance): a store into it or into an item or
    attribute of it (``other.cfg["k"] = 2``), or, outside the class, a method call on it
    (``other.cfg.update(...)``; not ``READ_ONLY_METHODS``)."""
    for use in facts.attributes:
        if use.node.attr.value not in reads or use.within(init):
            continue
        called = use.method is not None and use.method not in READ_ONLY_METHODS
        if use.changed or (called and not use.within(cls)):
            return use.node.attr.value, use.line
    return None
