"""Edits that give a tf.function site its ``input_signature`` or ``reduce_retracing=True``.

Every edit replaces the one node that holds tf.function's arguments: the bare
decorator (``@tf.function`` becomes ``@tf.function(...)``) or the ``tf.function(...)``
call. Other arguments (``jit_compile``, ``autograph``, ...) keep their place and their
formatting; a new argument copies the call's own comma style (see ``append_arg``).
Specs are rendered with the file's own TensorFlow alias, and a signature that would
make its line longer than ``MAX_LINE_LENGTH`` gets one spec per line, indented from
the line it starts on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange

from autosig.infer.specs import DictNode, ListNode, SpecNode, TupleNode, render_spec
from autosig.rules.as107_no_signature import append_arg
from autosig.rules.context import RuleContext
from autosig.rules.violation import ImportNeeded
from autosig.source.discover import FunctionSite
from autosig.source.metadata import PositionProvider

MAX_LINE_LENGTH = 88
"""Longer lines get one spec per line (black's default width)."""

SIGNATURE = "input_signature"
REDUCE = "reduce_retracing"
REDUCE_SYNONYMS = (REDUCE, "experimental_relax_shapes")
SIGNATURE_POSITION = 1
"""``tf.function(func, input_signature, ...)``: the signature may be given positionally."""


@dataclass
class SiteEdit:
    """What to change at one site: node edits and imports, or why nothing is changed.

    ``edits`` empty and ``problem`` None means the site already is as planned.
    """

    edits: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    imports: list[ImportNeeded] = field(default_factory=list)
    problem: str | None = None

    @property
    def changes(self) -> bool:
        return bool(self.edits)


def signature_edit(ctx: RuleContext, site: FunctionSite, specs: Sequence[SpecNode]) -> SiteEdit:
    """Add ``input_signature=[specs]`` to ``site``, or replace the signature it has."""
    problem = _uneditable(site)
    if problem is not None:
        return SiteEdit(problem=problem)
    tf = ctx.tf_alias
    imports = ctx.tf_imports() if specs else []  # `[]` names no TensorFlow
    quote = _preferred_quote(ctx)
    one_line = _render(ListNode(tuple(specs)), tf, quote)
    call = site.call
    existing = _signature_arg(site) if call is not None else None
    if existing is not None:
        if _normalized(ctx.code(existing.value)) == _normalized(one_line):
            return SiteEdit()
        where = _position(ctx, existing.value).start
        rest = _rest_after(ctx, existing.value)
        value = _value(ctx, specs, one_line, where.column, _line(ctx, where.line), len(rest))
        new_call = call.with_changes(  # type: ignore[union-attr]
            args=[
                arg.with_changes(value=value) if arg is existing else arg
                for arg in call.args  # type: ignore[union-attr]
            ]
        )
        return SiteEdit({call: new_call}, imports)  # type: ignore[dict-item]
    return _add_keyword(ctx, site, SIGNATURE, specs, one_line, imports)


def reduce_retracing_edit(ctx: RuleContext, site: FunctionSite) -> SiteEdit:
    """Add ``reduce_retracing=True`` to ``site`` unless it already decides retracing."""
    problem = _uneditable(site)
    if problem is not None:
        return SiteEdit(problem=problem)
    if site.call is not None:
        for arg in site.call.args:
            if arg.keyword is not None and arg.keyword.value in REDUCE_SYNONYMS:
                value = ctx.code(arg.value)
                if value == "True":
                    return SiteEdit()
                return SiteEdit(
                    problem=f"keeps its explicit {arg.keyword.value}={value} "
                    "(a decision autosig does not override)"
                )
    return _add_keyword(ctx, site, REDUCE, None, "True", [])


# -- building the new argument --------------------------------------------------------------


def _uneditable(site: FunctionSite) -> str | None:
    if site.call is None and site.decorator is None:
        return "its tf.function call was not found in the source"
    if site.call is not None and any(arg.star for arg in site.call.args):
        return (
            "tf.function(...) receives *args/**kwargs: autosig cannot see whether they "
            "already set input_signature or reduce_retracing"
        )
    return None


def _signature_arg(site: FunctionSite) -> cst.Arg | None:
    assert site.call is not None
    positional = [arg for arg in site.call.args if arg.keyword is None]
    for arg in site.call.args:
        if arg.keyword is not None and arg.keyword.value == SIGNATURE:
            return arg
    if len(positional) > SIGNATURE_POSITION:
        return positional[SIGNATURE_POSITION]
    return None


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    no_space = cst.SimpleWhitespace("")
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space),
    )


