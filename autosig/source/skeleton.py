"""Cut a file down to the parts static rules can report on, keeping every line number.

libcst metadata costs about 1 ms a line; most lines of a file that holds a tf.function
are in functions that hold none. ``check`` only reports inside traced code, so it can
parse a *skeleton*: the same text with every top-level function or class (and every
method of a kept class) that cannot matter replaced by blank lines, its first line by a
stub (``def name(*args, **kwargs): ...``) when the kept code names it. Line and
column numbers are unchanged, so findings are identical. ``fix`` parses a marked skeleton
(``marked_skeleton``) and puts the cut lines back into its output.

What is always kept: every statement that is not a def/class (imports, assignments,
loops), a def/class whose text may hold a site (``files.PREFILTER`` or a name imported as
tensorflow's ``function``), any def named as the target of a ``function(...)`` call form
in the kept text (found with ``ast``), and in a kept class the methods that hold a site
and ``__init__``. What else a rule reads beyond the traced code it declares
(``Rule.skeleton_keeps``, one ``Keep`` each), and the skeleton keeps what the caller
asks for: the defs and methods traced code calls (and the classes kept module-level
code calls or kept classes derive from: ``keras.Sequential([Patches()])``, ``loss_fn =
SumOverBatch()``; the analysis follows an instance's call into its class), those a loop creating a tf.function
calls, the defs those reach by name, the defs with a ``global`` statement, the methods
setting a ``self`` attribute the kept ones use, the defs changing what kept code reads.
A file ``ast`` cannot parse is returned whole (libcst then reports it, or parses syntax
newer than this Python's).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import Enum

from autosig.source.files import PREFILTER


class Keep(Enum):
    """What a rule may read beyond the traced code, so the skeleton must keep it."""

    CALLEES = "the defs a kept def calls and the methods a kept method calls through self"
    """An analysis follows traced code into them (a helper reading ``x.shape[0]``)."""
    LOOP_CALLEES = "the defs a loop creating a tf.function calls"
    """A helper the loop calls may change what the trace reads."""
    REACHED = "the top-level defs the defs kept for a call reach by name"
    """What a wrapped function calls decides whether moving its creation is safe."""
    GLOBAL_WRITERS = "the defs with a global statement"
    """They rebind module names: scope analysis must see those bindings."""
    SELF_SETTERS = "the methods of a kept class assigning a self attribute kept methods use"
    """Every assignment of an attribute traced code reads (is it mutated, a tensor?)."""
    ATTRIBUTE_WRITERS = "the defs that change an attribute kept code reads, or a name it uses"
    """Stores, deletes, mutating calls, setattr/vars/__dict__: every change to what a
    trace reads."""


ALL = frozenset(Keep)

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_WORD = re.compile(r"[A-Za-z_]\w*")

Walk = Callable[[ast.AST], Sequence[ast.AST]]
"""A node -> it and every node below it (any order): ``Subtrees.walk``."""


@functools.cache
def _child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of ``kind`` that may hold nodes, but ``ctx`` (the shared ``Load``/
    ``Store`` objects: a third of all nodes, and no question asks for them)."""
    return tuple(name for name in kind._fields if name != "ctx")


class Subtrees:
    """Every node of a tree (but ``ctx`` markers) in one pre-order list, each subtree a
    slice of it.

    The skeleton asks many questions of overlapping subtrees (every cut def, every
    method of a kept class, every loop); ``ast.walk`` for each (a Python generator per
    node) was most of the skeleton's time. The tree is listed once here and each walk
    is a list slice.
    """

    def __init__(self, tree: ast.AST) -> None:
        order: list[ast.AST] = []
        parents: list[int] = []
        stack: list[tuple[ast.AST, int]] = [(tree, -1)]
        while stack:
            node, parent = stack.pop()
            index = len(order)
            order.append(node)
            parents.append(parent)
            children: list[ast.AST] = []
            for name in _child_fields(type(node)):
                value = getattr(node, name, None)
                if isinstance(value, ast.AST):
                    children.append(value)
                elif type(value) is list:
                    children.extend(item for item in value if isinstance(item, ast.AST))
            stack.extend((child, index) for child in reversed(children))
        sizes = [1] * len(order)
        for index in range(len(order) - 1, 0, -1):
            sizes[parents[index]] += sizes[index]
        self.order = order
        self._span = {id(node): (i, i + sizes[i]) for i, node in enumerate(order)}

    def walk(self, node: ast.AST) -> Sequence[ast.AST]:
        span = self._span.get(id(node))
        if span is None:
            return list(ast.walk(node))  # not of this tree
        return self.order[span[0] : span[1]]


