"""autosig.source.metadata gives exactly what libcst's Parent/QualifiedName providers give."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    QualifiedNameProvider,
    ScopeProvider,
)
from libcst.metadata.base_provider import LazyValue

from autosig.source.metadata import ParentProvider, qualified_names

SYNTAX = """\
import tensorflow as tf, numpy as np
from os import path as p
from . import sibling
from .pkg import thing as other
X: int = 1
type Alias[T] = list[T]
def generic[T](x: T, *args: T, y: int = X, **kw) -> T:
    global X
    X += 1
    return x
class K[T](Base, metaclass=Meta):
    attr: int
    def m(self, /, a, *, b=lambda q: q + 1):
        nonlocal_ = [z async for z in a] if False else {k: v for k, v in b}
        match a:
            case {"k": v, **rest}:
                pass
            case [first, *others] if first:
                pass
            case K(attr=aa) | None:
                pass
            case _:
                pass
        with open(p) as (f, g), tf.device("/cpu:0"):
            del f
        try:
            pass
        except* ValueError as e:
            pass
        return f"{a!r:>{b}} {tf.constant(1)}"
@tf.function(jit_compile=True)
async def co(x):
    async with x as y:
        async for z in y:
            await z
    print(*x, **{"a": 1}, sep=(yield))
    return (w := x) and sibling.f(other)
def outer():
    v = 1
    def inner():
        nonlocal v
        v = 2
    return inner
"""
"""Scopes of every kind: type parameters, match captures, except*, async, global/nonlocal."""

GOLDEN = sorted(Path(__file__).resolve().parent.parent.glob("golden/*/model.py"))
SOURCES = [p.read_text(encoding="utf-8") for p in GOLDEN] + [
    "import tensorflow as tf2\nfrom tensorflow import function as f\n"
    "@f(jit_compile=True)\ndef g(x, *a, **k):\n    return [y for y in x if (z := y)]\n"
    "class C:\n    h = tf2.function(lambda s: s)\n",
    SYNTAX,
]


@pytest.mark.parametrize("text", SOURCES)
def test_parents_and_qualified_names_match_libcst(text: str) -> None:
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    theirs = wrapper.resolve(ParentNodeProvider)
    ours = wrapper.resolve(ParentProvider)
    assert {id(k): id(v) for k, v in ours.items()} == {id(k): id(v) for k, v in theirs.items()}

    scopes = wrapper.resolve(ScopeProvider)
    names = wrapper.resolve(QualifiedNameProvider)

    def get_metadata(provider, node, default=None):
        return scopes.get(node, default)

    for node, value in names.items():
        expected = value() if isinstance(value, LazyValue) else value
        assert set(qualified_names(get_metadata, node)) == set(expected)
