"""A step that takes elements of a distributed dataset: ``input_signature=[D.element_spec]``.

A ``tf.function`` called with ``PerReplica`` batches (``for x in dist_dataset:
step(x)``) retraces for every new per-replica shape. No ``tf.TensorSpec`` can name a
``PerReplica``; TensorFlow's distributed input guide writes
``@tf.function(input_signature=[dist_dataset.element_spec])`` instead, which traces once.
That fix is written only when it is safe, all of this checked on the source:

- the function is decorated (the signature is evaluated with the decorator), has one
  parameter and the profile saw only distributed values in it;
- ``D = <strategy>.experimental_distribute_dataset(...)`` (or
  ``distribute_datasets_from_function``) is the only binding of ``D`` in the scope of the
  ``def`` and stands before it in the same block, so ``D`` exists, and is that dataset,
  when the decorator runs;
- every use of the function's name is a call with one argument that is an element of
  ``D``: the target of ``for x in D``, ``next(it)`` with ``it = iter(D)``, or
  ``next(iter(D))``; so every call gets a value ``D.element_spec`` describes (tf.data
  guarantees its elements match it: measured, an ``element_spec`` pins a dimension only
  when every element has that size, e.g. ``batch(n, drop_remainder=True)``, so no
  relaxed batch dimension is needed);
- the shape-use analysis (which follows ``strategy.run(fn, args=...)`` into ``fn``)
  finds no static read of the parameter's shape: ``element_spec`` may leave any
  dimension ``None`` where the original traces saw a number.

Otherwise the plan keeps what inference decided (``reduce_retracing=True`` where shapes
vary) and says why, with the code to paste.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from autosig.analysis.dataset_elements import dataset_of_calls
from autosig.analysis.shape_reads import ShapeUse
from autosig.infer.observations import ParamResult
from autosig.infer.observed import Observed
from autosig.infer.specs import ElementSpecNode
from autosig.profile.format import FunctionRecord
from autosig.source.discover import FunctionSite, Source

GUIDE = "TensorFlow's distributed input guide"


@dataclass(frozen=True)
class DistributedInput:
    """What was found for a step taking distributed values."""

    param: str
    dataset: str | None
    """The distributed dataset its calls take elements of (None: not found)."""
    written: bool
    reason: str
    """For the plan's reasons: what fix writes, or why not and what to paste."""


def paste_code(dataset: str, decorator: str = "@tf.function") -> str:
    return f"{decorator}(input_signature=[{dataset}.element_spec])"


def plan_distributed(
    source: Source,
    site: FunctionSite,
    record: FunctionRecord,
    observed: Observed,
    use: ShapeUse,
) -> DistributedInput | None:
    """Give the distributed parameter ``D.element_spec`` when safe (``observed.results``
    updated; ``observed.distributed``: the parameters that took distributed values)."""
    if not observed.distributed:
        return None
    name, results = observed.distributed[0], observed.results
    other = _other_blockers(record, site, results, name)
    reads = _shape_reads(use, name)
    assert source.wrapper is not None
    dataset, why_not = dataset_of_calls(source.wrapper, site)
    if why_not is None:
        why_not = other
    if why_not is None:
        why_not = reads
    if why_not is None:
        assert dataset is not None
        for r in results:
            if r.info.name == name:
                r.spec = ElementSpecNode(dataset)
                r.blocker = None
        return DistributedInput(
            name,
            dataset,
            True,
            f"`{name}` takes elements of the distributed dataset `{dataset}`: "
            f"input_signature=[{dataset}.element_spec], as {GUIDE} writes it",
        )
    shown = dataset or "dist_dataset"
    return DistributedInput(
        name,
        dataset,
        False,
        f"`{name}` is an element of a distributed dataset (PerReplica): "
        f"`{paste_code(shown)}` would trace it once ({GUIDE}), but autosig does not write it: "
        f"{why_not}",
    )


def _other_blockers(
    record: FunctionRecord, site: FunctionSite, results: list[ParamResult], name: str
) -> str | None:
    if site.decorator is None or not isinstance(site.function, cst.FunctionDef):
        return "it is not a decorated def (the signature belongs in its decorator)"
    if site.site.is_method:
        return "it is a method"
    others = [r.info.name for r in results if r.info.name != name]
    if others or len(record.params) != 1:
        return f"it takes other parameters too ({', '.join(others) or 'unknown'})"
    if results and results[0].info.kind not in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD"):
        return f"`{name}` is not a positional parameter"
    return None


def _shape_reads(use: ShapeUse, name: str) -> str | None:
    definite = [r for r in use.reads.get(name, []) if r.definite]
    if not definite:
        return None
    return (
        f"{definite[0].describe()}: element_spec may leave that dimension None "
        "(compute it with tf.shape() instead)"
    )
