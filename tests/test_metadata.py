"""autosig.metadata gives exactly what libcst's Parent/QualifiedName providers give."""

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

from autosig.metadata import ParentProvider, qualified_names

GOLDEN = sorted(Path(__file__).resolve().parent.parent.glob("golden/*/model.py"))
SOURCES = [p.read_text(encoding="utf-8") for p in GOLDEN] + [
    "import tensorflow as tf2\nfrom tensorflow import function as f\n"
    "@f(jit_compile=True)\ndef g(x, *a, **k):\n    return [y for y in x if (z := y)]\n"
    "class C:\n    h = tf2.function(lambda s: s)\n"
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
