"""AS106: ``tf.function`` created inside a loop or on every call."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst
import libcst.matchers as m

from autosig.discover import FunctionSite
from autosig.rules.base import Invalid, Rule, Violation
from autosig.rules.context import RuleContext

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

SETUP_FUNCTIONS = frozenset({"__init__", "__post_init__", "build", "setup", "setUp", "main"})
"""Functions that run once by convention: creating a tf.function there is the pattern."""

COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class FunctionCreatedPerCall(Rule):
    """## What it does
    Finds `tf.function`s created where they are re-created over and over: inside a loop,
    created and called in one expression (`tf.function(f)(x)`), or created in the body
    of a function that then calls it (so every call of the outer function makes a new
    one).

    ## Why is this bad?
    Traces are cached per `tf.function` object. A new object has an empty cache, so
    every creation means a full trace again: no retracing warning, just a function
    that is much slower than eager code.

    This rule looks at where functions are created, so unlike the others it also
    reports code outside any tf.function. Creation at module level, in a class body,
    in `__init__`/`build`/`setup`/`main` or a `test*` function, in a factory that
    returns the function, stored on `self`, or used in a loop of the creating function
    (created once per run) is not reported; neither is creation while another
    tf.function is traced (once per trace, not per call).

    ## Example
    ```python
    def predict(model, x):
        fn = tf.function(model)
        return fn(x)
    ```

    ## Use instead
    ```python
    class Predictor:
        def __init__(self, model):
            self.fn = tf.function(model)

        def predict(self, x):
            return self.fn(x)
    ```

    ## Fix safety
    No automatic fix: moving the creation changes which objects the function closes
    over.
    """

    code = "AS106"
    name = "function-created-per-call"
    summary = "tf.function created inside a loop or on every call"
    fix_safety = "none"
    VALID = [
        "import tensorflow as tf\ndef step(x):\n    return x\nfast = tf.function(step)\n"
        "for x in range(3):\n    fast(x)\n",
        "import tensorflow as tf\nclass M:\n    def __init__(self, model):\n"
        "        self.fn = tf.function(model)\n",
        "import tensorflow as tf\ndef make(model):\n    fn = tf.function(model)\n    return fn\n",
        "import tensorflow as tf\ndef make(model):\n    @tf.function\n"
        "    def fn(x):\n        return model(x)\n    return fn\n",
        "import tensorflow as tf\ndef train(model, data):\n    @tf.function\n"
        "    def step(x):\n        return model(x)\n    for x in data:\n        step(x)\n",
        "import tensorflow as tf\nclass M:\n    def compile(self, model):\n"
        "        self.fn = tf.function(model)\n",
        "import tensorflow as tf\ndef test_double():\n    @tf.function\n"
        "    def double(x):\n        return 2 * x\n    assert double(1) == 2\n",
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\ndef step(x):\n    return x\n"
            "for x in range(3):\n    fast = tf.function(step)\n    fast(x)\n"
        ),
        Invalid(
            "import tensorflow as tf\ndef predict(model, x):\n    return tf.function(model)(x)\n"
        ),
        Invalid(
            "import tensorflow as tf2\ndef predict(model, x):\n"
            "    fn = tf2.function(jit_compile=True)(model)\n    return fn(x)\n"
        ),
        Invalid(
            "import tensorflow as tf\ndef predict(model, x):\n    @tf.function\n"
            "    def fn(y):\n        return model(y)\n    return fn(x)\n"
        ),
        Invalid(
            "import tensorflow as tf\nsteps = [tf.function(lambda x: x * k) for k in range(3)]\n"
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterable[Violation]:
        traced = {id(s.function) for s in ctx.sites if s.function is not None}
        for site in ctx.sites:
            creation = _creation(ctx, site)
            if creation is None:
                continue
            name = site.site.qualname
            outer, in_loop = _context(ctx, creation)
            if in_loop:
                yield Violation(creation, LOOP_MESSAGE.format(name=name), function=name)
                continue
            if outer is None or _inside_traced(ctx, outer, traced):
                continue
            parent = ctx.parent(creation)
            if isinstance(parent, cst.Call) and parent.func is creation:
                yield Violation(creation, CALLED_AT_ONCE_MESSAGE.format(name=name), function=name)
                continue
            if isinstance(outer, cst.FunctionDef) and _created_per_call(ctx, site, creation, outer):
                yield Violation(
                    creation,
                    PER_CALL_MESSAGE.format(name=name, outer=outer.name.value),
                    function=name,
                )


def _creation(ctx: RuleContext, site: FunctionSite) -> cst.CSTNode | None:
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


def _context(ctx: RuleContext, creation: cst.CSTNode) -> tuple[cst.CSTNode | None, bool]:
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


def _inside_traced(ctx: RuleContext, node: cst.CSTNode, traced: set[int]) -> bool:
    """Created while another tf.function is traced: once per trace, not per call."""
    return any(id(n) in traced for n in (node, *ctx.ancestors(node)))


def _created_per_call(
    ctx: RuleContext, site: FunctionSite, creation: cst.CSTNode, outer: cst.FunctionDef
) -> bool:
    """Created in ``outer`` and called there outside any loop, never handed out."""
    if outer.name.value in SETUP_FUNCTIONS or outer.name.value.startswith("test"):
        return False  # set-up code and tests run once
    bound = _bound_name(ctx, site, creation)
    if bound is None:
        return False  # stored on self, in a dict, passed on: it may well be cached
    if m.findall(outer.body, m.Global() | m.Nonlocal()):
        for declaration in m.findall(outer.body, m.Global() | m.Nonlocal()):
            if any(item.name.value == bound for item in declaration.names):
                return False
    called_once = False
    for use in m.findall(outer.body, m.Name(bound)):
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


def _is_decorated_name(parent: cst.CSTNode | None, use: cst.Name) -> bool:
    return isinstance(parent, cst.FunctionDef) and parent.name is use


def _bound_name(ctx: RuleContext, site: FunctionSite, creation: cst.CSTNode) -> str | None:
    if isinstance(creation, cst.Decorator):
        function = site.function
        return function.name.value if isinstance(function, cst.FunctionDef) else None
    parent = ctx.parent(creation)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
    return None
