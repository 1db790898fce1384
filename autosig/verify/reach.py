"""Which outputs, variables and printed values a function's random draws reach.

"Different by design" must cover only what a random stream that changed on purpose
actually reaches: a deterministic output computed beside a ``tf.nn.dropout`` is
compared exactly. This module follows dataflow in the traced graphs
(``profile.random_ops.graph_reach``) on both sides of a comparison:

- **child side** (in the workload's processes, TensorFlow loaded): ``summarise``
  turns each new concrete function of a watched tf.function into what every returned
  leaf (named as ``effects.digest`` names it: ``output[0]``, ``output['loss']``),
  every variable it assigns and every ``tf.print`` site depends on: ``hidden`` /
  ``variable`` random draws and ``var:<name>`` (a variable's value when read);
- **parent side**: ``Design`` says, for one function in one mode, which outputs,
  variables and print sites may differ on purpose, given which kinds of draws changed
  (``active_kinds``) and which variables some function's changed draws were written
  into (``tainted_variables``: across functions and calls, a fixed point).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from autosig.profile.random_ops import HIDDEN, VARIABLE, graph_reach, hidden_state_random_ops

SITE_MARK = "\x1e{site}\x1f"
"""Appended to a traced ``tf.print``'s ``end`` in verified runs: its output names the
print site (``file:line``) it came from, and the PrintV2 op carries it too."""
SITE_RE = re.compile("\x1e([^\x1f]*)\x1f")


# -- child side -----------------------------------------------------------------------------


def summarise(fn_self: Any, done: set[str], into: dict[str, Any]) -> None:
    """Add every concrete function of ``fn_self`` not in ``done`` to ``into``.

    ``into``: {"o": {path: deps}, "w": {variable: deps}, "p": {site: deps},
    "ops": {"hidden": [...], "variable": [...]}, "seeds": [...]}, deps as sorted
    lists; the union over all traces. Never raises (a private API that moved leaves
    the summary empty, and the comparison then treats nothing as by design).
    """
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return
    for concrete in list(fn_self._function_cache.values()):
        name = concrete.name
        name = name.decode() if isinstance(name, bytes) else str(name)
        if name in done:
            continue
        done.add(name)
        with contextlib.suppress(Exception):
            _summarise_concrete(tf, concrete, into)


def _summarise_concrete(tf: Any, concrete: Any, into: dict[str, Any]) -> None:
    graph = concrete.graph
    variables = {id(v.handle): str(v.name) for v in getattr(concrete, "variables", ())}
    captured: dict[str, str] = {}
    for external, internal in graph.captures:
        if id(external) in variables:
            captured[internal.name] = variables[id(external)]
    inputs = list(graph.inputs)
    resource = [j for j, t in enumerate(inputs) if t.dtype == tf.resource]
    reach = graph_reach(graph.as_graph_def(), [t.name for t in inputs], resource)

    def named(deps: Iterable[Any]) -> set[str]:
        out: set[str] = set()
        for dep in deps:
            if isinstance(dep, int):
                # a variable's value; a plain argument is compared as an input instead
                var = captured.get(inputs[dep].name) if dep < len(inputs) else None
                if var is not None:
                    out.add(f"var:{var}")
            else:
                out.add(dep)
        return out

    outputs = into.setdefault("o", {})
    for path, tensors in _output_leaves(tf, concrete.structured_outputs, "output"):
        deps: set[str] = set()
        for tensor in tensors:
            deps |= named(reach.of(tensor.name))
        outputs[path] = sorted(set(outputs.get(path, ())) | deps)
    writes = into.setdefault("w", {})
    for j, deps in reach.writes.items():
        var = captured.get(inputs[j].name) if j < len(inputs) else None
        if var is not None:
            writes[var] = sorted(set(writes.get(var, ())) | named(deps))
    prints = into.setdefault("p", {})
    for end, deps in reach.prints:
        found = SITE_RE.search(end)
        site = found.group(1) if found else ""
        prints[site] = sorted(set(prints.get(site, ())) | named(deps))
    hidden = hidden_state_random_ops()
    ops = into.setdefault("ops", {"hidden": [], "variable": []})
    for op in reach.random_ops:
        kind = "hidden" if op in hidden else "variable"
        ops[kind] = sorted(set(ops[kind]) | {op})
    into["seeds"] = sorted(set(into.get("seeds", ())) | set(reach.seeds))


def _output_leaves(tf: Any, value: Any, where: str) -> Iterable[tuple[str, list[Any]]]:
    """(path, graph tensors) per returned leaf, paths as ``effects.digest`` walks them."""
    if isinstance(value, dict):
        for key in sorted(value, key=repr):
            yield from _output_leaves(tf, value[key], f"{where}[{key!r}]")
        return
    if isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            yield from _output_leaves(tf, item, f"{where}[{index}]")
        return
    if isinstance(value, tf.Tensor):
        yield where, [value]
    elif isinstance(value, tf.__internal__.CompositeTensor):
        yield where, [t for t in tf.nest.flatten(value, expand_composites=True)]


def print_site(watched: set[str]) -> str:
    """``file:line`` of the innermost frame in a watched file where a ``tf.print`` is
    being traced (autograph's generated code mapped back to the user's lines)."""
    with contextlib.suppress(Exception):
        from tensorflow.python.util import tf_stack

        for frame in reversed(tf_stack.extract_stack()):
            path = os.path.realpath(frame.filename)
            if path in watched:
                return f"{path}:{frame.lineno}"
    return ""


# -- parent side ----------------------------------------------------------------------------


def merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Two summaries of one function (two processes of a run) as one: the union."""
    out: dict[str, Any] = {}
    for part in ("o", "w", "p", "ops"):
        both: dict[str, set[str]] = {}
        for summary in (a, b):
            for name, deps in summary.get(part, {}).items():
                both.setdefault(name, set()).update(deps)
        out[part] = {name: sorted(deps) for name, deps in both.items()}
    out["seeds"] = sorted(set(a.get("seeds", ())) | set(b.get("seeds", ())))
    return out