def _span(node: ast.stmt) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return start, node.end_lineno or node.lineno


def _imported_function_names(tree: ast.Module, walk: Walk) -> set[str]:
    """Local names bound by ``from tensorflow... import function [as name]``."""
    names: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tensorflow"):
            names.update(a.asname or a.name for a in node.names if a.name == "function")
    return names


def _mentions(lines: list[str], span: tuple[int, int], local: re.Pattern[str] | None) -> bool:
    segment = "".join(lines[span[0] - 1 : span[1]])
    if PREFILTER.search(segment.encode()) is not None:
        return True
    return local is not None and local.search(segment) is not None


_SELF_USE = re.compile(r"self\s*\.\s*([A-Za-z_]\w*)")
_SELF_CHAIN = re.compile(r"self((?:\s*\.\s*[A-Za-z_]\w*)+)")


def _read_through_self(text: str) -> set[str]:
    """Every attribute name on a chain from ``self`` (``self.settings.threshold``: both):
    a method of another class changing ``threshold`` changes what the trace reads."""
    return {
        name for chain in _SELF_CHAIN.findall(text) for name in re.findall(r"[A-Za-z_]\w*", chain)
    }


def _self_stores(method: ast.stmt, walk: Walk) -> set[str]:
    """Attributes of ``self`` the method assigns or deletes, in any form: ``self.n = 0``,
    ``self.n: int = 0``, ``(self.n) += 1``, ``self.a, self.b = ...``, ``for self.i in``."""
    return {
        node.attr
        for node in walk(method)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, (ast.Store, ast.Del))
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }


_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add"}
    | {"discard", "popitem", "sort", "reverse", "write", "__setitem__", "__setattr__"}
)
_REFLECTION = frozenset({"setattr", "delattr", "vars", "__dict__"})


def _attribute_writes(node: ast.AST, walk: Walk) -> tuple[set[str], set[str]]:
    """What a def may change on objects it does not create: attribute names stored,
    deleted, item-stored or mutated through (``p.limit = 2``, ``self.cfg["a"] = 1``,
    ``self.items.append(x)``), the outside names at the root of such a change
    (``CFG["k"] += 1``), and ``"*"`` for setattr/vars/__dict__ (among the attributes).
    For ``Keep.ATTRIBUTE_WRITERS``. Returns (attribute names, root names).

    A class is asked member by member: a method's ``self`` (and every other name it
    binds) is its own, so ``self.x = 1`` adds ``x`` but no root; asked as a whole, every
    class with a method looked like it changed a module-level ``self`` and was kept.
    """
    if isinstance(node, ast.ClassDef):
        names, roots = set(), set()
        for member in node.body:
            member_names, member_roots = _attribute_writes(member, walk)
            names |= member_names
            roots |= member_roots
        for decorator in (*node.decorator_list, *node.bases, *node.keywords):
            member_names, member_roots = _attribute_writes(decorator, walk)
            names |= member_names
            roots |= member_roots
        return names, roots
    names = set()
    roots = set()
    local = _local_names(node, walk)

    def chain(expr: ast.AST) -> None:
        while isinstance(expr, (ast.Attribute, ast.Subscript)):
            if isinstance(expr, ast.Attribute):
                names.add(expr.attr)
            expr = expr.value
        if isinstance(expr, ast.Name) and expr.id not in local:
            roots.add(expr.id)

    for sub in walk(node):
        if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(
            sub.ctx, (ast.Store, ast.Del)
        ):
            chain(sub)
        elif (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr in _MUTATORS
        ):
            chain(sub.func.value)
        elif isinstance(sub, ast.Name) and sub.id in _REFLECTION:
            names.add("*")
        elif isinstance(sub, ast.Attribute) and sub.attr == "__dict__":
            names.add("*")
    return names, roots


