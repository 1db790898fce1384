"""Edits that turn the plan's static shape reads into ``tf.shape()`` (see
``autosig.infer.shape_rewrites.choose_rewrites`` for which reads and why).

``x.shape[i]`` becomes ``<tf>.shape(x)[i]`` (the file's own TensorFlow alias; the
subscript, its spacing and any parentheses around the read are kept), and an unpacking
``b, t, d = x.shape`` becomes ``b, t, d = tf.shape(x)[0], tf.shape(x)[1], x.shape[2]``
with only the planned dimensions made dynamic. Each read is found again by its place
relative to the function's ``def`` line and its code; a rewritten read no longer
matches, so a second pass changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from autosig.analysis.python_values import short_code
from autosig.infer.plan import ShapeRewrite
from autosig.rules.context import RuleContext
from autosig.rules.violation import ImportNeeded
from autosig.source.discover import FunctionSite
from autosig.source.metadata import PositionProvider, iter_tree


@dataclass
class ShapeEdits:
    """The edits for one function's planned reads, and the reads not found."""

    edits: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    imports: list[ImportNeeded] = field(default_factory=list)
    missing: list[ShapeRewrite] = field(default_factory=list)


def shape_rewrite_edits(
    ctx: RuleContext, site: FunctionSite, rewrites: Sequence[ShapeRewrite]
) -> ShapeEdits:
    """Edits for every planned read found in ``site``'s function."""
    out = ShapeEdits()
    function = site.function
    if not isinstance(function, cst.FunctionDef) or not rewrites:
        out.missing = list(rewrites)
        return out
    base = ctx.get_metadata(PositionProvider, function.name).start.line
    wanted = {(r.offset, r.column, r.code): r for r in rewrites}
    found: set[tuple[int, int, str]] = set()
    for node in iter_tree(function.body):
        if not isinstance(node, (cst.Subscript, cst.Attribute)):
            continue
        start = ctx.get_metadata(PositionProvider, node).start
        key = (start.line - base, start.column, short_code(node, 200))
        rewrite = wanted.get(key)
        if rewrite is None or key in found:
            continue
        replacement = _replacement(node, rewrite, ctx.tf_alias)
        if replacement is None:
            continue
        found.add(key)
        out.edits[node] = replacement
    out.missing = [r for key, r in wanted.items() if key not in found]
    if out.edits:
        out.imports = ctx.tf_imports()
    return out


def _shape_call(tf: str, value: cst.BaseExpression) -> cst.Call:
    return cst.Call(
        func=cst.Attribute(value=cst.parse_expression(tf), attr=cst.Name("shape")),
        args=[cst.Arg(value=value)],
    )


def _replacement(
    node: cst.Subscript | cst.Attribute, rewrite: ShapeRewrite, tf: str
) -> cst.BaseExpression | None:
    if rewrite.rank is None:
        if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute)):
            return None
        return node.with_changes(value=_shape_call(tf, node.value.value))
    if not isinstance(node, cst.Attribute):
        return None
    value = node.value
    elements = []
    for dim in range(rewrite.rank):
        holder = (
            _shape_call(tf, value) if dim in rewrite.dims else node.with_changes(lpar=(), rpar=())
        )
        elements.append(
            cst.Element(
                cst.Subscript(
                    value=holder,
                    slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(dim))))],
                )
            )
        )
    return cst.Tuple(elements=elements, lpar=node.lpar, rpar=node.rpar)
