"""AS106's analysis: which tf.function objects are created again and again, and their fix.

A creation inside a loop (or comprehension), one created and called at once, and one
made in the body of a function that then calls it (so every call makes a new one) is
re-created; for each, the hoist out of the loop (``hoist.py``) or the cache on the
instance (``cache.py``) that makes it once, when there is one, and how safe. Takes a
``FileContext``: the result is a fact the rule context holds
(``RuleContext.recreated``) for AS106, AS107 and the fix engine.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from autosig.rules.as106.cache import CacheFix, CacheNames, plan_cache
from autosig.rules.as106.hoist import _Index, plan_hoists
from autosig.rules.file_context import FileContext
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite
from autosig.source.metadata import iter_tree

LOOP_MESSAGE = (
    "tf.function `{name}` is created inside a loop: every iteration makes a new function "
    "that traces again; create it once, before the loop"
)
CALLED_AT_ONCE_MESSAGE = (
    "tf.function `{name}` is created and called at once: every time this line runs it "
    "builds and traces a new function; create it once (module level or __init__) and "
    "call that"
)
PER_CALL_MESSAGE = (
    "tf.function `{name}` is created on every call of `{outer}`, so every call traces "
    "again; create it once (module level, __init__) or cache it"
)

CODE = "AS106"
"""The code whose suppression comment keeps a creation where it is."""

SETUP_FUNCTIONS = frozenset({"__init__", "__post_init__", "build", "setup", "setUp", "main"})
"""Functions that run once by convention: creating a tf.function there is the pattern."""

COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def recreated_site_violations(ctx: FileContext) -> Iterator[tuple[FunctionSite, Violation]]:
    """Each re-created site with its violation (and the hoist or per-instance cache fix,
    when there is one): what ``RuleContext.recreated`` holds once per parse."""
    traced = {id(s.function) for s in ctx.sites if s.function is not None}
    created = [(site, _creation(ctx, site)) for site in ctx.sites]
    movable = [
        c
        for site, c in created
        if isinstance(c, cst.Call) and _context(ctx, c)[1] and not _suppressed(ctx, site, c)
    ]
    hoists = plan_hoists(ctx, movable)  # together: creations sharing a loop move at once
    index, names = _Index(), CacheNames(ctx)
    for site, creation in created:
        if creation is None:
            continue
        name = site.site.qualname
        outer, in_loop = _context(ctx, creation)
        if in_loop:
            hoist = hoists.get(id(creation))
            yield (
                site,
                Violation(
                    creation,
                    LOOP_MESSAGE.format(name=name),
                    edits={hoist.loop: hoist.replacement} if hoist is not None else {},
                    function=name,
                    fix_safety=hoist.safety if hoist is not None else None,
                ),
            )
            continue
        if outer is None or _inside_traced(ctx, outer, traced):
            continue
        parent = ctx.parent(creation)
        per_call = isinstance(parent, cst.Call) and parent.func is creation
        if per_call:
            message = CALLED_AT_ONCE_MESSAGE.format(name=name)
        elif isinstance(outer, cst.FunctionDef) and _created_per_call(ctx, site, creation, outer):
            message = PER_CALL_MESSAGE.format(name=name, outer=outer.name.value)
        else:
            continue
        cache = None
        if isinstance(outer, cst.FunctionDef) and not _runs_once(outer):
            cache = plan_cache(ctx, index, names, site, creation, outer)
        yield site, _cache_violation(creation, message, name, cache)


def _runs_once(function: cst.FunctionDef) -> bool:
    """Set-up code and tests: a creation there is made once, caching gains nothing."""
    return function.name.value in SETUP_FUNCTIONS or function.name.value.startswith("test")


def _cache_violation(
    creation: cst.CSTNode, message: str, name: str, cache: CacheFix | None
) -> Violation:
    """The per-call finding, with the fix that caches the function on the instance."""
    if cache is None:
        return Violation(creation, message, function=name)
    if cache.why_unsafe:
        message += (
            "; caching it on the instance is unsafe (each call traced anew and saw each change): "
            + "; ".join(cache.why_unsafe)
        )
    return Violation(
        creation, message, edits=dict(cache.edits), function=name, fix_safety=cache.safety
    )


def _suppressed(ctx: FileContext, site: FunctionSite, creation: cst.CSTNode) -> bool:
    """``# autosig: ignore[AS106]`` on it: another creation's hoist must not move it."""
    suppressions = ctx.suppressions
    return bool(suppressions) and suppressions.is_suppressed(
        CODE, ctx.suppression_lines(creation, site)
    )