def _local_names(node: ast.AST, walk: Walk) -> set[str]:
    """Names a def binds for itself (parameters, assignments not declared global)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    declared = {n for sub in walk(node) if isinstance(sub, ast.Global) for n in sub.names}
    args = node.args
    bound = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    bound |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    bound |= {
        sub.id for sub in walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)
    }
    return bound - declared


def _class_members_to_drop(
    node: ast.ClassDef,
    lines: list[str],
    local: re.Pattern[str] | None,
    walk: Walk,
    keep: Collection[Keep],
) -> list[ast.stmt]:
    """Methods of a kept class that neither hold a site nor are asked for by ``keep``.

    Rules look at the rest of the class only for the ``self.<attr>`` the traced methods
    use (every assignment of one: ``SELF_SETTERS``; every change: ``ATTRIBUTE_WRITERS``)
    and the methods they call (``CALLEES``).
    """
    methods = [m for m in node.body if isinstance(m, _DEFS)]
    texts = {id(m): "".join(lines[_span(m)[0] - 1 : _span(m)[1]]) for m in methods}
    traced = [m for m in methods if _mentions(lines, _span(m), local)]
    relevant = traced + [m for m in methods if m.name == "__init__" and m not in traced]
    used = {a for m in traced for a in _SELF_USE.findall(texts[id(m)])}
    # methods the traced ones call (self.helper(x)), and those they call: the shape-use
    # analysis follows them
    called = [m for m in methods if m.name in used and m not in relevant]
    while called and Keep.CALLEES in keep:
        relevant.extend(called)
        used |= {a for m in called for a in _SELF_USE.findall(texts[id(m)])}
        called = [m for m in methods if m.name in used and m not in relevant]
    drop = []
    for m in methods:
        if (
            m in relevant
            or (Keep.SELF_SETTERS in keep and _self_stores(m, walk) & used)
            or (Keep.ATTRIBUTE_WRITERS in keep and _attribute_writes(m, walk)[0] & (used | {"*"}))
        ):
            continue
        drop.append(m)
    if len(drop) == len(node.body):
        return []  # an empty class body would not parse
    return drop


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def python_lines(text: str) -> list[str]:
    """``text``'s lines with their endings, numbered as Python numbers them.

    ``str.splitlines`` also splits at form feeds, ``\\x85``, ``\\u2028`` and other
    characters Python's tokenizer keeps inside a line; ``ast`` line numbers would then
    point at the wrong lines.
    """
    return _LINE.findall(text)


def _function_call_names(nodes: list[ast.stmt], local: set[str], walk: Walk) -> set[str]:
    """Names read in the arguments of ``<alias>.function(...)`` calls (and ``(...)(f)``),
    with the methods named as ``self.f``: the regexes miss ``func=self.f`` and options
    holding parentheses, ``function(input_signature=(...))(self.f)``."""

    names: set[str] = set()
    for node in nodes:
        for call in walk(node):
            if isinstance(call, ast.Call) and _is_function(call.func, local):
                for arg in (*call.args, *(k.value for k in call.keywords)):
                    for n in walk(arg):
                        if isinstance(n, ast.Name):
                            names.add(n.id)
                        elif _is_own_attribute(n):
                            names.add(n.attr)  # type: ignore[attr-defined]
    return names


def _is_function(func: ast.expr, local: set[str]) -> bool:
    """``<alias>.function``, a local name for it, or ``<that>(...)``."""
    if isinstance(func, ast.Call):
        return _is_function(func.func, local)
    if isinstance(func, ast.Attribute):
        return func.attr == "function"
    return isinstance(func, ast.Name) and func.id in local


def _loop_callees(nodes: list[ast.stmt], local: set[str], walk: Walk) -> set[str]:
    """Names called in loops that create a tf.function (``Keep.LOOP_CALLEES``)."""
    loops = (ast.For, ast.AsyncFor, ast.While)
    names: set[str] = set()
    for node in nodes:
        for loop in walk(node):
            if not isinstance(loop, loops):
                continue
            inside = walk(loop)
            if any(isinstance(c, ast.Call) and _is_function(c.func, local) for c in inside):
                names.update(
                    c.func.id
                    for c in inside
                    if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                )
    return names


def _called_in_defs(nodes: list[ast.stmt], walk: Walk) -> set[str]:
    """Names called inside kept defs, and classes whose methods they call
    (``Geometry.pairwise(x)``): the shape-use analysis follows traced code into the
    project functions it calls (a helper reading ``x.shape[0]``)."""
    names: set[str] = set()
    for node in nodes:
        if not isinstance(node, _DEFS):
            continue
        for call in walk(node):
            if not isinstance(call, ast.Call):
                continue
            if isinstance(call.func, ast.Name):
                names.add(call.func.id)
            elif isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
                names.add(call.func.value.id)
    return names


def _classes_used_at_top(nodes: list[ast.stmt], walk: Walk) -> set[str]:
    """Names called in kept module-level statements (``model = keras.Sequential(
    [Patches(), ...])``, ``loss_fn = SumOverBatch()``) and base classes of kept
    classes: the shape-use analysis follows a call of such an instance into its class
    (``__call__``, a Keras layer's ``call``). A ``__main__`` block is left out."""
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            names.update(b.id for b in node.bases if isinstance(b, ast.Name))
            continue
        if isinstance(node, _DEFS) or _is_main_block(node):
            continue
        for call in walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                names.add(call.func.id)
    return names


def _is_main_block(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (what it runs is the program, not traced code)."""
    return isinstance(node, ast.If) and any(
        isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(node.test)
    )


def _is_own_attribute(node: ast.AST) -> bool:
    """``self.f`` / ``cls.f``: the wrapped method of a call form."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    )


def _reached(seeds: set[str], tree: ast.Module, walk: Walk) -> set[str]:
    """Top-level defs and classes reached from ``seeds`` through the names their bodies
    read (``Keep.REACHED``): the hoist follows a wrapped function into the defs it calls,
    the shape-use analysis a project class's instance into its methods and bases."""
    defs = {n.name: n for n in tree.body if isinstance(n, _DEFS)}
    reached: set[str] = set()
    pending = [name for name in seeds if name in defs]
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        for node in walk(defs[name]):
            if isinstance(node, ast.Name) and node.id in defs:
                pending.append(node.id)
    return reached


def _declares_global(node: ast.stmt, walk: Walk) -> bool:
    """A def that rebinds module names: scope analysis must see those bindings."""
    return any(isinstance(n, ast.Global) for n in walk(node))


def _cut_lines(
    text: str, keep: Collection[Keep]
) -> tuple[list[str], list[bool], dict[int, str], dict[int, str]] | None:
    """(lines with endings, cut flag per line number from 1, stub per cut def's first
    line, the indentation of the def each cut line belongs to), or None if nothing is
    cut."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = python_lines(text)
    walk = Subtrees(tree).walk
    names = _imported_function_names(tree, walk)
    local = (
        re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b") if names else None
    )
    drop: list[ast.stmt] = []
    kept_text: list[str] = []
    kept_nodes: list[ast.stmt] = []
    for node in tree.body:
        span = _span(node)
        if not isinstance(node, _DEFS):
            kept_text.append("".join(lines[span[0] - 1 : span[1]]))
            kept_nodes.append(node)
            continue
        if not _mentions(lines, span, local):
            drop.append(node)
            continue
        if isinstance(node, ast.ClassDef):
            drop.extend(_class_members_to_drop(node, lines, local, walk, keep))
        kept_text.append("".join(lines[span[0] - 1 : span[1]]))
        kept_nodes.append(node)
    kept = "".join(kept_text)
    wanted = _function_call_names(kept_nodes, names, walk)
    if Keep.LOOP_CALLEES in keep:
        wanted |= _loop_callees(kept_nodes, names, walk)
    if Keep.CALLEES in keep:
        wanted |= _called_in_defs(kept_nodes, walk)
        wanted |= _classes_used_at_top(kept_nodes, walk)
    if Keep.REACHED in keep:
        wanted |= _reached(wanted, tree, walk)
    # a stub keeps a cut def's name bound for scope analysis; a name the kept code
    # never mentions needs none (thousands of tiny defs would cost a node each)
    referenced = set(_WORD.findall(kept))
    cut = [False] * (len(lines) + 1)
    heads: dict[int, str] = {}
    indents: dict[int, str] = {}
    read = _read_through_self(kept) | {"*"}  # what kept code reads through self
    for node in drop:
        if node.name in wanted:  # type: ignore[attr-defined]
            continue
        if Keep.GLOBAL_WRITERS in keep and _declares_global(node, walk):
            continue
        if Keep.ATTRIBUTE_WRITERS in keep:
            attributes, roots = _attribute_writes(node, walk)
            if attributes & read or roots & referenced:
                continue  # it may change what a cached per-call function reads
        start, end = _span(node)
        first = lines[start - 1]
        indent = first[: len(first) - len(first.lstrip())]
        for number in range(start, end + 1):
            cut[number] = True
            indents[number] = indent
        if node.name in referenced:  # type: ignore[attr-defined]
            heads[node.lineno] = _stub(node, lines[node.lineno - 1])
    return (lines, cut, heads, indents) if any(cut) else None


def _stub(node: ast.stmt, line: str) -> str:
    """``def name(): ...`` in place of a cut def's first line: the name stays bound."""
    indent = line[: len(line) - len(line.lstrip())]
    if isinstance(node, ast.ClassDef):
        return f"{indent}class {node.name}: ..."
    keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{indent}{keyword} {node.name}(*args, **kwargs): ..."


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def skeleton(text: str, keep: Collection[Keep] = ALL) -> str:
    """``text`` with the defs/classes that cannot hold a site, and that ``keep`` does not
    ask for, blanked out.

    Each keeps a one-line stub on its first line, as in ``marked_skeleton``: a name
    bound by a cut def stays bound, so scope analysis (which counts a name's bindings)
    sees the same as on the whole file. A run of cut lines becomes one string
    statement spanning them (``_blank``): each blank line would be three nodes for
    every metadata pass to walk (a quarter of all nodes of tf-models-official's
    skeletons).
    """
    found = _cut_lines(text, keep)
    if found is None:
        return text
    lines, cut, heads, indents = found
    return _blank(lines, cut, heads, indents)


def _blank(
    lines: list[str], cut: list[bool], heads: dict[int, str], indents: dict[int, str]
) -> str:
    """``lines`` with each cut line blank (or its stub), and every run of two or more
    cut lines at one indentation, stubs apart, one string statement: ``\"\"\"`` on its
    first line, ``\"\"\"`` on its last, same line numbers. A string statement binds
    nothing and calls nothing; the runs stand where whole defs stood."""
    out: list[str] = []
    number = 1
    count = len(lines)
    while number <= count:
        line = lines[number - 1]
        if not cut[number] or number in heads:
            out.append((heads[number] + _ending(line)) if number in heads else line)
            number += 1
            continue
        last = number
        indent = indents[number]
        while (
            last + 1 <= count
            and cut[last + 1]
            and last + 1 not in heads
            and indents[last + 1] == indent
        ):
            last += 1
        if last == number:
            out.append(_ending(line))
        else:
            out.append(f'{indent}"""{_ending(line)}')
            out.extend(_ending(lines[n - 1]) for n in range(number + 1, last))
            out.append(f'"""{_ending(lines[last - 1])}')
        number = last + 1
    return "".join(out)


@dataclass(frozen=True)
class MarkedSkeleton:
    """A skeleton whose cut lines are numbered comments, so a fix of it can be put back.

    ``fix`` parses this instead of the whole file. Every cut line becomes
    ``# <marker> <line number>``: comments parse anywhere, keep line numbers, and go
    wherever libcst moves their neighbours, so after fixing, each marker is replaced by
    the original line it stands for (``restore``). A cut def's own line becomes a stub
    (``def name(*args, **kwargs): ...  # <marker> <n>``), so scope analysis sees the
    name bound as often as in the whole file (a hoist counts bindings). Fixes
    that dropped or duplicated a marker cannot be put back: ``restore`` then returns
    None and the caller fixes the whole file instead.
    """

    text: str
    marker: str
    cut: dict[int, str]
    """Original lines (with their endings) by line number."""

    def restore(self, fixed: str) -> str | None:
        """``fixed`` (a fix of ``text``) with the cut lines back, or None if it cannot be."""
        pattern = re.compile(rf"(?:^|  )# {self.marker} (\d+)\s*$")
        out: list[str] = []
        expected = iter(sorted(self.cut))
        for line in python_lines(fixed):
            found = pattern.search(line)
            if found is None:
                if self.marker in line:
                    return None  # a marker moved into code or a string
                out.append(line)
                continue
            number = int(found.group(1))
            if number != next(expected, None):
                return None  # lost, repeated or reordered
            out.append(self.cut[number])
        if next(expected, None) is not None:
            return None
        return "".join(out)


def marked_skeleton(text: str, keep: Collection[Keep] = ALL) -> MarkedSkeleton | None:
    """The skeleton of ``text`` for fixing, or None when nothing can be cut."""
    found = _cut_lines(text, keep)
    if found is None:
        return None
    lines, cut, heads, _ = found
    import secrets  # fix only; check need not import hmac and OpenSSL for it

    marker = "autosig-cut-" + secrets.token_hex(6)
    out: list[str] = []
    originals: dict[int, str] = {}
    for number, line in enumerate(lines, start=1):
        if cut[number]:
            originals[number] = line
            stub = heads.get(number, "")
            out.append(f"{stub + '  ' if stub else ''}# {marker} {number}{_ending(line)}")
        else:
            out.append(line)
    return MarkedSkeleton("".join(out), marker, originals)


def reached_skeleton(text: str, names: Collection[str]) -> str:
    """``text`` cut down to what the top-level functions ``names`` can reach, for an
    analysis that follows a call into another module of the project.

    Kept: every statement that is not a top-level def or class (imports, assignments,
    ``if``/``try`` blocks with whatever they hold), the defs and classes ``names`` name,
    and, again and again, those named anywhere in kept code (a class whole), and every
    def with a ``global`` statement (it rebinds module names scope analysis sees). The
    rest is cut as ``skeleton`` cuts (same line numbers, a stub where kept code names
    it), so what the analysis finds in the kept functions is what it finds in the whole
    module. A module ``ast`` cannot parse is returned whole.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    walk = Subtrees(tree).walk
    defs: dict[str, list[ast.stmt]] = {}
    pending = list(names)
    for node in tree.body:
        if isinstance(node, _DEFS):
            defs.setdefault(node.name, []).append(node)
            if _declares_global(node, walk):
                pending.append(node.name)
        else:
            pending.extend(n.id for n in walk(node) if isinstance(n, ast.Name))
    reached: set[str] = set()
    while pending:
        name = pending.pop()
        if name in reached or name not in defs:
            continue
        reached.add(name)
        for node in defs[name]:
            pending.extend(n.id for n in walk(node) if isinstance(n, ast.Name))
    lines = python_lines(text)
    cut_nodes = [n for n in tree.body if isinstance(n, _DEFS) and n.name not in reached]
    if not cut_nodes:
        return text
    cut = [False] * (len(lines) + 1)
    indents: dict[int, str] = {}
    for node in cut_nodes:
        start, end = _span(node)
        first = lines[start - 1]
        for number in range(start, end + 1):
            cut[number] = True
            indents[number] = first[: len(first) - len(first.lstrip())]
    kept = "".join(line for number, line in enumerate(lines, start=1) if not cut[number])
    referenced = set(_WORD.findall(kept))
    heads = {
        node.lineno: _stub(node, lines[node.lineno - 1])
        for node in cut_nodes
        if node.name in referenced
    }
    return _blank(lines, cut, heads, indents)