_QUOTED_KEY = re.compile(r"\['([^'\]]*)'\]")


def covered(where: str, paths: Iterable[str]) -> bool:
    """``where`` is one of ``paths`` or inside one (``output[0].values`` in ``output[0]``).

    Dict keys are compared without quotes: a profile sample keeps a key as ``str(key)``,
    the digest as ``repr(key)`` (the same for str keys, not for ``1``)."""
    where = _QUOTED_KEY.sub(r"[\1]", where)
    for path in paths:
        path = _QUOTED_KEY.sub(r"[\1]", path)
        if where == path or where.startswith((path + "[", path + ".")):
            return True
    return False


def _reaches(deps: Iterable[str], active: frozenset[str], variables: set[str]) -> bool:
    return any(d in active or (d.startswith("var:") and d[4:] in variables) for d in deps)


def tainted_variables(
    functions: Iterable[tuple[Mapping[str, Any], frozenset[str]]],
) -> set[str]:
    """Variables some function wrote from a draw that changed on purpose (``active``
    kinds), directly or through another such variable: a fixed point over all
    functions and both runs (a variable written in one call is read by the next)."""
    pairs = [(summary, active) for summary, active in functions]
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for summary, active in pairs:
            for var, deps in summary.get("w", {}).items():
                if var not in tainted and _reaches(deps, active, tainted):
                    tainted.add(var)
                    changed = True
    return tainted


def _mentions(summary: Mapping[str, Any], var: str) -> bool:
    if var in summary.get("w", {}):
        return True
    dep = f"var:{var}"
    return any(dep in deps for part in ("o", "p") for deps in summary.get(part, {}).values())


