"""Which Python-number parameters may become scalar tensors, judged by the function's code.

A Python int that the code uses as a range bound, a shape or an index must stay a
Python value (a tensor there would fail or retrace anyway); one it only feeds to
TensorFlow ops can take a ``TensorSpec([], dtype)``, with the dtype the ops require:
int64 where a summary step needs it or where Python arithmetic on it may leave int32
range (``step * 1000003``: an int32 tensor would wrap around, a Python int does not).
"""

from __future__ import annotations

from autosig.analysis import ModuleResolver, python_only_uses, required_dtypes
from autosig.discover import FunctionSite
from autosig.infer.params import ParamResult
from autosig.infer.source import Source
from autosig.specs import TensorSpecNode


def decide_python_params(
    source: Source,
    site: FunctionSite,
    results: list[ParamResult],
    modules: ModuleResolver | None = None,
) -> None:
    """Tensorize Python scalars the code uses only where a tensor can go.

    ``modules`` (``autosig.project_modules.ProjectModules``) lets the analysis follow calls
    into other project modules; without it only same-module functions are followed.
    """
    candidates = [r for r in results if r.blocker is None and r.leaf.python is not None]
    if not candidates:
        return
    function = site.function
    assert function is not None and source.wrapper is not None
    names = [r.info.name for r in candidates]
    tensor_params = [r.info.name for r in results if r.leaf.spec is not None]
    dtypes = {
        r.info.name: r.leaf.spec.dtype for r in results if isinstance(r.leaf.spec, TensorSpecNode)
    }
    observed: dict[str, int] = {}
    converted: dict[str, str] = {}
    for r in candidates:
        assert r.leaf.python is not None
        converted[r.info.name] = r.leaf.python.dtype
        dtypes[r.info.name] = r.leaf.python.dtype
        ints = [v for v in r.leaf.python.values if isinstance(v, int) and not isinstance(v, bool)]
        if ints:
            observed[r.info.name] = max(abs(v) for v in ints)
    required = required_dtypes(
        source.wrapper, function, names, observed, dtypes, tensor_params, modules
    )
    for r in candidates:
        assert r.leaf.python is not None
        needed = required.get(r.info.name)
        if needed and r.leaf.python.dtype in ("int32", "int64"):
            r.leaf.python.dtype = needed
            dtypes[r.info.name] = needed
    uses = python_only_uses(
        source.wrapper, function, names, tensor_params, dtypes, observed, converted, modules
    )
    for r in candidates:
        assert r.leaf.python is not None
        found = uses.get(r.info.name, [])
        if found:
            r.python_uses = found
            r.blocker = f"`{r.info.name}` must stay a Python value: {found[0].describe()}"
        else:
            r.spec = TensorSpecNode((), r.leaf.python.dtype)
