"""Compare two runs' effects of one function, call by call (parent side of ``effects``).

Each call's entry (``effects.note_call``) is compared in order: whether it raised (and
what), its returned structure and values, the variables it read or wrote, what its
``tf.print``s wrote; then the number of calls. Arrays go through the one comparator
(``arrays.compare_arrays``); what may differ on purpose is named by a
``reach.Design``, and only that:

- values a changed random stream reaches (dataflow in the traced graphs): only their
  structure, dtypes and shapes are compared;
- ``tf.print`` sites the rewrite added (AS101): their output is set aside (the
  original printed only while tracing); every other print is compared, number by
  number (integers exactly, floats with float32 tolerances);
- variables the rewrite added (AS103): reported with their values after each call,
  never silently equal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autosig.text import number
from autosig.verify.arrays import LeafResult, Tolerance, compare_arrays
from autosig.verify.reach import Design


@dataclass
class EffectsComparison:
    calls_compared: int
    first_call: int | None = None
    what: str = ""
    """What differed at ``first_call`` ("" when every call agrees)."""
    kind: str = ""
    """outputs | variables | print | exception | calls"""
    by_design: str = ""
    """Differences accepted as by design (what a random draw reached, AS101's prints)."""
    new_state: dict[str, list[str]] = field(default_factory=dict)
    """Variables only the rewritten run has (AS103) -> their value after each call."""
    max_abs: float = 0.0
    max_rel: float = 0.0
    rel_defined: bool = True

    @property
    def equal(self) -> bool:
        return self.first_call is None and not self.what

    def note(self, leaf: LeafResult) -> LeafResult:
        """Keep the float error a compared leaf measured."""
        self.max_abs = max(self.max_abs, leaf.max_abs)
        if math.isinf(leaf.max_rel):
            self.rel_defined = False  # within atol of a reference 0
        else:
            self.max_rel = max(self.max_rel, leaf.max_rel)
        return leaf


class _Diff(Exception):
    pass


@dataclass
class _Judge:
    """One call's comparison: tolerances, what may differ, where notes go."""

    tol: Tolerance
    design: Design
    result: EffectsComparison
    notes: list[str]

    def by_design(self, why: str) -> None:
        if why and why not in self.notes:
            self.notes.append(why)

    def arrays(self, a: Any, b: Any, where: str, random: bool) -> None:
        leaf = compare_arrays(a, b, self.tol, where)
        if leaf.equal:
            self.result.note(leaf)
            return
        if random and not _structural(leaf, a, b):
            self.by_design(self.design.values)
            return
        raise _Diff(f"{where}: {leaf.reason}" if leaf.reason else f"{where}: values differ")


def _structural(leaf: LeafResult, a: Any, b: Any) -> bool:
    """A difference in what even a random value must keep: dtype, shape, readability."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return True
    if "error" in a or "error" in b:
        return True
    return a.get("dtype") != b.get("dtype") or list(a.get("shape", ())) != list(b.get("shape", ()))


# -- returned values --------------------------------------------------------------------------


def _compare_values(a: Any, b: Any, where: str, judge: _Judge) -> None:
    ka, kb = a.get("k"), b.get("k")
    if ka != kb:
        raise _Diff(f"{where}: {_kind(a)} -> {_kind(b)}")
    random = judge.design.output(where)
    if ka == "py":
        if a["type"] != b["type"]:
            raise _Diff(f"{where}: Python {a['type']} -> {b['type']}")
        x, y = a["value"], b["value"]
        if a["type"] == "float" and not isinstance(x, str) and not isinstance(y, str):
            judge.arrays(np.float64(x), np.float64(y), where, random)
        elif x != y:
            if not random:
                shown = (repr(v) if isinstance(v, str) else number(v) for v in (x, y))
                raise _Diff(f"{where}: {' -> '.join(shown)}")
            judge.by_design(judge.design.values)
        return
    if ka in ("tuple", "list", "namedtuple"):
        if a.get("type") != b.get("type"):
            raise _Diff(f"{where}: {a.get('type')} -> {b.get('type')}")
        if len(a["items"]) != len(b["items"]):
            raise _Diff(f"{where}: {ka} of {len(a['items'])} -> {len(b['items'])} items")
        for index, (x, y) in enumerate(zip(a["items"], b["items"], strict=True)):
            _compare_values(x, y, f"{where}[{index}]", judge)
        return
    if ka == "dict":
        if list(a["items"]) != list(b["items"]):
            raise _Diff(f"{where}: keys {list(a['items'])} -> {list(b['items'])}")
        for key in a["items"]:
            _compare_values(a["items"][key], b["items"][key], f"{where}[{key}]", judge)
        return
    if ka in ("tensor", "numpy"):
        judge.arrays(a, b, where, random)
        return
    if ka == "variable":
        judge.arrays(a["value"], b["value"], where, random)
        return
    if ka == "ragged":
        if len(a["splits"]) != len(b["splits"]):
            raise _Diff(f"{where}: ragged rank {len(a['splits'])} -> {len(b['splits'])}")
        for index, (x, y) in enumerate(zip(a["splits"], b["splits"], strict=True)):
            judge.arrays(x, y, f"{where}.row_splits[{index}]", random)
        judge.arrays(a["values"], b["values"], f"{where}.values", random)
        return
    if ka == "sparse":
        for part in ("dense_shape", "indices", "values"):
            judge.arrays(a[part], b[part], f"{where}.{part}", random)
        return
    if a != b:
        raise _Diff(f"{where}: {_kind(a)} -> {_kind(b)}")


def _kind(value: dict[str, Any]) -> str:
    kind = value.get("k")
    if kind == "py":
        return f"Python {value.get('type')}"
    if kind in ("tensor", "numpy"):
        return f"{kind} {value.get('dtype')}{value.get('shape')}"
    if kind == "object":
        return f"object {value.get('type')}"
    return str(kind)


# -- variables --------------------------------------------------------------------------------


def _compare_variables(a: list[list[Any]], b: list[list[Any]], judge: _Judge) -> None:
    # variables a fix adds on purpose (AS103's counter) shift a name's ordinals: pair
    # the others by name, dtype and shape instead
    added_by_design = bool(judge.design.new_state)
    named_a, named_b = _named(a, added_by_design), _named(b, added_by_design)
    missing = [n for n in named_a if n not in named_b]
    added = [n for n in named_b if n not in named_a]
    if missing or (added and not added_by_design):
        raise _Diff(
            "variables read or written differ: "
            + ", ".join(
                [f"{n} only in the original" for n in missing]
                + [f"{n} only in the rewritten" for n in added]
            )
        )
    for name in added:
        judge.result.new_state.setdefault(name, []).append(_shown(named_b[name][1]))
    for name, (base, value) in named_a.items():
        judge.arrays(value, named_b[name][1], f"variable {name}", judge.design.variable(base))


def _named(entries: list[list[Any]], typed: bool = False) -> dict[str, tuple[str, Any]]:
    """Variable entries keyed by name (with dtype and shape when ``typed``; a second
    variable of one name gets ``(#2)``) -> (the variable's own name, its digest)."""
    out: dict[str, tuple[str, Any]] = {}
    for name, value in entries:
        key = base = name
        if typed and isinstance(value, dict) and "dtype" in value:
            base = key = f"{name} {value['dtype']}{value.get('shape')}"
        ordinal = 1
        while key in out:
            ordinal += 1
            key = f"{base} (#{ordinal})"
        out[key] = (name, value)
    return out


def _shown(digest: Any) -> str:
    """A variable's value as the report shows it (full when small, else a summary)."""
    if not isinstance(digest, dict):
        return str(digest)
    values = digest.get("values")
    if values is not None:
        return str(values[0]) if len(values) == 1 and not digest.get("shape") else str(values)
    if "sum" in digest:
        return f"sum {digest['sum']:.6g}"
    return "(digest)"


# -- tf.print -------------------------------------------------------------------------------

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _records(printed: Any) -> list[list[Any]]:
    """A call's print records (``effects.print_records``); "" / None: nothing printed."""
    if not printed:
        return []
    if isinstance(printed, (str, dict)):
        return [["", printed]]
    return [list(r) for r in printed]


def _joined(records: list[list[Any]]) -> list[list[Any]]:
    """Consecutive records of one site as one (a site set aside may have split them)."""
    out: list[list[Any]] = []
    for site, text in records:
        if out and out[-1][0] == site and isinstance(text, str) and isinstance(out[-1][1], str):
            out[-1][1] += text
        else:
            out.append([site, text])
    return out


def _compare_prints(a: Any, b: Any, judge: _Judge) -> None:
    design = judge.design
    old = _joined(_records(a))
    new = _records(b)
    if design.added_prints:
        if any(site in design.added_prints for site, _ in new):
            judge.by_design(design.added_prints_why)
        new = [r for r in new if r[0] not in design.added_prints]
    new = _joined(new)
    if len(old) != len(new):
        raise _Diff(f"tf.print output {_text(old)!r} -> {_text(new)!r}")
    for (old_site, x), (new_site, y) in zip(old, new, strict=True):
        if _same_text(x, y, judge.tol):
            continue
        if design.printed(old_site, new_site) and _skeleton(x) == _skeleton(y):
            judge.by_design(design.values)
            continue
        where = f" (printed at {_site_name(new_site)})" if new_site else ""
        raise _Diff(f"tf.print output{where} {_short(x)!r} -> {_short(y)!r}")


def _same_text(a: Any, b: Any, tol: Tolerance) -> bool:
    """Equal text, or the same text with numbers equal: integers exactly, decimals with
    float32 tolerances (XLA may print other last digits)."""
    if a == b:
        return True
    if not isinstance(a, str) or not isinstance(b, str) or _skeleton(a) != _skeleton(b):
        return False
    xs, ys = _NUMBER.findall(a), _NUMBER.findall(b)
    for x, y in zip(xs, ys, strict=True):
        if _is_integer(x) and _is_integer(y):
            if int(x) != int(y):
                return False
        elif not compare_arrays(
            np.float64(x), np.float64(y), tol, "print", tolerance_dtype="float32"
        ).equal:
            return False
    return True


def _is_integer(token: str) -> bool:
    return not any(c in token for c in ".eE")


def _skeleton(text: Any) -> str:
    text = text if isinstance(text, str) else str(text.get("head", ""))
    return _NUMBER.sub("#", text)


def _site_name(site: str) -> str:
    path, _, line = site.rpartition(":")
    return f"{path.rsplit('/', 1)[-1]}:{line}" if path else site


def _text(records: list[list[Any]]) -> str:
    return _short("".join(t if isinstance(t, str) else str(t.get("head", "")) for _, t in records))


def _short(text: Any, limit: int = 120) -> str:
    text = text if isinstance(text, str) else str(text.get("head", ""))
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- calls ----------------------------------------------------------------------------------


def _exception_text(entry: dict[str, Any] | None) -> str:
    if not entry:
        return "returned normally"
    where = f" at {entry['where']}" if entry.get("where") else ""
    return f"raised {entry['type']}{where}: {entry['message']}"


def compare_call(a: dict[str, Any], b: dict[str, Any], judge: _Judge) -> None:
    """One call: exception, outputs, variables, tf.print (raises ``_Diff``)."""
    result = judge.result
    ea, eb = a.get("e"), b.get("e")
    if (ea is None) != (eb is None) or (ea and ea["type"] != eb["type"]):
        result.kind = "exception"
        raise _Diff(f"original {_exception_text(ea)}; rewritten {_exception_text(eb)}")
    if ea is None:
        result.kind = "outputs"
        _compare_values(a.get("o", {}), b.get("o", {}), "output", judge)
    result.kind = "variables"
    _compare_variables(a.get("v", []), b.get("v", []), judge)
    result.kind = "print"
    _compare_prints(a.get("p"), b.get("p"), judge)
    result.kind = ""


def compare_effects(
    old: Sequence[dict[str, Any]],
    new: Sequence[dict[str, Any]],
    tolerance: Tolerance,
    *,
    design: Design | None = None,
) -> EffectsComparison:
    """Call by call: exception, outputs, variables, tf.print; then the number of calls.

    ``design``: what may differ on purpose (``reach.Design``); nothing without it.
    """
    result = EffectsComparison(calls_compared=0)
    judge = _Judge(tolerance, design or Design(), result, [])
    for index, (a, b) in enumerate(zip(old, new, strict=False)):
        try:
            compare_call(a, b, judge)
        except _Diff as diff:
            result.first_call = index
            result.what = str(diff)
            result.calls_compared = index + 1
            result.by_design = "; ".join(judge.notes)
            return result
        result.calls_compared = index + 1
    if len(old) != len(new):
        result.kind = "calls"
        result.first_call = min(len(old), len(new))
        result.what = f"the original made {len(old)} calls, the rewritten {len(new)}"
    result.by_design = "; ".join(judge.notes)
    return result


def compare_one(
    old: dict[str, Any], new: dict[str, Any], tolerance: Tolerance, design: Design | None
) -> tuple[str, str, str]:
    """One pair of calls outside the recorded sequence (an unseen input): (kind of the
    first difference, what differed, what differed by design); ("", "", ...) if equal."""
    result = EffectsComparison(calls_compared=1)
    judge = _Judge(tolerance, design or Design(), result, [])
    try:
        compare_call(old, new, judge)
    except _Diff as diff:
        return result.kind, str(diff), "; ".join(judge.notes)
    return "", "", "; ".join(judge.notes)