def _add_keyword(
    ctx: RuleContext,
    site: FunctionSite,
    name: str,
    specs: Sequence[SpecNode] | None,
    one_line: str,
    imports: list[ImportNeeded],
) -> SiteEdit:
    """Append ``name=<value>`` to the site's call (creating the call for a bare decorator)."""
    prefix = f"{name}="
    call = site.call
    if call is None:
        decorator = site.decorator
        assert decorator is not None
        where = _position(ctx, decorator)
        line = _line(ctx, where.start.line)
        value = _value(ctx, specs, one_line, len(line.rstrip()) + 1 + len(prefix), line, 1)
        new_call = cst.Call(func=decorator.decorator, args=[_keyword(name, value)])
        return SiteEdit({decorator: decorator.with_changes(decorator=new_call)}, imports)
    if not call.args:
        where = _position(ctx, call)
        line = _line(ctx, where.end.line)
        value = _value(ctx, specs, one_line, len(line.rstrip()) + len(prefix), line, 0)
    else:
        value = _value_after_args(ctx, call, specs, one_line, prefix)
    new_args = append_arg(call, _keyword(name, value))
    return SiteEdit({call: call.with_changes(args=new_args)}, imports)


def _value_after_args(
    ctx: RuleContext,
    call: cst.Call,
    specs: Sequence[SpecNode] | None,
    one_line: str,
    prefix: str,
) -> cst.BaseExpression:
    """The new value, laid out for where ``append_arg`` will put it: a new line or the last."""
    last = call.args[-1]
    last_pos = _position(ctx, last.value)
    if _new_arg_on_own_line(call):
        line = _line(ctx, last_pos.start.line)
        indent = len(line) - len(line.lstrip())
        return _value(ctx, specs, one_line, indent + len(prefix), line, 1)
    line = _line(ctx, last_pos.end.line)
    rest = line[last_pos.end.column :].lstrip(", ").rstrip()
    start = last_pos.end.column + 2 + len(prefix)
    return _value(ctx, specs, one_line, start, line, len(rest))


def _new_arg_on_own_line(call: cst.Call) -> bool:
    """Whether ``append_arg`` separates the new argument with a newline (one per line)."""
    args = call.args
    if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
        separator = args[-2].comma.whitespace_after
    elif isinstance(args[-1].comma, cst.Comma):
        separator = call.whitespace_before_args
    else:
        return False
    return isinstance(separator, cst.ParenthesizedWhitespace)


def _value(
    ctx: RuleContext,
    specs: Sequence[SpecNode] | None,
    one_line: str,
    start_column: int,
    line: str,
    closing: int,
) -> cst.BaseExpression:
    """``one_line`` parsed, or the specs one per line when the line would be too long."""
    if specs is None or len(specs) < 1 or start_column + len(one_line) + closing <= MAX_LINE_LENGTH:
        return cst.parse_expression(one_line)
    indent = line[: len(line) - len(line.lstrip())]
    return _multiline(ctx, specs, indent)


def _multiline(ctx: RuleContext, specs: Sequence[SpecNode], indent: str) -> cst.BaseExpression:
    """``[`` newline, one spec per line one indent deeper, ``]`` back at ``indent``.

    A nested spec (dict, tuple, list) that is still too long is broken the same way.
    """
    text = _layout(
        ListNode(tuple(specs)),
        ctx.tf_alias,
        _preferred_quote(ctx),
        indent,
        ctx.module.default_indent,
    )
    # The indentation written here is absolute (taken from the source line), so it
    # must not be added to the block's own indentation again.
    return cst.parse_expression(text).visit(_AbsoluteIndent())  # type: ignore[return-value]


