"""The fix plan: what inference decided for each profiled function, with its evidence.

Produced by ``autosig.infer`` from a profile, consumed by ``autosig.rewrite`` and the
report. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from autosig.model import Finding, FixSafety
from autosig.specs import SpecNode

Action = Literal["signature", "reduce_retracing", "none"]


@dataclass(frozen=True)
class ParamPlan:
    """The planned spec of one parameter and why."""

    name: str
    spec: SpecNode | None
    """None: the parameter stays out of the signature (trailing default never varied)."""
    evidence: str
    """e.g. '44 calls, 7 distinct shapes: (32, 17), (32, 23), ...; dimension 1 varies'"""


@dataclass(frozen=True)
class FunctionPlan:
    """What to do with one function: a signature, reduce_retracing, or nothing."""

    path: str
    qualname: str
    line: int
    action: Action
    params: tuple[ParamPlan, ...] = ()
    reasons: tuple[str, ...] = ()
    """Why this action (and why not a signature, when reduce_retracing)."""
    findings: tuple[Finding, ...] = ()
    """AS201-AS204 findings derived from the profile."""
    calls: int = 0
    traces: int = 0
    stale: bool = False
    """The function's source changed since profiling: nothing is planned for it."""
    safety: FixSafety = "safe"
    """``unsafe``: the fix may change behaviour (see ``warnings``); needs --unsafe-fixes."""
    warnings: tuple[str, ...] = ()
    """Why the fix is unsafe: dimensions pinned without proof, random streams that change."""

    @property
    def signature_specs(self) -> list[SpecNode]:
        return [p.spec for p in self.params if p.spec is not None]


@dataclass
class Plan:
    functions: list[FunctionPlan] = field(default_factory=list)

    def for_site(self, path: str, qualname: str, line: int) -> FunctionPlan | None:
        matches = [f for f in self.functions if f.path == path and f.qualname == qualname]
        exact = [f for f in matches if f.line == line]
        if exact:
            return exact[0]
        return matches[0] if len(matches) == 1 else None
