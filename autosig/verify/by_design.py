"""What may differ on purpose between the original and the rewritten run, per function.

Three things a rewrite may change on purpose, each limited to what it really changes:

- **random streams**: an AS102 fix (Python/NumPy randomness -> ``tf.random``), fewer
  traces (a hidden-state draw restarts its stream with each trace), other op seeds,
  or XLA. Only what those draws reach by dataflow in the traced graphs may differ
  (``reach``): the outputs, the variables they are written into (and what reads those
  variables, in any function, on any later call), the ``tf.print``s that print them;
- **prints** (AS101): the ``tf.print`` lines that were ``print`` in the original,
  found by diffing the two sources; the original printed them only while tracing;
- **state** (AS103): the ``tf.Variable`` that replaced a Python counter; reported
  with its values, never as "equivalent".
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from autosig.profile.random_ops import HIDDEN, VARIABLE
from autosig.verify.candidate import Candidate
from autosig.verify.reach import Design, active_kinds, design_for, tainted_variables
from autosig.verify.runs import RunResult

Key = tuple[str, str, int]
"""(profile path, qualname, ordinal by first line)."""
_PRINT_CALL = re.compile(r"(?<![\w.])print\s*\(")
_ANY_PRINT = re.compile(r"\bprint\s*\(")


def designs(
    candidate: Candidate,
    before: RunResult,
    after: RunResult,
    keys: Iterable[Key],
    mode: str,
    traces: Mapping[Key, tuple[int, int | None]],
    *,
    unseen: bool = False,
) -> dict[Key, Design]:
    """The ``Design`` of every function ``keys`` names, in one mode (``unseen``: for
    its calls on unseen inputs, ``unseen.py``)."""
    keys = list(keys)
    summaries: dict[Key, tuple[Any, Any]] = {}
    for key in keys:
        file = os.path.realpath(candidate.absolute(key[0]))
        summaries[key] = (
            before.effects.reach.get((file, key[1], key[2])),
            after.effects.reach.get((file, key[1], key[2])),
        )
    active: dict[Key, tuple[frozenset[str], str]] = {}
    for key in keys:
        old, new = summaries[key]
        why = candidate.by_design(key[0], key[1])
        if why:
            active[key] = (frozenset({HIDDEN, VARIABLE}), why)
        else:
            active[key] = active_kinds(
                old,
                new,
                xla=mode == "xla",
                xla_baseline=before.mode == "xla",
                traces=traces.get(key, (0, None)),
                unseen=unseen,
            )
    tainted = tainted_variables(
        (summary, active[key][0])
        for key in keys
        for summary in summaries[key]
        if summary is not None
    )
    added = added_print_sites(candidate)
    out: dict[Key, Design] = {}
    for key in keys:
        old, new = summaries[key]
        kinds, why = active[key]
        if not why:
            read = sorted(_reads(old, tainted) | _reads(new, tainted))
            if read:
                why = (
                    f"it reads {', '.join(read)}, which a random draw that changed on "
                    "purpose was written into"
                )
        design = design_for(old, new, kinds, tainted, why)
        codes = {str(getattr(f, "code", "")) for f in candidate.fixes_for(key[0], key[1])}
        if added:
            design.added_prints = frozenset(added)
            design.added_prints_why = (
                "AS101 turned print into tf.print at "
                + ", ".join(sorted(_short_site(s) for s in added))
                + ": it printed only while tracing, now on every call"
            )
        if "AS103" in codes:
            design.new_state = "; ".join(
                _state_change(f)
                for f in candidate.fixes_for(key[0], key[1])
                if getattr(f, "code", None) == "AS103"
            )
        out[key] = design
    return out


def _state_change(fix: Any) -> str:
    """``AS103: `self.steps += 1` -> a tf.Variable`` from the fix's description."""
    code = re.search(r"`([^`]+)`", str(getattr(fix, "description", "") or ""))
    return f"AS103: `{code.group(1)}` -> a tf.Variable" if code else "AS103"


def _reads(summary: Mapping[str, Any] | None, tainted: set[str]) -> set[str]:
    found: set[str] = set()
    for part in ("o", "w", "p"):
        for deps in (summary or {}).get(part, {}).values():
            found |= {d[4:] for d in deps if d.startswith("var:") and d[4:] in tainted}
    return found


def _short_site(site: str) -> str:
    path, _, line = site.rpartition(":")
    return f"{os.path.basename(path)}:{line}"


def added_print_sites(candidate: Candidate) -> set[str]:
    """``file:line`` of every ``tf.print`` the rewrite made of a ``print`` (AS101), in
    the rewritten text: the lines of each changed block that has a ``print(`` call
    on both sides (``tf.print`` in the new one). A block the rewrite changed for
    another reason (a signature) has no ``print(`` in its original lines."""
    sites: set[str] = set()
    for rel, new_text in candidate.texts.items():
        codes = {str(getattr(f, "code", "")) for f in candidate.applied.get(rel, ())}
        if "AS101" not in codes:
            continue
        old_lines = candidate.originals.get(rel, "").splitlines()
        new_lines = new_text.splitlines()
        file = os.path.realpath(candidate.absolute(rel))
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag not in ("replace", "insert"):
                continue
            old_block = "\n".join(old_lines[i1:i2])
            if _PRINT_CALL.search(old_block):
                sites |= {
                    f"{file}:{j + 1}" for j in range(j1, j2) if _ANY_PRINT.search(new_lines[j])
                }
    return sites
