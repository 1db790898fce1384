"""What ``autosig fix`` says about call-site plans once every file is fixed.

A call-site plan (``FunctionPlan.call_sites``) changes the calling code, which may be in
other files than the function, and only in the files being fixed (PATH). So only the
whole run can tell: which recorded call sites lie outside PATH (listed, never written),
and whether any call of the function passes tensors now; when none does, the function's
findings are problems left, as for any function ``fix`` could not help.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from autosig.infer.plan import FunctionPlan, Plan, sites_text
from autosig.profile.format import Profile
from autosig.rewrite.fix_kinds import CALL_SITE

if TYPE_CHECKING:
    from autosig.rewrite.engine import FixResult


def call_site_paths(plan: Plan | None) -> set[str]:
    """Profile paths holding a recorded call site of some call-site plan."""
    if plan is None:
        return set()
    return {
        site.path
        for entry in plan.functions
        if entry.call_sites is not None
        for site in entry.call_sites.sites
        if site.path is not None
    }


def callee_sources(
    profile: Profile, root: Path, fixed: Iterable[str], known: Iterable[str]
) -> dict[str, str]:
    """Text of the profiled functions' files not being fixed (nor in ``known``) whose
    recorded calls are in ``fixed`` (profile paths): read to plan those calls, never
    written."""
    from autosig.errors import AutosigError
    from autosig.source.files import read_source

    wanted, skip = set(fixed), set(known)
    out: dict[str, str] = {}
    for record in profile.functions:
        rel = record.path
        if not record.editable or rel is None or rel in out or rel in skip:
            continue
        if Path(rel).is_absolute():
            continue
        if not any(site.path in wanted for site in record.call_sites):
            continue
        try:
            out[rel] = read_source(root / rel).text
        except AutosigError:
            continue  # planned without it: its calls are left as they are
    return out


def _planned(plan: Plan | None) -> list[FunctionPlan]:
    if plan is None:
        return []
    return [e for e in plan.functions if e.call_sites is not None and not e.stale]


def outside_lines(plan: Plan | None, fixed: Iterable[str]) -> list[str]:
    """One line per function whose recorded call sites lie outside the files fixed."""
    paths = set(fixed)
    lines: list[str] = []
    for entry in _planned(plan):
        assert entry.call_sites is not None
        outside = [s for s in entry.call_sites.sites if s.path not in paths]
        if not outside:
            continue
        wraps = ", ".join(p.constant() for p in entry.call_sites.params)
        lines.append(
            f"{entry.qualname} ({entry.path}:{entry.line}): call sites not in the files being "
            f"fixed, not written: {sites_text(outside)}; pass {wraps} there (or fix those "
            "files too)"
        )
        if entry.call_sites.unrecorded:
            lines.append(
                f"  and {entry.call_sites.unrecorded} calls from sites not recorded "
                "(library code or past the limit): they still trace once per value"
            )
    return lines


def passes_tensors(results: Sequence[FixResult]) -> set[tuple[str, str]]:
    """(function path, qualname) with a call rewritten in some file, or already rewritten."""
    done: set[tuple[str, str]] = set()
    for result in results:
        done |= result.call_sites_already
        done |= {
            (fix.target, fix.qualname)
            for fix in result.applied
            if fix.code == CALL_SITE and fix.target is not None and fix.qualname is not None
        }
    return done


def mark_unhelped(plan: Plan | None, results: dict[str, FixResult]) -> None:
    """A call-site plan none of whose calls passes tensors after the fix left its
    function as it was: say so in the function's file and count its findings as open.

    ``results`` maps profile paths to the fix results of the files fixed.
    """
    done = passes_tensors(list(results.values()))
    for entry in _planned(plan):
        result = results.get(entry.path)
        if result is None or (entry.path, entry.qualname) in done:
            continue
        what = "not fixed" if entry.action == "none" else "its Python values still retrace"
        result.left.append(
            f"{entry.qualname} (line {entry.line}): {what}: none of its recorded call sites "
            "was rewritten (see the lines above)"
        )
        result.findings.extend(
            dataclasses.replace(f, path=result.path, fixable=False, fix_safety="none")
            for f in entry.findings
        )