_BRACKETS: dict[type, str] = {ListNode: "[]", TupleNode: "()", DictNode: "{}"}


def _render(node: SpecNode, tf: str, quote: str) -> str:
    """One-line source for ``node`` (``specs.render_spec``, dict keys in the file's quotes)."""
    if isinstance(node, DictNode):
        return (
            "{"
            + ", ".join(f"{_key(k, quote)}: {_render(v, tf, quote)}" for k, v in node.items)
            + "}"
        )
    if isinstance(node, (ListNode, TupleNode)):
        inner = ", ".join(_render(item, tf, quote) for item in node.items)
        if isinstance(node, TupleNode) and len(node.items) == 1:
            inner += ","
        brackets = _BRACKETS[type(node)]
        return f"{brackets[0]}{inner}{brackets[1]}"
    return render_spec(node, tf)


def _layout(
    node: SpecNode, tf: str, quote: str, indent: str, step: str, column: int | None = None
) -> str:
    """Source for ``node`` starting at ``column``: one line if it fits, else one item per line."""
    one_line = _render(node, tf, quote)
    brackets = _BRACKETS.get(type(node))
    fits = column is not None and column + len(one_line) + 1 <= MAX_LINE_LENGTH
    if brackets is None or fits:
        return one_line
    inner = indent + step
    items: list[str] = []
    if isinstance(node, DictNode):
        for key, value in node.items:
            head = f"{_key(key, quote)}: "
            items.append(head + _layout(value, tf, quote, inner, step, len(inner) + len(head)))
    else:
        assert isinstance(node, (ListNode, TupleNode))
        items = [_layout(item, tf, quote, inner, step, len(inner)) for item in node.items]
    body = "".join(f"{inner}{item},\n" for item in items)
    return f"{brackets[0]}\n{body}{indent}{brackets[1]}"


def _key(key: str, quote: str) -> str:
    text = repr(key)
    if quote == '"' and text.startswith("'") and '"' not in key and "\\" not in text:
        return f'"{key}"'
    return text


def _preferred_quote(ctx: RuleContext) -> str:
    """The quote most of the file's string literals use (black's double quote on a tie)."""
    counts = {"'": 0, '"': 0}

    class _Count(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            quote = node.quote[0]
            counts[quote] = counts.get(quote, 0) + 1

    ctx.module.visit(_Count())
    return "'" if counts["'"] > counts['"'] else '"'


class _AbsoluteIndent(cst.CSTTransformer):
    def leave_ParenthesizedWhitespace(
        self, original_node: cst.ParenthesizedWhitespace, updated_node: cst.ParenthesizedWhitespace
    ) -> cst.ParenthesizedWhitespace:
        return updated_node.with_changes(indent=False)


# -- source positions -------------------------------------------------------------------


def _position(ctx: RuleContext, node: cst.CSTNode) -> CodeRange:
    return ctx.get_metadata(PositionProvider, node)


def _line(ctx: RuleContext, number: int) -> str:
    """Source line ``number`` (1-based) without its line ending."""
    lines = ctx.text.split("\n")
    if 1 <= number <= len(lines):
        return lines[number - 1].rstrip("\r")
    return ""


def _rest_after(ctx: RuleContext, node: cst.CSTNode) -> str:
    where = _position(ctx, node)
    return _line(ctx, where.end.line)[where.end.column :].rstrip()


_SPACE = re.compile(r"\s+")
_TRAILING_COMMA = re.compile(r",([\])}])")


def _normalized(code: str) -> str:
    """Source text of an expression with layout removed, to compare two signatures."""
    return _TRAILING_COMMA.sub(r"\1", _SPACE.sub("", code))
