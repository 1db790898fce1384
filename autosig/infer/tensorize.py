"""Which Python-number parameters may become scalar tensors, judged by the function's code.

A Python int that the code uses as a range bound, a shape or an index must stay a
Python value (a tensor there would fail or retrace anyway); one it only feeds to
TensorFlow ops can take a ``TensorSpec([], dtype)``, with the dtype the ops require.
"""

from __future__ import annotations

from autosig.analysis import python_only_uses, required_dtypes
from autosig.discover import FunctionSite
from autosig.infer.params import ParamResult
from autosig.infer.source import Source
from autosig.specs import TensorSpecNode


def decide_python_params(source: Source, site: FunctionSite, results: list[ParamResult]) -> None:
    """Tensorize Python scalars the code uses only where a tensor can go."""
    candidates = [r for r in results if r.blocker is None and r.leaf.python is not None]
    if not candidates:
        return
    function = site.function
    assert function is not None and source.wrapper is not None
    required = required_dtypes(source.wrapper, function, [r.info.name for r in candidates])
    for r in candidates:
        assert r.leaf.python is not None
        needed = required.get(r.info.name)
        if needed and r.leaf.python.dtype in ("int32", "int64"):
            r.leaf.python.dtype = needed
    tensor_params = [r.info.name for r in results if r.leaf.spec is not None]
    dtypes = {
        r.info.name: r.leaf.spec.dtype for r in results if isinstance(r.leaf.spec, TensorSpecNode)
    }
    for r in candidates:
        assert r.leaf.python is not None
        dtypes[r.info.name] = r.leaf.python.dtype
    uses = python_only_uses(
        source.wrapper, function, [r.info.name for r in candidates], tensor_params, dtypes
    )
    for r in candidates:
        assert r.leaf.python is not None
        found = uses.get(r.info.name, [])
        if found:
            r.python_uses = found
            r.blocker = f"`{r.info.name}` must stay a Python value: {found[0].describe()}"
        else:
            r.spec = TensorSpecNode((), r.leaf.python.dtype)
