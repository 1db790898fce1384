"""Cut a file down to the parts static rules can report on, keeping every line number.

libcst metadata costs about 1 ms a line; most lines of a file that holds a tf.function
are in functions that hold none. ``check`` only reports inside traced code, so it can
parse a *skeleton*: the same text with every top-level function or class (and every
method of a kept class) that cannot matter replaced by blank lines, its first line by a
stub (``def name(*args, **kwargs): ...``) when the kept code names it. Line and
column numbers are unchanged, so findings are identical. ``fix`` parses a marked skeleton
(``marked_skeleton``) and puts the cut lines back into its output.

What is kept: every statement that is not a def/class (imports, assignments, loops), a
def/class whose text may hold a site (``files.PREFILTER`` or a name imported as
tensorflow's ``function``); in a kept class, the methods that hold a site, ``__init__``,
and every method assigning a ``self`` attribute those use; any def named as the
target of a ``function(...)`` call form in the kept text (found with ``ast``), every
def a loop creating a tf.function calls, every def a kept def calls (the shape-use
analysis follows traced code into them), every class kept module-level code calls
(``keras.Sequential([Patches()])``, ``loss_fn = SumOverBatch()``) or a kept class
derives from (the analysis follows an instance's call into its class), the methods a
kept method calls through ``self``, and the top-level defs and classes those reach by name
(AS106's hoist reads them); every def with a ``global`` statement (it rebinds module
names the hoist and AS103 check); and every def that stores into, deletes or mutates
an attribute the kept code reads through ``self``, or uses setattr/vars/__dict__
(AS106's per-instance cache must see every change to what the trace reads). A
file ``ast`` cannot parse is returned whole (libcst then reports it, or parses syntax
newer than this Python's).
"""

from __future__ import annotations

import ast
import re
import secrets
from dataclasses import dataclass

from autosig.source.files import PREFILTER

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_WORD = re.compile(r"[A-Za-z_]\w*")


def _span(node: ast.stmt) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return start, node.end_lineno or node.lineno


def _imported_function_names(tree: ast.Module) -> set[str]:
    """Local names bound by ``from tensorflow... import function [as name]``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tensorflow"):
            names.update(a.asname or a.name for a in node.names if a.name == "function")
    return names


def _mentions(lines: list[str], span: tuple[int, int], local: re.Pattern[str] | None) -> bool:
    segment = "".join(lines[span[0] - 1 : span[1]])
    if PREFILTER.search(segment.encode()) is not None:
        return True
    return local is not None and local.search(segment) is not None


_SELF_USE = re.compile(r"self\s*\.\s*([A-Za-z_]\w*)")


def _self_stores(method: ast.stmt) -> set[str]:
    """Attributes of ``self`` the method assigns or deletes, in any form: ``self.n = 0``,
    ``self.n: int = 0``, ``(self.n) += 1``, ``self.a, self.b = ...``, ``for self.i in``."""
    return {
        node.attr
        for node in ast.walk(method)
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


def _attribute_writes(node: ast.AST) -> tuple[set[str], set[str]]:
    """What a def may change on objects it does not create: attribute names stored,
    deleted, item-stored or mutated through (``p.limit = 2``, ``self.cfg["a"] = 1``,
    ``self.items.append(x)``), the outside names at the root of such a change
    (``CFG["k"] += 1``), and ``"*"`` for setattr/vars/__dict__ (among the attributes).
    AS106's per-instance cache is safe only if no code of the file changes what the
    cached trace reads. Returns (attribute names, root names)."""
    names: set[str] = set()
    roots: set[str] = set()
    local = _local_names(node)

    def chain(expr: ast.AST) -> None:
        while isinstance(expr, (ast.Attribute, ast.Subscript)):
            if isinstance(expr, ast.Attribute):
                names.add(expr.attr)
            expr = expr.value
        if isinstance(expr, ast.Name) and expr.id not in local:
            roots.add(expr.id)

    for sub in ast.walk(node):
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


def _local_names(node: ast.AST) -> set[str]:
    """Names a def binds for itself (parameters, assignments not declared global)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    declared = {n for sub in ast.walk(node) if isinstance(sub, ast.Global) for n in sub.names}
    args = node.args
    bound = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    bound |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    bound |= {
        sub.id
        for sub in ast.walk(node)
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)
    }
    return bound - declared


