"""``source.fast_visit``: a read-only visit walks exactly what libcst's walks, in the same
order with the same calls, and changes nothing for transformers or metadata."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import libcst as cst
import pytest
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, ScopeProvider

from autosig.source.fast_visit import read_only_visits
from autosig.source.metadata import iter_tree

ROOT = Path(__file__).resolve().parent.parent

SYNTAX = textwrap.dedent(
    '''\
    """Rare syntax, so every node type meets the fast path at least once."""
    from __future__ import annotations
    import os.path as osp, sys
    from . import sibling
    from ..pkg import (a as b, c)
    from mod import *
    x: int = 1
    y = z = (1, *rest)
    a, *b = [1, 2, 3]
    x += 1; y -= 2
    del x, y[0], z.attr
    global_name = lambda p, /, q=1, *args, r, s=2, **kw: (p, q, args, r, s, kw)


    @decorator(arg)
    @other.decorator
    async def coroutine(a: int, b: "str" = "s", *, c: list[int] | None = None) -> dict:
        global global_name
        async with open(a) as f, open(b) as (g, h):
            async for item in f:
                await g.write(item)
        try:
            yield from range(3)
        except* ValueError as error:
            raise RuntimeError("x") from error
        finally:
            pass
        return {k: v for k, v in zip(a, b) if k if v}


    class Klass(Base, metaclass=Meta):
        attribute: int
        def method(self):
            nonlocal_value = 0
            def inner():
                nonlocal nonlocal_value
                nonlocal_value += 1
            return inner


    def generics[T: int, *Ts, **P](value: T) -> T:
        type Alias[K] = dict[K, T]
        return value


    match command:
        case {"action": "go", **rest} if rest:
            pass
        case Point(x=0, y=0) | [1, 2, *_] | str() as s:
            pass
        case _:
            pass

    with a as b, c:
        while not done and (n := next(it)) is not None:
            if n > 1 >= m != k:
                continue
            elif n in s or n not in t:
                break
            else:
                assert n, f"{n!r:>{width}} {n=} {n.attr[1:2, ::3]}"
    values = {1, 2} | {*more}
    table = {"k": [i for i in range(3)], **other}
    gen = (i async for i in aiter() if i)
    value = a if b else -c ** ~d @ e // f % g << h >> i & j ^ k | l
    text = "a" "b" f"{x}" u"d"
    data = b"x" rb"y"
    number = 0x1F + 1_000.5e-3 + 3j
    print(*args, sep="", **kwargs)
    '''
)


class Recorder(cst.CSTVisitor):
    """Logs every call a traversal makes, with the node's identity."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, int, str]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node), type(node).__name__))
        return True

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.events.append(("visit_attribute", id(node), attribute))

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        self.events.append(("leave_attribute", id(original_node), attribute))

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node), type(original_node).__name__))


class SkipsFunctions(Recorder):
    """Returns False for function bodies: the children must not be walked."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        super().on_visit(node)
        return not isinstance(node, cst.FunctionDef)


def sources() -> list[Any]:
    files = sorted(ROOT.glob("golden/*/*.py")) + sorted(ROOT.glob("autosig/**/*.py"))
    files += sorted(ROOT.glob("tests/*.py"))
    corpus = ROOT / ".corpus" / "tf-models-official" / "official"
    files += sorted(corpus.glob("vision/modeling/layers/*.py"))[:20]
    params = [pytest.param(SYNTAX, id="rare-syntax")]
    params += [
        pytest.param(path.read_text(encoding="utf-8"), id=str(path.relative_to(ROOT)))
        for path in files
    ]
    return params


@pytest.mark.parametrize("text", sources())
def test_read_only_visits_and_positions_are_libcsts(text: str) -> None:
    """Both checks on one parse of the file (parsing is a third of their time): a
    read-only visit makes libcst's calls in libcst's order, and
    ``source.metadata.PositionProvider`` gives every node libcst's range."""
    module = cst.parse_module(text)
    read_only_visit_makes_libcsts_calls_in_libcsts_order(module)
    positions_are_libcsts(module)


