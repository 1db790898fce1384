"""Evidence of a function's domain: when an ``input_signature`` may be labelled safe.

An ``input_signature`` rejects or converts what does not fit its specs: another dtype
(a float64 NumPy array is cast to a float32 spec silently, a float64 or int64 tensor
raises), another rank, another list length, a dict with other keys, a parameter it leaves
out. The original traces those anew. How many calls a profile has does not show that no
such call comes later (measured: the generated dtype/domain suite broke 8 of 40 programs
with signatures from 8-10-call profiles). A signature is labelled safe only with
evidence that the calls have the signature's structure, dtypes and ranks:

- a shape policy that relaxes dimensions (``relax = "batch"`` or ``"all"``, in the config or
  ``--relax``) is set for the function: the user asked for a signature (``none`` is no
  such request);
- a distributed dataset's element spec is the signature (``distributed_inputs``);
- every recorded call came from call sites whose arguments are elements of a
  ``tf.data`` dataset (``for x, y in ds: step(x, y)``; ``analysis/dataset_loops.py``):
  a dataset's elements share one structure, dtype and rank, the ones the profile saw.

Without it ``infer.guarded_trace`` seeds a guarded relaxed trace where it can, else the
signature is offered as an unsafe fix, and ``narrows`` says what it would reject.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autosig.analysis.dataset_loops import element_args, file_facts, other_references
from autosig.infer.observations import ParamResult
from autosig.infer.specs import (
    DictNode,
    ElementSpecNode,
    ListNode,
    RaggedSpecNode,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    TupleNode,
)
from autosig.profile.format import FunctionRecord
from autosig.text import plural

AUTO = "auto"
POSITIONAL_KINDS = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
FLOATS = ("float16", "bfloat16", "float32")


RELAXING = ("all", "batch")
"""The shape policies that ask for a signature: ``none`` keeps the dimensions seen
constant, the cautious-sounding choice, so it is no request to narrow dtypes and ranks."""


def asked(signed: Sequence[ParamResult]) -> list[str]:
    """The relaxing shape policies set for these parameters (the user asked for a
    signature): ``batch`` or ``all``, not ``auto`` or ``none``."""
    return sorted({r.relax for r in signed} & set(RELAXING))


def tensor_params(signed: Sequence[ParamResult]) -> list[ParamResult]:
    """The signed parameters the calls passed tensors (or structures of them) for: not
    Python numbers, whose specs follow the number rules (``python_params``)."""
    return [r for r in signed if r.spec is not None and r.leaf.python is None]


def evidence(
    record: FunctionRecord,
    signed: Sequence[ParamResult],
    root: Path | None,
) -> tuple[str | None, str]:
    """(What shows the domain, "") or (None, why nothing does)."""
    policies = asked(signed)
    if policies:
        return (
            f"a shape policy that relaxes dimensions was asked for (relax={', '.join(policies)}, "
            "from the config or --relax)",
            "",
        )
    if any(isinstance(r.spec, ElementSpecNode) for r in signed):
        return "a distributed dataset's element spec", ""
    tensors = tensor_params(signed)
    if not tensors:
        return "its signature holds only Python numbers (their dtype rules)", ""
    return dataset_calls(record, {r.info.name for r in tensors}, root)


def dataset_calls(
    record: FunctionRecord, names: set[str], root: Path | None
) -> tuple[str | None, str]:
    """Every recorded call passed ``names`` as elements of a tf.data dataset, and no other
    reference to the function in its own file or a call site's may pass anything else;
    or why not. Each file's dataset-loop facts are read once (``file_facts``)."""
    sites = record.call_sites
    if not sites:
        return None, "no call sites were recorded"
    if record.call_sites_dropped or sum(s.calls for s in sites) < record.calls:
        return None, "not every call's site was recorded (calls from other tf.functions?)"
    positional = [p.name for p in record.params if p.kind in POSITIONAL_KINDS]
    callee = record.callee
    loops = []
    for site in sites:
        if not site.editable or site.path is None:
            return None, f"a call comes from outside the project ({site.where})"
        facts = file_facts(site.path, root)
        if facts is None:
            return None, f"{site.where} could not be read"
        found = element_args(facts, site.line, site.col, callee)
        if isinstance(found, str):
            return None, f"{site.where}: {found}"
        missing = sorted(names - found.covered(positional))
        if missing:
            return None, (
                f"{site.where} passes `{missing[0]}` other than as an element of a tf.data dataset"
            )
        loops.append(f"`{found.dataset}` (line {found.line})")
    if callee is not None:  # ``__call__``'s calls go through any name: no such check
        # a call of the function in its own file or a call site's file that the profile
        # did not record (it may pass anything)
        recorded: dict[str, set[tuple[int, int | None]]] = {}
        for site in sites:
            assert site.path is not None  # every site passed the checks above
            recorded.setdefault(site.path, set()).add((site.line, site.col))
        if record.path is not None:
            recorded.setdefault(record.path, set())
        for path, positions in recorded.items():
            facts = file_facts(path, root)
            if facts is None and path == record.path:
                continue  # the function's own file unread: the sites were checked
            if facts is None:
                return None, f"{path} could not be read"
            lines = other_references(facts, callee, positions)
            if lines:
                return None, (
                    f"{path}:{lines[0]} refers to `{callee}` outside the recorded calls "
                    "(a call the profile never saw may pass anything)"
                )
    where = ", ".join(dict.fromkeys(loops))
    return (
        f"every recorded call ({plural(record.calls, 'call')}, "
        f"{plural(len(sites), 'call site')}) passes elements of the tf.data dataset {where}, "
        "whose elements share one structure, dtype and rank",
        "",
    )


def narrows(signed: Sequence[ParamResult]) -> list[str]:
    """What an input_signature of these specs rejects or converts that the original
    accepts, one phrase per tensor parameter."""
    out = []
    for r in tensor_params(signed):
        assert r.spec is not None
        parts = list(dict.fromkeys(_phrases(r.spec)))
        if parts:
            out.append(f"`{r.info.name}`: {', '.join(parts)}")
    return out


def _phrases(spec: SpecNode) -> list[str]:
    if isinstance(spec, (TensorSpecNode, RaggedSpecNode, SparseSpecNode)):
        kind = {TensorSpecNode: "", RaggedSpecNode: "ragged ", SparseSpecNode: "sparse "}
        what = f"only {spec.dtype} {kind[type(spec)]}tensors"
        if spec.shape is not None:
            what += f" of rank {len(spec.shape)}"
        if spec.dtype in FLOATS:
            what += f" (a float64 NumPy array is cast to {spec.dtype} silently)"
        return [what]
    if isinstance(spec, (TupleNode, ListNode)):
        kind = "tuple" if isinstance(spec, TupleNode) else "list"
        inner = [p for item in spec.items for p in _phrases(item)]
        return [f"a {kind} of exactly {plural(len(spec.items), 'item')}", *inner]
    if isinstance(spec, DictNode):
        keys = ", ".join(repr(k) for k, _ in spec.items)
        inner = [p for _, item in spec.items for p in _phrases(item)]
        return [f"a dict with exactly the keys {keys} (another key raises)", *inner]
    return []


def narrowing_text(signed: Sequence[ParamResult]) -> str:
    """One clause: what the signature narrows."""
    parts = narrows(signed)
    return (
        "an input_signature would accept " + "; ".join(parts) + ", where the original "
        "traces anything else anew"
        if parts
        else "an input_signature would narrow what the original accepts"
    )