def _creation(ctx: FileContext, site: FunctionSite) -> cst.CSTNode | None:
    """The node that makes the tf.function object (decorator or outermost call)."""
    if site.decorator is not None:
        return site.decorator
    call = site.call
    if call is None:
        return None
    parent = ctx.parent(call)
    wraps = any(a.keyword is None or a.keyword.value == "func" for a in call.args)
    if isinstance(parent, cst.Call) and parent.func is call and not wraps:
        return parent  # tf.function(jit_compile=True)(f)
    return call


def _context(ctx: FileContext, creation: cst.CSTNode) -> tuple[cst.CSTNode | None, bool]:
    """(enclosing function or None at module/class level, created in a loop?)."""
    start = ctx.parent(creation) if isinstance(creation, cst.Decorator) else creation
    for ancestor in ctx.ancestors(start):  # type: ignore[arg-type]
        if isinstance(ancestor, (cst.For, cst.While, *COMPREHENSIONS)):
            return None, True
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return ancestor, False
        if isinstance(ancestor, (cst.ClassDef, cst.Module)):
            return None, False
    return None, False


def _inside_traced(ctx: FileContext, node: cst.CSTNode, traced: set[int]) -> bool:
    """Created while another tf.function is traced: once per trace, not per call."""
    return any(id(n) in traced for n in (node, *ctx.ancestors(node)))


def _created_per_call(
    ctx: FileContext, site: FunctionSite, creation: cst.CSTNode, outer: cst.FunctionDef
) -> bool:
    """Created in ``outer`` and called there outside any loop, never handed out."""
    if _runs_once(outer):
        return False  # set-up code and tests run once
    bound = _bound_name(ctx, site, creation)
    if bound is None:
        # stored on self, in a dict, passed on: it may well be cached, unless the method
        # stores it on self unconditionally and calls it there
        return _stored_and_called(ctx, creation, outer)
    nodes = list(iter_tree(outer.body))
    for declaration in nodes:
        if isinstance(declaration, (cst.Global, cst.Nonlocal)) and any(
            item.name.value == bound for item in declaration.names
        ):
            return False
    called_once = False
    uses = [n for n in nodes if isinstance(n, cst.Name) and n.value == bound]
    for use in uses:
        parent = ctx.parent(use)
        if isinstance(parent, cst.Call) and parent.func is use:
            if ctx.enclosing_loop(parent) is not None:
                return False  # used many times per creation: the train-loop pattern
            called_once = True
        elif isinstance(parent, (cst.FunctionDef, cst.AssignTarget)) or _is_decorated_name(
            parent, use
        ):
            continue
        else:
            return False  # returned, stored or passed on
    return called_once


def _stored_and_called(ctx: FileContext, creation: cst.CSTNode, outer: cst.FunctionDef) -> bool:
    """``self.fn = tf.function(...)`` as a statement of the method's own body (run on
    every call, not under an ``if`` that caches it) and ``self.fn(...)`` called there."""
    assign = ctx.parent(creation)
    if not isinstance(assign, cst.Assign) or assign.value is not creation:
        return False
    line = ctx.parent(assign)
    if len(assign.targets) != 1 or line is None or ctx.parent(line) is not outer.body:
        return False
    target = assign.targets[0].target
    first = (*outer.params.posonly_params, *outer.params.params)
    if not (
        first
        and isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == first[0].name.value
    ):
        return False
    code = ctx.code(target)
    return any(
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and ctx.code(node.func) == code
        and ctx.enclosing_function(node) is outer
        for node in iter_tree(outer.body)
    )


def _is_decorated_name(parent: cst.CSTNode | None, use: cst.Name) -> bool:
    return isinstance(parent, cst.FunctionDef) and parent.name is use


def _bound_name(ctx: FileContext, site: FunctionSite, creation: cst.CSTNode) -> str | None:
    if isinstance(creation, cst.Decorator):
        function = site.function
        return function.name.value if isinstance(function, cst.FunctionDef) else None
    parent = ctx.parent(creation)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
    return None