def read_only_visit_makes_libcsts_calls_in_libcsts_order(module: cst.Module) -> None:
    for kind in (Recorder, SkipsFunctions):
        slow, fast = kind(), kind()
        module.visit(slow)
        with read_only_visits():
            result = module.visit(fast)
        assert result is module
        assert fast.events == slow.events


def test_metadata_is_the_same() -> None:
    module = cst.parse_module(SYNTAX)
    slow = MetadataWrapper(module, unsafe_skip_copy=True)
    fast = MetadataWrapper(module, unsafe_skip_copy=True)
    with read_only_visits():
        contexts = fast.resolve(ExpressionContextProvider)
        scopes = fast.resolve(ScopeProvider)
    assert dict(contexts) == dict(slow.resolve(ExpressionContextProvider))
    slow_scopes = slow.resolve(ScopeProvider)
    # (string annotations are parsed into new nodes on each resolution: compare the tree's)
    nodes = [node for node in iter_tree(module) if node in slow_scopes]
    assert len(nodes) > 500 and all(node in scopes for node in nodes)
    for node in nodes:
        scope, other = scopes[node], slow_scopes[node]
        if scope is None or other is None:
            assert scope is other
            continue
        assert type(scope) is type(other)
        assert {a.name for a in scope.assignments} == {a.name for a in other.assignments}
        assert {a.node for a in scope.accesses} == {a.node for a in other.accesses}
        if isinstance(node, (cst.Name, cst.Attribute)):
            assert scope.get_qualified_names_for(node) == other.get_qualified_names_for(node)


def test_transformers_still_change_the_tree_and_the_patch_is_undone() -> None:
    class Rename(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
            return updated.with_changes(value=updated.value.upper())

    module = cst.parse_module("a = b + c\n")
    original_visit = cst.CSTNode.visit
    with read_only_visits():
        with read_only_visits():  # re-entrant
            changed = module.visit(Rename())
        assert cst.CSTNode.visit is not original_visit
    assert cst.CSTNode.visit is original_visit
    assert changed.code == "A = B + C\n"


def positions_are_libcsts(module: cst.Module) -> None:
    """``source.metadata.PositionProvider`` gives every node libcst's range."""
    from libcst.metadata import PositionProvider as LibcstPositions

    from autosig.source.metadata import PositionProvider

    ours = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(LibcstPositions)
    assert len(ours) == len(theirs)
    for node, where in theirs.items():
        assert ours[node] == where, (type(node).__name__, where, ours[node])


def test_positions_of_crlf_and_continuations() -> None:
    from libcst.metadata import PositionProvider as LibcstPositions

    from autosig.source.metadata import PositionProvider

    text = 'x = (1,\r\n     2)\r\ny = """a\nb\r\nc""" + \\\n    3\rz = 1\n'
    module = cst.parse_module(text)
    ours = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(LibcstPositions)
    assert dict(ours) == dict(theirs)


def test_the_kept_answer_for_the_checked_libcst_is_what_its_source_says() -> None:
    """``CONDITIONAL_IN_CHECKED`` saves reading libcst's source at every start; it must
    be what reading it answers for every node type (re-check it when libcst changes)."""
    import libcst as cst

    from autosig.source import fast_visit

    if fast_visit._LIBCST_VERSION != fast_visit.CHECKED_LIBCST:
        pytest.skip(f"libcst {fast_visit._LIBCST_VERSION}: the source is read at run time")
    kinds = [
        kind
        for kind in vars(cst).values()
        if isinstance(kind, type)
        and issubclass(kind, cst.CSTNode)
        and any("_visit_and_replace_children" in k.__dict__ for k in kind.__mro__)
    ]
    assert len(kinds) > 100
    read = {kind.__name__ for kind in kinds if fast_visit._visits_conditionally(kind)}
    assert read == fast_visit.CONDITIONAL_IN_CHECKED
    assert all(fast_visit._conditional(kind) == (kind.__name__ in read) for kind in kinds)