def _class_members_to_drop(
    node: ast.ClassDef, lines: list[str], local: re.Pattern[str] | None
) -> list[ast.stmt]:
    """Methods of a kept class that neither hold a site nor set an attribute one uses.

    Rules look at the rest of the class only for the ``self.<attr>`` the traced methods
    use (AS103 needs every assignment of a mutated attribute, AS104/AS105 whether it
    holds a tensor), so every method assigning such an attribute is kept.
    """
    methods = [m for m in node.body if isinstance(m, _DEFS)]
    texts = {id(m): "".join(lines[_span(m)[0] - 1 : _span(m)[1]]) for m in methods}
    traced = [m for m in methods if _mentions(lines, _span(m), local)]
    relevant = traced + [m for m in methods if m.name == "__init__" and m not in traced]
    used = {a for m in traced for a in _SELF_USE.findall(texts[id(m)])}
    # methods the traced ones call (self.helper(x)), and those they call: the shape-use
    # analysis follows them
    called = [m for m in methods if m.name in used and m not in relevant]
    while called:
        relevant.extend(called)
        used |= {a for m in called for a in _SELF_USE.findall(texts[id(m)])}
        called = [m for m in methods if m.name in used and m not in relevant]
    drop = []
    for m in methods:
        if m in relevant or _self_stores(m) & used or _attribute_writes(m)[0] & (used | {"*"}):
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


def _function_call_names(nodes: list[ast.stmt], local: set[str]) -> set[str]:
    """Names read in the arguments of ``<alias>.function(...)`` calls (and ``(...)(f)``),
    with the methods named as ``self.f``: the regexes miss ``func=self.f`` and options
    holding parentheses, ``function(input_signature=(...))(self.f)``."""

    names: set[str] = set()
    for node in nodes:
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and _is_function(call.func, local):
                for arg in (*call.args, *(k.value for k in call.keywords)):
                    for n in ast.walk(arg):
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


def _loop_callees(nodes: list[ast.stmt], local: set[str]) -> set[str]:
    """Names called in loops that create a tf.function: AS106's hoist reads those defs
    (a helper the loop calls may change what the trace reads)."""
    loops = (ast.For, ast.AsyncFor, ast.While)
    names: set[str] = set()
    for node in nodes:
        for loop in ast.walk(node):
            if not isinstance(loop, loops):
                continue
            inside = list(ast.walk(loop))
            if any(isinstance(c, ast.Call) and _is_function(c.func, local) for c in inside):
                names.update(
                    c.func.id
                    for c in inside
                    if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                )
    return names


def _called_in_defs(nodes: list[ast.stmt]) -> set[str]:
    """Names called inside kept defs: the shape-use analysis follows traced code into
    the project functions it calls (a helper reading ``x.shape[0]``)."""
    return {
        call.func.id
        for node in nodes
        if isinstance(node, _DEFS)
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    }


def _classes_used_at_top(nodes: list[ast.stmt]) -> set[str]:
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
        for call in ast.walk(node):
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


def _reached(seeds: set[str], tree: ast.Module) -> set[str]:
    """Top-level defs and classes reached from ``seeds`` through the names their
    bodies read.

    AS106's hoist follows a wrapped function into the defs of the file it calls (what
    they read decides whether the move is safe), and the shape-use analysis follows a
    project class's instance into its methods and base classes, so those must not be cut.
    """
    defs = {n.name: n for n in tree.body if isinstance(n, _DEFS)}
    reached: set[str] = set()
    pending = [name for name in seeds if name in defs]
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        for node in ast.walk(defs[name]):
            if isinstance(node, ast.Name) and node.id in defs:
                pending.append(node.id)
    return reached


