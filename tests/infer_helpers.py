"""Test helpers: inference's parts driven from source text, and signatures as text."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from libcst.metadata import MetadataWrapper

from autosig.analysis.python_values import PythonUse, find_function, python_only_uses
from autosig.infer.specs import SpecNode, render_spec
from autosig.source.discover import parse_module


def python_only_uses_in_text(
    text: str,
    qualname: str,
    params: Collection[str],
    tensor_params: Collection[str] = (),
    dtypes: Mapping[str, str] | None = None,
) -> dict[str, list[PythonUse]]:
    """``python_only_uses`` for the function ``qualname`` of a module's source text."""
    wrapper = MetadataWrapper(parse_module(text), unsafe_skip_copy=True)
    function = find_function(wrapper.module, qualname)
    if function is None:
        raise LookupError(f"no function {qualname!r} in the source")
    return python_only_uses(wrapper, function, params, tensor_params, dtypes)


def render_signature(specs: list[SpecNode], tf: str = "tf") -> str:
    """The ``input_signature=[...]`` value for the parameters in order."""
    return "[" + ", ".join(render_spec(s, tf) for s in specs) + "]"
