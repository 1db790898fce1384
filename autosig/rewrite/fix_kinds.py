"""The plan's fix kinds by code, with their precedence as data.

Each kind is one module with one ``PlanFix`` class (``autosig.rewrite.plan_fix``);
adding a kind is that module plus one line here. The modules import libcst, so nothing
here imports them until a kind is used: the summary of a run that made no plan fix
never loads them.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from autosig.source.skeleton import Keep

if TYPE_CHECKING:
    from autosig.rewrite.plan_fix import PlanFix


@dataclass(frozen=True)
class KindEntry:
    """One registry line."""

    code: str
    module: str
    class_name: str
    applies: int
    """Pass precedence: a lower one's edits are taken first when two clash (the loser
    waits for the next pass); kinds of equal precedence go site by site. The rules'
    edits come after every kind's; a kind acting on the file's calls runs before all."""
    answers: int
    """Order in which kinds are asked what to say about a plan entry after the passes
    (the first that answers speaks for it)."""


CALL_SITE = "call_site"
GUARDED_TRACE = "guarded_trace"

PLAN_FIXES: tuple[KindEntry, ...] = (
    KindEntry("signature", "autosig.rewrite.signature_fix", "SignatureFix", 1, 2),
    KindEntry(GUARDED_TRACE, "autosig.rewrite.guarded_trace_fix", "GuardedTraceFix", 1, 2),
    KindEntry(
        "reduce_retracing", "autosig.rewrite.reduce_retracing_fix", "ReduceRetracingFix", 1, 3
    ),
    KindEntry(CALL_SITE, "autosig.rewrite.call_site_fix", "CallSiteFix", 0, 4),
    KindEntry("model_build", "autosig.rewrite.model_build_fix", "ModelBuildFix", 2, 0),
    KindEntry("optimizer_build", "autosig.rewrite.optimizer_build_fix", "OptimizerBuildFix", 2, 1),
)
"""Every kind, in the order the summary names what they did."""


@functools.cache
def _load(entry: KindEntry) -> PlanFix:
    kind = getattr(importlib.import_module(entry.module), entry.class_name)()
    if kind.code != entry.code:
        raise AssertionError(f"{entry.module}.{entry.class_name}.code is not {entry.code!r}")
    return kind


def kinds() -> list[PlanFix]:
    """Every kind, in the summary's order."""
    return [_load(entry) for entry in PLAN_FIXES]


def by_precedence() -> list[list[PlanFix]]:
    """The kinds grouped by ``applies``, lowest first."""
    groups: dict[int, list[PlanFix]] = {}
    for entry in sorted(PLAN_FIXES, key=lambda e: e.applies):
        groups.setdefault(entry.applies, []).append(_load(entry))
    return list(groups.values())


def answering() -> list[PlanFix]:
    """The kinds in the order they speak for a plan entry."""
    return [_load(entry) for entry in sorted(PLAN_FIXES, key=lambda e: e.answers)]


def kind_of(code: str) -> PlanFix | None:
    """The kind whose changes carry ``code`` (None: a rule's code)."""
    for entry in PLAN_FIXES:
        if entry.code == code:
            return _load(entry)
    return None


def skeleton_keeps() -> frozenset[Keep]:
    """What every kind reads beyond the traced code."""
    out: frozenset[Keep] = frozenset()
    for kind in kinds():
        out |= kind.skeleton_keeps
    return out