@dataclass
class Design:
    """What may differ on purpose in one function's calls, and why.

    ``values``: why random values may differ ("" if none may); then only the output
    paths, variables and print sites they reach. ``added_prints``: print sites of the
    rewritten run the rewrite added (AS101: ``print`` became ``tf.print``), and why.
    ``new_state``: why the rewritten run has variables the original does not (AS103).
    """

    values: str = ""
    outputs: frozenset[str] = frozenset()
    variables: frozenset[str] = frozenset()
    old_prints: frozenset[str] = frozenset()
    new_prints: frozenset[str] = frozenset()
    added_prints: frozenset[str] = frozenset()
    added_prints_why: str = ""
    new_state: str = ""
    reached: list[str] = field(default_factory=list)
    """What the draws were found to reach, for the report."""

    def output(self, where: str) -> bool:
        return bool(self.values) and covered(where, self.outputs)

    def variable(self, name: str) -> bool:
        return bool(self.values) and name in self.variables

    def printed(self, old_site: str | None, new_site: str | None) -> bool:
        return bool(self.values) and (
            (old_site is not None and old_site in self.old_prints)
            or (new_site is not None and new_site in self.new_prints)
        )


def design_for(
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any] | None,
    active: frozenset[str],
    variables: set[str],
    why: str,
) -> Design:
    """The outputs, variables and prints of one function that ``active`` draws (or
    the ``variables`` they tainted) reach, in either run."""
    if not why:
        return Design()
    outputs: set[str] = set()
    written: set[str] = set()
    sites: list[set[str]] = [set(), set()]
    for index, summary in enumerate((old or {}, new or {})):
        for path, deps in summary.get("o", {}).items():
            if _reaches(deps, active, variables):
                outputs.add(path)
        for var, deps in summary.get("w", {}).items():
            if _reaches(deps, active, variables):
                written.add(var)
        for site, deps in summary.get("p", {}).items():
            if _reaches(deps, active, variables):
                sites[index].add(site)
    # a variable a changed draw was written into differs wherever it is seen: in the
    # functions that write it and in those that only read it
    seen = written | {v for s in (old or {}, new or {}) for v in variables if _mentions(s, v)}
    touched = written | variables
    reached = sorted(outputs) + [f"variable {v}" for v in sorted(seen)]
    if sites[0] or sites[1]:
        reached.append("tf.print")
    return Design(
        why,
        frozenset(outputs),
        frozenset(touched),
        frozenset(sites[0]),
        frozenset(sites[1]),
        reached=reached,
    )


def active_kinds(
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any] | None,
    *,
    xla: bool,
    xla_baseline: bool,
    traces: tuple[int, int | None],
    unseen: bool = False,
) -> tuple[frozenset[str], str]:
    """Which kinds of draws change on purpose in this comparison, and why ("" none).

    Graph mode: a hidden-state draw restarts its stream with each trace (and takes its
    op seed from the graph when the program gave none), so fewer traces, or a graph
    whose draws got other seeds, change its numbers; a ``tf.random.Generator``'s
    stream lives in its variable and does not change. Under XLA every draw may.
    ``unseen``: calls on inputs the profile never saw, for which the original traces
    anew (a new stream) where the rewritten one need not.
    """
    ops: dict[str, set[str]] = {"hidden": set(), "variable": set()}
    for summary in (old or {}, new or {}):
        for kind, names in summary.get("ops", {}).items():
            ops.setdefault(kind, set()).update(names)
    every = ", ".join(sorted(ops["hidden"] | ops["variable"]))
    if not every:
        return frozenset(), ""
    if xla:
        why = (
            f"random op {every}: XLA may draw other numbers in another graph"
            if xla_baseline
            else f"random op {every}: XLA draws other numbers than graph mode"
        )
        return frozenset({HIDDEN, VARIABLE}), why
    hidden = ", ".join(sorted(ops["hidden"]))
    if not hidden:
        return frozenset(), ""
    if unseen:
        return frozenset({HIDDEN}), (
            f"random op {hidden}: the original traced anew for the unseen input, "
            "starting a new random stream"
        )
    if traces[1] is not None and traces[0] != traces[1]:
        return frozenset({HIDDEN}), (
            f"random op {hidden}: every trace of the original started its own random "
            f"stream ({traces[0]} traces), the rewritten one continues one stream "
            f"({traces[1]} traces)"
        )
    if (old or {}).get("seeds") != (new or {}).get("seeds"):
        return frozenset({HIDDEN}), (
            f"random op {hidden}: the rewritten graph gives it other op seeds "
            "(TensorFlow derives them from the graph's op count when the program sets none)"
        )
    return frozenset(), ""
