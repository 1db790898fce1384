"""Call-site edits: wrap a recorded call's argument in ``tf.constant(value, dtype)``.

The plan (``autosig.infer.call_site_plan.plan_call_sites``) names the parameters and the
recorded call sites (file, line, column, enclosing scope). Here each site of this file is found again with
libcst: the call must start where the profile says (the line is counted from the
enclosing function's first line, so edits above that function do not matter) and must
call the function by its name. A site is skipped, and said why, when that line holds no
such call any more (a stale profile), when the call passes arguments through
``*args``/``**kwargs`` or otherwise than when it was recorded, or when the argument
already is a tensor. Wrapping ``x`` into ``tf.constant(x, tf.int32)`` keeps everything
around it byte for byte, and an argument already wrapped that way counts as done, so a
second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

import libcst as cst

from autosig.analysis.dataset_loops import callee_name
from autosig.analysis.instance_bindings import Refused
from autosig.analysis.python_values import find_function, short_code
from autosig.analysis.static_dtypes import argument_dtype
from autosig.infer.guarded_trace_placement import MARK
from autosig.infer.plan import ArgumentPosition, FunctionPlan, TensorizedParam
from autosig.profile.format import CallSite
from autosig.rewrite.instance_seeds import InstanceSeed, instance_seeds
from autosig.rules.context import RuleContext
from autosig.rules.violation import ImportNeeded
from autosig.source.metadata import PositionProvider

SHIFT_TOLERANCE = 3
"""Lines below the recorded one searched for a call already rewritten (an import autosig
added above module-level code moves it down)."""

STALE = (
    "no call of {callee} starts there any more (changed since profiling? re-run autosig profile)"
)


@dataclass(frozen=True)
class SiteOutcome:
    """What became of one recorded call site of one function in this file."""

    entry: FunctionPlan
    site: CallSite
    line: int
    """Where the call is now (the recorded line when it was not found)."""
    wrapped: tuple[TensorizedParam, ...] = ()
    """Arguments rewritten here."""
    problem: str | None = None
    """Why the site was skipped (None: rewritten, or already passing tensors)."""
    call: cst.Call | None = field(default=None, compare=False)
    """The call found for it."""

    def describe(self) -> str:
        callee = self.entry.qualname
        if self.problem is not None:
            return f"line {self.line}: call of {callee} not rewritten: {self.problem}"
        wraps = ", ".join(
            f"`{p.name}` as tf.constant(...)"
            if p.default_dtype
            else f"`{p.name}` as tf.constant(..., tf.{p.dtype})"
            for p in self.wrapped
        )
        return f"line {self.line}: call of {callee} passes {wraps}"


@dataclass
class CallSiteEdits:
    """Edits for every planned call site of one file, and what became of each site."""

    targets: dict[int, tuple[cst.Arg, str | None]] = field(default_factory=dict)
    """id of an argument node -> (that node, the dtype it is wrapped with; None:
    TensorFlow's own for the value, ``tf.constant(x)``)."""
    claims: dict[int, set[str]] = field(default_factory=dict)
    """id of an argument node -> the dtypes planned functions want for it."""
    imports: list[ImportNeeded] = field(default_factory=list)
    outcomes: list[SiteOutcome] = field(default_factory=list)
    seeds: list[InstanceSeed] = field(default_factory=list)
    """A method's seeds after the statements making its instances (``instance_seeds``)."""

    @property
    def changes(self) -> bool:
        return bool(self.targets) or any(s.seed is not None for s in self.seeds)


def entries_for_file(entries: Sequence[FunctionPlan], path: str) -> list[FunctionPlan]:
    """Plan entries with a call site in ``path`` (a profile path), safe or not."""
    return [
        entry
        for entry in entries
        if entry.call_sites is not None
        and not entry.stale
        and any(site.path == path for site in entry.call_sites.sites)
    ]


def call_site_edits(ctx: RuleContext, entries: Sequence[FunctionPlan], path: str) -> CallSiteEdits:
    """Find each planned call site of ``path`` in ``ctx`` and decide its edits."""
    out = CallSiteEdits()
    calls = _CallIndex(ctx)
    for entry in entries:
        plan = entry.call_sites
        assert plan is not None
        for site in plan.sites:
            if site.path != path:
                continue
            outcome = _one_site(ctx, calls, entry, site, out)
            out.outcomes.append(outcome)
    _drop_conflicts(out)
    for entry in entries:
        if entry.seeded_at_instances:
            calls = [
                (o.line, o.call)
                for o in out.outcomes
                if o.entry is entry and o.call is not None and o.problem is None
            ]
            out.seeds.extend(instance_seeds(ctx, entry, calls))
    if out.changes:
        out.imports = ctx.tf_imports()
    return out


def unpassed_tensors(entry: FunctionPlan, texts: Mapping[str, str]) -> Refused | None:
    """Why some recorded call site of ``entry`` would not pass every planned tensor (a
    dry run of the edits on ``texts``, profile path -> source), None where each would
    or already does: a seeding trace paired with them (``infer/paired_trace.py``) helps
    only then. ``Refused.changes``: the site's caller changes what the trace reads."""
    plan = entry.call_sites
    assert plan is not None
    for path in sorted({site.path for site in plan.sites if site.path is not None}):
        text = texts.get(path)
        if text is None:
            return Refused(f"{path} is not among the files fixed")
        ctx = RuleContext.from_text(text, path)
        edits = call_site_edits(ctx, [entry], path)
        for seed in edits.seeds:
            if seed.problem is not None:
                return Refused(f"{path}: {seed.describe()}", seed.changes)
        for outcome in edits.outcomes:
            if outcome.problem is not None:
                return Refused(f"{path}: {outcome.describe()}")
            call = outcome.call
            for param in plan.params:
                arg = _argument(call, param) if call is not None else None
                done = param in outcome.wrapped or (
                    arg is not None and _is_wrapped(ctx, arg.value, param)
                )
                if arg is not None and not done:
                    return Refused(
                        f"{path}:{outcome.line}: `{param.name}` is not passed as a tensor"
                    )
    return None


def _drop_conflicts(out: CallSiteEdits) -> None:
    """One call expression reaching two planned functions (``obj.method`` of two classes)
    that want other dtypes for the same argument: neither dtype is right for both."""
    conflicts = {ident for ident, dtypes in out.claims.items() if len(dtypes) > 1}
    if not conflicts:
        return
    for index, outcome in enumerate(out.outcomes):
        if not outcome.wrapped:
            continue
        assert outcome.call is not None
        clash = [p for p in outcome.wrapped if id(_argument(outcome.call, p)) in conflicts]
        if not clash:
            continue
        kept = tuple(p for p in outcome.wrapped if p not in clash)
        problem = None if kept else "another function called here wants another dtype"
        out.outcomes[index] = replace(outcome, wrapped=kept, problem=problem)
    for ident in conflicts:
        out.targets.pop(ident, None)


def apply_call_site_edits(module: cst.Module, edits: CallSiteEdits, tf: str) -> cst.Module:
    """``module`` with every target argument wrapped (nested targets compose) and every
    instance seed after its binding."""
    if not edits.changes:
        return module
    seeds = {id(s.statement): s.seed for s in edits.seeds if s.seed is not None}
    return module.visit(_Wrap(edits.targets, tf, seeds))


class _Wrap(cst.CSTTransformer):
    def __init__(
        self,
        targets: dict[int, tuple[cst.Arg, str | None]],
        tf: str,
        seeds: dict[int, cst.BaseStatement],
    ) -> None:
        super().__init__()
        self.targets = targets
        self.tf = tf
        self.seeds = seeds

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        seed = self.seeds.get(id(original_node))
        if seed is None:
            return updated_node
        return cst.FlattenSentinel([updated_node, seed])

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        target = self.targets.get(id(original_node))
        if target is None:
            return updated_node
        return updated_node.with_changes(value=wrap(updated_node.value, target[1], self.tf))


def wrap(value: cst.BaseExpression, dtype: str | None, tf: str) -> cst.Call:
    """``tf.constant(value, tf.<dtype>)`` around an expression, which stays as it was
    (``tf.constant(value)`` for ``dtype`` None: TensorFlow's own dtype for the value)."""
    func = cst.parse_expression(f"{tf}.constant")
    if dtype is None:
        return cst.Call(func=func, args=[cst.Arg(value=value)])
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return cst.Call(
        func=func,
        args=[cst.Arg(value=value, comma=comma), cst.Arg(cst.parse_expression(f"{tf}.{dtype}"))],
    )


# -- finding a site ------------------------------------------------------------------------


class _CallIndex:
    """Every call of the file by the line(s) Python may report it on, with its callee name."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.by_line: dict[int, list[tuple[int, cst.Call]]] = {}
        positions = ctx.wrapper.resolve(PositionProvider)
        for node in _walk(ctx.module):
            if not isinstance(node, cst.Call):
                continue
            for line, col in _anchors(node, positions):
                self.by_line.setdefault(line, []).append((col, node))

    def at(self, line: int, col: int | None, callee: str | None) -> list[cst.Call]:
        found: list[cst.Call] = []
        for where, call in self.by_line.get(line, []):
            if col is not None and where != col:
                continue
            if callee is not None and callee_name(call) != callee:
                continue
            if call not in found:
                found.append(call)
        return found


def _walk(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def _anchors(call: cst.Call, positions: object) -> Iterator[tuple[int, int]]:
    """Where Python may place this call: its start, or (for ``obj.<newline>name(...)``)
    the method name's start (CPython moves a call's location to the attribute's line)."""
    start = positions[call].start  # type: ignore[index]
    yield start.line, start.column
    if isinstance(call.func, cst.Attribute):
        attr = positions[call.func.attr].start  # type: ignore[index]
        if attr.line != start.line:
            yield attr.line, attr.column


def _expected_line(ctx: RuleContext, site: CallSite) -> tuple[int, cst.CSTNode] | None:
    """The line the call should start on now: the recorded offset into its enclosing
    function, counted from where that function starts today (with that function, or the
    module); None if it is gone."""
    if site.scope in (None, "<module>") or site.scope_line is None:
        return site.line, ctx.module
    function = find_function(ctx.module, site.scope)
    if not isinstance(function, cst.FunctionDef):
        return None
    first = function.decorators[0] if function.decorators else function
    start = ctx.position(first)[0]
    return site.line - site.scope_line + start, function


def _is_seed_statement(node: cst.CSTNode) -> bool:
    """``node`` is a seed autosig wrote (``try:  # autosig: guarded relaxed trace``), not
    a ``try`` of the program's that holds one (review8)."""
    if not isinstance(node, cst.Try) or not isinstance(node.body, cst.IndentedBlock):
        return False
    comment = node.body.header.comment
    return comment is not None and MARK in comment.value


def _after_seeds(ctx: RuleContext, scope: cst.CSTNode, line: int) -> int:
    """``line`` moved down by the instance seeds an earlier run wrote above it in
    ``scope`` (``instance_seeds``), for a profile recorded before them."""
    for seed in sorted(
        (n for n in _walk(scope) if _is_seed_statement(n)),
        key=lambda n: ctx.position(n)[0],
    ):
        span = ctx.line_span(seed)
        if span.start <= line:
            line += len(span)
    return line


def _one_site(
    ctx: RuleContext,
    calls: _CallIndex,
    entry: FunctionPlan,
    site: CallSite,
    out: CallSiteEdits,
) -> SiteOutcome:
    plan = entry.call_sites
    assert plan is not None
    callee = plan.callee
    named = f"`{callee}`" if callee else "the function"
    expected = _expected_line(ctx, site)
    if expected is None:
        problem = f"its enclosing function {site.scope} is gone (re-run autosig profile)"
        return SiteOutcome(entry, site, site.line, problem=problem)
    line, scope = expected
    if callee is None and site.col is None:
        problem = "the profile has no column to find a __call__ call by (re-run autosig profile)"
        return SiteOutcome(entry, site, line, problem=problem)
    found = calls.at(line, site.col, callee)
    shifted = _after_seeds(ctx, scope, line)
    if shifted != line:
        # seeds above it: the profile was recorded before them (the call moved down) or
        # with them (review7: a fixed program profiled again); both calls there: unknown
        moved = calls.at(shifted, site.col, callee)
        if found and moved and len(moved) == 1 and _already_wrapped(ctx, moved[0], plan.params):
            found = []  # the call this fix wrapped on an earlier run
        elif found and moved and len(found) == 1 and _already_wrapped(ctx, found[0], plan.params):
            moved = []
        if found and moved:
            problem = (
                f"calls of {named} start at line {line} and at line {shifted}, below "
                "autosig's seeds: which one the profile saw is not known (re-run autosig profile)"
            )
            return SiteOutcome(entry, site, line, problem=problem)
        if moved:
            found, line = moved, shifted
    if not found:
        for later in range(line + 1, line + 1 + SHIFT_TOLERANCE):
            moved = calls.at(later, site.col, callee)
            if len(moved) == 1 and _already_wrapped(ctx, moved[0], plan.params):
                return SiteOutcome(entry, site, later, call=moved[0])
        return SiteOutcome(entry, site, line, problem=STALE.format(callee=named))
    if len(found) > 1:
        problem = f"{len(found)} calls of {named} start on that line (the profile has no column)"
        return SiteOutcome(entry, site, line, problem=problem)
    call = found[0]
    unpacked = any(arg.star == "*" for arg in call.args)
    if any(arg.star == "**" for arg in call.args) or (
        unpacked and not all(_trailing(call, p) is not None for p in plan.params)
    ):
        problem = "it passes arguments with *args/**kwargs: which one is which is not known"
        return SiteOutcome(entry, site, line, problem=problem)
    positional = [arg for arg in call.args if arg.keyword is None]
    keywords = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
    # an unpacked `*batch` passes as many positional arguments as the profile bound
    counted = len(positional) != site.positional and not unpacked
    if counted or set(keywords) != set(site.keywords):
        problem = (
            f"it passes {len(positional)} positional and {len(keywords)} keyword arguments, "
            f"the profiled calls passed {site.positional} and {len(site.keywords)} "
            "(changed since profiling?)"
        )
        return SiteOutcome(entry, site, line, problem=problem)
    wrapped: list[TensorizedParam] = []
    problems: list[str] = []
    for param in plan.params:
        arg = _argument(call, param)
        if arg is None:
            continue  # not passed here: the default, a constant
        if _is_wrapped(ctx, arg.value, param):
            continue
        if _is_tensor_call(ctx, arg.value):
            problems.append(f"`{short_code(arg.value, 40)}` already is a tensor")
            continue
        if not _alias_usable(ctx, call):
            problems.append("TensorFlow is imported only after this module-level call")
            continue
        unshown = _dtype_unshown(ctx, call, param)
        if unshown is not None:
            problems.append(unshown)
            continue
        out.targets.setdefault(id(arg), (arg, None if param.default_dtype else param.dtype))
        out.claims.setdefault(id(arg), set()).add(param.dtype)
        wrapped.append(param)
    problem = "; ".join(problems) if problems and not wrapped else None
    return SiteOutcome(entry, site, line, wrapped=tuple(wrapped), problem=problem, call=call)


def _argument(call: cst.Call, param: TensorizedParam | ArgumentPosition) -> cst.Arg | None:
    """The argument of ``call`` that binds ``param`` (None: not passed, the default)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == param.name:
            return arg
    if any(arg.star == "*" for arg in call.args):
        return _trailing(call, param)
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if param.index is not None and param.index < len(positional):
        return positional[param.index]
    return None


def _trailing(call: cst.Call, param: TensorizedParam | ArgumentPosition) -> cst.Arg | None:
    """In ``f(*batch, epoch)``, the argument after the last ``*`` unpacking that binds
    ``param``: counted from the end, where every call that does not raise fills all
    positional parameters (``TensorizedParam.from_end``); None where that is not known
    (a keyword argument may fill a positional parameter, or ``param`` is not among the
    trailing arguments)."""
    if param.from_end is None or any(
        arg.keyword is not None or arg.star == "**" for arg in call.args
    ):
        return None
    last_star = max(i for i, arg in enumerate(call.args) if arg.star == "*")
    trailing = list(call.args[last_star + 1 :])
    if param.from_end >= len(trailing):
        return None
    return trailing[len(trailing) - 1 - param.from_end]


def _dtype_unshown(ctx: RuleContext, call: cst.Call, param: TensorizedParam) -> str | None:
    """Why ``param`` may not be a tensor at this call (None: it may): it follows the dtype
    of a tensor argument (``TensorizedParam.follows``) that the code here does not show
    to be ``param.dtype`` (``analysis/static_dtypes.py``)."""
    for followed in param.follows:
        arg = _argument(call, followed)
        if arg is None or argument_dtype(ctx, call, arg.value) != param.dtype:
            shown = f"`{short_code(arg.value, 30)}`" if arg is not None else "its argument"
            return (
                f"`{param.name}` takes the dtype of `{followed.name}` (the probe saw it "
                f"follow), and nothing here shows {shown} is {param.dtype}"
            )
    return None


def _already_wrapped(ctx: RuleContext, call: cst.Call, params: Sequence[TensorizedParam]) -> bool:
    """Every planned argument of ``call`` is ``tf.constant(..., <its dtype>)`` already."""
    seen = False
    for param in params:
        arg = _argument(call, param)
        if arg is None:
            continue
        if not _is_wrapped(ctx, arg.value, param):
            return False
        seen = True
    return seen


def _is_wrapped(ctx: RuleContext, value: cst.BaseExpression, param: TensorizedParam) -> bool:
    """``value`` is ``<tf>.constant(x, <tf>.<dtype>)``, or ``<tf>.constant(x)`` where that
    is the param's dtype, as this module writes it."""
    if not isinstance(value, cst.Call) or len(value.args) not in (1, 2):
        return False
    if "tensorflow.constant" not in ctx.qualified_names(value.func):
        return False
    if len(value.args) == 1:
        return param.default_dtype and value.args[0].keyword is None
    dtype = param.dtype
    given = value.args[1]
    if given.keyword is not None and given.keyword.value != "dtype":
        return False
    names = ctx.qualified_names(given.value)
    return bool(names & {f"tensorflow.{dtype}", f"tensorflow.dtypes.{dtype}"})


def _is_tensor_call(ctx: RuleContext, value: cst.BaseExpression) -> bool:
    """A call of some TensorFlow API (``tf.constant(x)``, ``tf.cast(...)``): a tensor already."""
    return isinstance(value, cst.Call) and any(
        name.startswith("tensorflow.") for name in ctx.qualified_names(value.func)
    )


def _alias_usable(ctx: RuleContext, call: cst.Call) -> bool:
    """The TensorFlow alias is bound when this call runs (module-level code runs in order)."""
    return ctx.enclosing_function(call) is not None or ctx.tf_bound_before(call)
