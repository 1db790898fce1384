"""The cheaper metadata paths of ``check`` give libcst's answers.

``metadata.expression_contexts`` (the map ``ScopeProvider`` needs first, made by a field
walk), ``metadata.Wrapper`` (which uses it), ``fast_visit``'s batched pass that does not
walk the tree again when its providers only handle the module, and
``metadata.index_tree`` (one walk for a subtree's nodes, parents and children).
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, ScopeProvider

from autosig.source.fast_visit import read_only_visits
from autosig.source.metadata import (
    MetadataView,
    Wrapper,
    ancestors_in,
    children,
    expression_contexts,
    index_tree,
    iter_tree,
)

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    [*(ROOT / "autosig" / "analysis").glob("*.py"), *(ROOT / "golden").glob("*/*.py")]
)[:60]

TRICKY = """\
import a.b as c, d
from e import (f as g, h)
x, (y, *z) = [1, 2], q
w: int = k[1:2, ::3]
v += u.attr.other
del m[n], o.p
for i, j in items: pass
else: pass
[s for s in t if s for r in s]
{kk: vv for kk, vv in d.items()}
(lam := lambda aa, *bb, cc=dd, **ee: aa)
with open(f) as (ff, gg): pass
try: pass
except E as err: pass
class C(B, metaclass=M):
    @dec(arg)
    def meth(self, p: T = default, *args: A, kw: K, **kws) -> R:
        global gl
        nonlocal_ = 1
        return f"{p!r:>{width}}"
match cmd:
    case [Point(x=0) as pt, *rest] if rest: pass
    case {"k": val, **others}: pass
async def co():
    async for item in agen(): await item
    async with lock as held: pass
type Alias[T] = list[T]
def gen[T: int](x: T) -> T: ...
"""


def _parse(path: Path) -> cst.Module | None:
    try:
        return cst.parse_module(path.read_text(encoding="utf-8"))
    except (cst.ParserSyntaxError, UnicodeDecodeError):
        return None


@pytest.mark.parametrize("source", [TRICKY, *(p.read_text() for p in SOURCES)])
def test_expression_contexts_are_libcst_s(source: str) -> None:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ExpressionContextProvider)
    found = expression_contexts(module)
    assert found.keys() == expected.keys()
    assert all(found[node] is expected[node] for node in expected)


@pytest.mark.parametrize("source", [TRICKY, *(p.read_text() for p in SOURCES[:20])])
def test_scopes_are_libcst_s(source: str) -> None:
    """The scope of every node and every name's accesses and assignments are the same
    through ``Wrapper`` inside ``read_only_visits`` as through libcst's own path."""
    module = cst.parse_module(source)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    with read_only_visits():
        ours = Wrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    assert ours.keys() == theirs.keys()
    pairs: dict[int, tuple[object, object]] = {}
    for node, scope in theirs.items():
        other = ours[node]
        assert type(other) is type(scope)
        assert getattr(other, "node", None) is getattr(scope, "node", None)
        if scope is not None:
            pairs[id(scope)] = (scope, other)
    for scope, other in pairs.values():
        assert _summary(other) == _summary(scope)


def _summary(scope: object) -> list[tuple[str, str, int]]:
    """Every assignment and access of a scope: kind, name or node, referents."""
    found = [("assign", a.name, len(a.references)) for a in scope.assignments]  # type: ignore[attr-defined]
    found += [
        ("access", cst.Module([]).code_for_node(a.node), len(a.referents)) for a in scope.accesses
    ]  # type: ignore[attr-defined]
    return sorted(found)


def test_index_tree_is_iter_tree_with_parents_and_children() -> None:
    module = cst.parse_module(TRICKY)
    nodes, parents, kids = index_tree(module)
    assert nodes == list(iter_tree(module))
    for node in nodes:
        assert kids[node] == children(node)
        for child in kids[node]:
            assert parents[child] is node
    assert module not in parents


def test_ancestors_in_the_index_are_the_views_ancestors() -> None:
    module = cst.parse_module(TRICKY)
    view = MetadataView(MetadataWrapper(module, unsafe_skip_copy=True))
    _, parents, _ = index_tree(module)
    for node in iter_tree(module):
        assert list(ancestors_in(node, parents)) == list(view.ancestors(node))