def _declares_global(node: ast.stmt) -> bool:
    """A def that rebinds module names: scope analysis must see those bindings."""
    return any(isinstance(n, ast.Global) for n in ast.walk(node))


def _cut_lines(text: str) -> tuple[list[str], list[bool], dict[int, str]] | None:
    """(lines with endings, cut flag per line number from 1, stub per cut def's first
    line), or None if nothing is cut."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = python_lines(text)
    names = _imported_function_names(tree)
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
            drop.extend(_class_members_to_drop(node, lines, local))
        kept_text.append("".join(lines[span[0] - 1 : span[1]]))
        kept_nodes.append(node)
    kept = "".join(kept_text)
    wanted = _function_call_names(kept_nodes, names)
    wanted |= _loop_callees(kept_nodes, names)
    wanted |= _called_in_defs(kept_nodes)
    wanted |= _classes_used_at_top(kept_nodes)
    wanted |= _reached(wanted, tree)
    # a stub keeps a cut def's name bound for scope analysis; a name the kept code
    # never mentions needs none (thousands of tiny defs would cost a node each)
    referenced = set(_WORD.findall(kept))
    cut = [False] * (len(lines) + 1)
    heads: dict[int, str] = {}
    read = set(_SELF_USE.findall(kept)) | {"*"}  # what kept code reads through self
    for node in drop:
        if node.name in wanted or _declares_global(node):  # type: ignore[attr-defined]
            continue
        attributes, roots = _attribute_writes(node)
        if attributes & read or roots & referenced:
            continue  # it may change what a cached per-call function reads
        start, end = _span(node)
        for number in range(start, end + 1):
            cut[number] = True
        if node.name in referenced:  # type: ignore[attr-defined]
            heads[node.lineno] = _stub(node, lines[node.lineno - 1])
    return (lines, cut, heads) if any(cut) else None


def _stub(node: ast.stmt, line: str) -> str:
    """``def name(): ...`` in place of a cut def's first line: the name stays bound."""
    indent = line[: len(line) - len(line.lstrip())]
    if isinstance(node, ast.ClassDef):
        return f"{indent}class {node.name}: ..."
    keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{indent}{keyword} {node.name}(*args, **kwargs): ..."


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def skeleton(text: str) -> str:
    """``text`` with the defs/classes that cannot hold a site blanked out.

    Each keeps a one-line stub on its first line, as in ``marked_skeleton``: a name
    bound by a cut def stays bound, so AS106 judges a hoist (and so AS107 what is
    re-created) the same as on the whole file.
    """
    found = _cut_lines(text)
    if found is None:
        return text
    lines, cut, heads = found
    return "".join(
        (heads.get(number, "") + _ending(line)) if cut[number] else line
        for number, line in enumerate(lines, start=1)
    )


@dataclass(frozen=True)
class MarkedSkeleton:
    """A skeleton whose cut lines are numbered comments, so a fix of it can be put back.

    ``fix`` parses this instead of the whole file. Every cut line becomes
    ``# <marker> <line number>``: comments parse anywhere, keep line numbers, and go
    wherever libcst moves their neighbours, so after fixing, each marker is replaced by
    the original line it stands for (``restore``). A cut def's own line becomes a stub
    (``def name(*args, **kwargs): ...  # <marker> <n>``), so scope analysis sees the
    name bound as often as in the whole file (AS106's hoist counts bindings). Fixes
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


def marked_skeleton(text: str) -> MarkedSkeleton | None:
    """The skeleton of ``text`` for fixing, or None when nothing can be cut."""
    found = _cut_lines(text)
    if found is None:
        return None
    lines, cut, heads = found
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
