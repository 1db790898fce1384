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

Where the creation is, whether the fix is offered and the code it writes are here;
whether what the cached trace reads can change (the safety verdict) is
``cache_safety.py``, which judges the same creation (``CreationForm``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ScopeProvider

from autosig.rules.as106.cache_safety import (
    CachedTrace,
    CreationForm,
    Verdict,
    judge_class,
    judge_copies,
    judge_project_copies,
    self_parameter,
)
from autosig.rules.as106.hoist import (
    _Index,
    _is_load,
    _unrecorded_bindings,
    _wrapped,
)
from autosig.rules.file_context import FileContext
from autosig.source.discover import FunctionSite
from autosig.source.metadata import iter_tree
from autosig.source.sites import FixSafety

CACHE_PREFIX = "_autosig_"
"""Start of the attribute that holds a cached function (the rest names where it came from)."""

MAGIC_ATTRIBUTE_METHODS = frozenset({"__getattr__", "__getattribute__", "__setattr__"})


@dataclass(frozen=True)
class CacheFix:
    """The edits that cache one per-call creation on the instance, and how safe they are."""

    edits: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement]]
    safety: FixSafety
    why_unsafe: tuple[str, ...] = ()


class CacheNames:
    """Names the fixes of one pass made up, so two creations never share one."""

    def __init__(self, ctx: FileContext) -> None:
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
    ctx: FileContext,
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
    self_name = self_parameter(method)
    if self_name is None or _class_blocks_attributes(cls):
        return None
    form = _form(ctx, site, creation, method, names)
    if form is None or ctx.parent(form.statement) is not method.body:
        return None
    if not _bound_once(ctx, index, form, method, self_name):
        return None
    verdict = Verdict()
    judge_class(cls, verdict)
    judge_copies(ctx, cls, verdict)
    judge_project_copies(ctx, verdict)
    analysis = CachedTrace(ctx, index, cls, method, self_name, verdict)
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


def _form(
    ctx: FileContext,
    site: FunctionSite,
    creation: cst.CSTNode,
    method: cst.FunctionDef,
    names: CacheNames,
) -> CreationForm | None:
    if isinstance(creation, cst.Decorator):
        function = site.function
        if not isinstance(function, cst.FunctionDef):
            return None
        return CreationForm(function, function.name.value, "def", creation)
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
            return CreationForm(line, target.value, "assign", creation)
        return None
    if isinstance(parent, cst.Call) and parent.func is creation:
        line = _plain_statement(ctx, parent, method)
        if line is None:
            return None
        used = {n.value for n in _names_in(method)}
        local = names.fresh(_local_base(_wrapped(creation)), used)
        return CreationForm(line, local, "call", creation)
    return None


def _plain_statement(
    ctx: FileContext, node: cst.CSTNode, method: cst.FunctionDef
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
    ctx: FileContext, index: _Index, form: CreationForm, method: cst.FunctionDef, self_name: str
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
    ctx: FileContext, index: _Index, form: CreationForm, method: cst.FunctionDef
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
        if isinstance(parent, cst.AssignTarget) and ctx.is_within(parent, form.statement):
            continue  # name = tf.function(...)
        if isinstance(parent, cst.Call) and parent.func is name:
            if any(arg.star == "**" for arg in parent.args):
                return None  # the keyword it would get might be in there
            calls.append(parent)
        elif not (isinstance(parent, cst.FunctionDef) and parent.name is name):
            return None
    return calls


# -- the edits -------------------------------------------------------------------------------


def _edits(
    ctx: FileContext,
    form: CreationForm,
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
        inner_calls = [c for c in calls if ctx.is_within(c, statement)]
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
