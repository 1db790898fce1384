"""One parameter of a profiled function: its argument's leaf, plus what the parameter adds.

The kind of parameter (``*args``, keyword-only), its default, the shape policy for it and
the verifier's keep-as-Python list decide whether it must be in a signature and whether
it can be; that is separate from what its values allow (``arguments``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autosig.analysis import PythonUse
from autosig.infer.arguments import infer_leaf
from autosig.infer.leaf import Leaf
from autosig.infer.options import InferOptions
from autosig.infer.values import value_key
from autosig.profile.format import FunctionRecord, ParamInfo, Value
from autosig.specs import SpecNode


@dataclass
class ParamResult:
    info: ParamInfo
    leaf: Leaf
    needed: bool
    """Must be in the signature: varied, passed a non-default value, or has no default."""
    evidence: str
    blocker: str | None = None
    spec: SpecNode | None = None
    python_uses: list[PythonUse] = field(default_factory=list)
    relax: str = "auto"
    """The shape policy this parameter was inferred with (``auto``: decided later)."""


def analyze_param(record: FunctionRecord, info: ParamInfo, options: InferOptions) -> ParamResult:
    """What the recorded calls say about parameter ``info`` of ``record``."""
    obs = _observations(record, info.name)
    path = record.path or ""
    where = f"`{info.name}`"
    if info.kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
        star = "*" if info.kind == "VAR_POSITIONAL" else "**"
        used = [v for v, _, _ in obs if not _empty(v)]
        leaf = Leaf(evidence=["always empty" if not used else "receives arguments"])
        result = ParamResult(info, leaf, needed=False, evidence=leaf.evidence[0])
        if used:
            result.blocker = (
                f"`{star}{info.name}` receives arguments: input_signature cannot describe "
                f"{star}{info.name}"
            )
            leaf.cause = f"`{star}{info.name}` varies"
        return result
    relax = options.relax_for(path, record.qualname, info.name)
    if record.signatures_dropped:
        relax = "all"  # calls we did not see may have other sizes in any dimension
    leaf = infer_leaf([(v, c) for v, c, _ in obs], where, relax, nested=False) if obs else Leaf()
    all_default = bool(obs) and all(_is_default(info, v, p) for v, _, p in obs)
    needed = not all_default
    evidence = "; ".join(leaf.evidence) or "no calls recorded"
    if all_default:
        evidence = f"always its default ({evidence})"
    result = ParamResult(info, leaf, needed=needed, evidence=evidence, relax=relax)
    if info.kind == "KEYWORD_ONLY" and needed:
        result.blocker = (
            f"keyword-only {where} is passed values other than its default: TensorFlow's "
            "input_signature cannot cover keyword-only parameters"
        )
    elif leaf.blocker:
        result.blocker = leaf.blocker
    elif not obs:
        result.blocker = f"{where} was never seen in a recorded call"
    elif (path, record.qualname, info.name) in options.force_python and (
        leaf.python is not None or needed
    ):
        result.blocker = f"{where} is kept as a Python value (verification fallback)"
    elif leaf.spec is not None:
        result.spec = leaf.spec
    return result


def _observations(record: FunctionRecord, name: str) -> list[tuple[Value, int, str]]:
    """(value, calls, how it was passed) of parameter ``name`` in each call signature."""
    out = []
    for sig in record.signatures:
        if name in sig.args:
            out.append((sig.args[name], sig.calls, sig.passed.get(name, "positional")))
    return out


def _is_default(info: ParamInfo, value: Value, passed: str) -> bool:
    return passed == "default" or (
        info.default is not None and value_key(value) == value_key(info.default)
    )


def _empty(value: Value) -> bool:
    return (
        value.get("kind") in ("tuple", "dict", "list")
        and not value.get("items")
        and "length" not in value
    )
