"""``autosig fix --verify``: write only rewrites that verified; fall back for the others.

Interface for the fix command (helper E)::

    from autosig.verify.gate import gate_fixes

    result = gate_fixes(
        profile, root,                      # Profile, Path (profile.project_root)
        unsafe_fixes=..., infer_options=..., rules_for=lambda rel: rules,
        cmd=None,                           # None: the profile's recorded command, run in root
        plan=None,                          # the plan fix computed (default: inferred)
        sources=None,                       # or {relative path: current text}
        settings=None,                      # VerifySettings; default graph mode only
    )
    for rel, text in result.texts.items():  # relative to root: safe to write
        ...
    result.withheld                         # rel -> why that file is not written
    result.messages()                       # one line per fallback / withheld file
    result.report                           # the last VerifyReport (render with
                                            # autosig.report.verdicts.render)

How it decides, change by change: the rewrite is computed in memory and verified
(original vs rewritten run of the workload). Each function that is not equivalent,
could not run or was not compared, in rounds: (1) if it got a signature and some
parameters were Python values in the profile (including those ``fix --verify`` tried
as tensors where the analysis could not decide, ``InferOptions.try_uncertain``), those
parameters are kept as Python values and only that function is re-planned
(``InferOptions.force_python`` with ``infer_function``: it usually ends at
``reduce_retracing``); (2) otherwise every change to that function (its plan entry and
the static fixes inside it) is withheld: the function is left exactly as it was, and no
other rule brings a change back to it (``untouched``); the other changes of the same
file are still written; (3) only a function that fails without any change of its own (a
failure caused elsewhere) withholds its whole file. When some failing functions raised
in the rewritten run, only they fall back in that round: the others may only have lost
the calls after the crash. After each change the rewritten side is verified again (the
original runs are reused). A rewrite that makes the program fail is never returned. Graph
mode only by default: that is how the program runs as written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.infer.plan import Plan
from autosig.infer.planner import infer_function, infer_plan
from autosig.profile.format import Profile
from autosig.profile.value_tree import leaves
from autosig.verify.candidate import (
    Candidate,
    build_candidate,
    default_infer_options,
    profiled_sources,
)
from autosig.verify.runner import VerifyReport, VerifySettings, verify_candidate
from autosig.verify.runs import RunResult

MAX_ROUNDS = 4


@dataclass
class Fallback:
    path: str
    qualname: str
    action: str
    """'kept Python values: n, k' | 'dropped from the plan' | 'file withheld'"""
    reason: str


@dataclass
class GateResult:
    texts: dict[str, str] = field(default_factory=dict)
    """Relative path -> verified rewritten text: safe to write."""
    withheld: dict[str, str] = field(default_factory=dict)
    """Relative path -> why the whole file is not written."""
    fallbacks: list[Fallback] = field(default_factory=list)
    untouched: dict[tuple[str, str], str] = field(default_factory=dict)
    """(path, qualname) -> the changes withheld from that function and why."""
    not_run: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(path, qualname) -> the changes to a function the workload never called: nothing
    verified them, so they are withheld too (``qualname`` "" for changes outside any
    tf.function)."""
    report: VerifyReport | None = None
    candidate: Candidate | None = None
    rounds: int = 0

    def withheld_sites(self) -> frozenset[tuple[str, str]]:
        """Every function left as it was: its changes failed or were never verified."""
        return frozenset(self.untouched) | frozenset(self.not_run)

    def verified(self) -> list[str]:
        """One line per verified change that is kept."""
        report, candidate = self.report, self.candidate
        if report is None or candidate is None:
            return []
        lines = []
        for verdict in report.functions:
            if verdict.path in self.withheld or verdict.path not in self.texts:
                continue
            if not verdict.changes or verdict.failed:
                continue
            entry = candidate.plan.for_site(verdict.path, verdict.qualname, verdict.line)
            tried = entry.tried if entry is not None else ()
            lines.append(
                f"verified: {verdict.path}:{verdict.line}: {verdict.qualname} "
                f"[{', '.join(verdict.changes)}]: {verdict.status}"
                + (
                    f"; {', '.join(f'`{t}`' for t in tried)} tried as a tensor where the "
                    "analysis could not decide, and kept: verification passed"
                    if tried
                    else ""
                )
            )
        return lines

    def messages(self) -> list[str]:
        """What verified, then, separately, what was withheld and why, and what the
        workload never ran."""
        lines = self.verified()
        lines += [
            f"fallback: {f.path}: {f.qualname}: verification failed ({f.reason}); {f.action}"
            for f in self.fallbacks
            if not f.action.startswith("withheld")
        ]
        lines += [
            f"withheld: {path}: {qualname}: {why}"
            for (path, qualname), why in sorted(self.untouched.items())
        ]
        lines += [
            f"withheld: {path}: whole file not written: {why}"
            for path, why in sorted(self.withheld.items())
        ]
        lines += [
            f"not run: {path}: {qualname or '(outside any tf.function)'} "
            f"[{', '.join(changes)}]: the workload never called it, so nothing verified "
            "the change; withheld"
            for (path, qualname), changes in sorted(self.not_run.items())
        ]
        return lines

    def counts(self) -> tuple[int, int, int]:
        """(functions verified, functions or files withheld, functions not run)."""
        report = self.report
        verified = (
            0
            if report is None
            else sum(
                1
                for v in report.functions
                if v.changes
                and not v.failed
                and v.path in self.texts
                and (v.path, v.qualname) not in self.untouched
            )
        )
        return verified, len(self.untouched) + len(self.withheld), len(self.not_run)


def _python_params(profile: Profile, path: str, qualname: str) -> list[str]:
    """Parameters recorded as Python values (int, float, str, ...) in any call."""
    names: list[str] = []
    for record in profile.find(path, qualname):
        for signature in record.signatures:
            for name, value in signature.args.items():
                if _has_python(value) and name not in names:
                    names.append(name)
    return names


def _has_python(value: Any) -> bool:
    return any(
        isinstance(leaf, dict) and leaf.get("kind") == "python" and leaf.get("type") != "NoneType"
        for _, leaf in leaves(value)
    )


def gate_fixes(
    profile: Profile,
    root: Path,
    *,
    unsafe_fixes: bool = False,
    infer_options: Any = None,
    rules_for: Callable[[str], Sequence[Any]] | None = None,
    plan: Plan | None = None,
    cmd: Sequence[str] | None = None,
    sources: Mapping[str, str] | None = None,
    settings: VerifySettings | None = None,
) -> GateResult:
    """Verify the rewrite and return only what verified (see the module docstring).

    ``plan``: the plan the fix command computed (default: inferred here). Fallbacks
    re-plan only the failing function.
    """
    root = root.resolve()
    run_in_root = cmd is None
    command = list(cmd) if cmd is not None else list(profile.command)
    if not command:
        raise AutosigError(
            "--verify needs the workload command, and the profile records none; "
            "re-run 'autosig profile -- CMD'"
        )
    settings = settings or VerifySettings(xla=False)
    options = infer_options or default_infer_options(root)
    if sources is None:
        sources, _ = profiled_sources(profile, root)
    current = Plan(list((plan or infer_plan(profile, sources, options)).functions))
    force: set[tuple[str, str, str]] = set(getattr(options, "force_python", frozenset()))
    result = GateResult()
    untouched: set[tuple[str, str]] = set()
    baseline: dict[str, RunResult] = {}
    with contextlib.chdir(root) if run_in_root else contextlib.nullcontext():
        for round_ in range(1, MAX_ROUNDS + 1):
            candidate = build_candidate(
                profile,
                root,
                unsafe_fixes=unsafe_fixes,
                rules_for=rules_for,
                plan=current,
                sources=sources,
                untouched=untouched,
            )
            for rel in result.withheld:
                candidate.texts.pop(rel, None)
            result.candidate = candidate
            result.rounds = round_
            report, runs = verify_candidate(command, candidate, settings, baseline=baseline)
            result.report = report
            baseline = {k: v for k, v in runs.items() if k.startswith("original-")}
            failed = [v for v in report.functions if v.failed]
            if not failed:
                break
            raised = [v for v in failed if _raised_itself(v)]
            if raised and round_ < MAX_ROUNDS:
                failed = raised  # the others may only have lost the calls after the crash
            for verdict in failed:
                action = _fall_back(
                    verdict, profile, current, force, options, sources, result, untouched
                )
                result.fallbacks.append(
                    Fallback(verdict.path, verdict.qualname, action, _reason(verdict))
                )
        else:
            assert result.report is not None
            for verdict in result.report.functions:
                if verdict.failed:
                    result.withheld.setdefault(
                        verdict.path, f"{verdict.qualname} did not verify after fallbacks"
                    )
    assert result.candidate is not None
    _withhold_not_run(result, untouched, profile, root, unsafe_fixes, rules_for, current, sources)
    result.texts = {
        rel: text for rel, text in result.candidate.texts.items() if rel not in result.withheld
    }
    return result


def not_run_changes(candidate: Candidate, report: VerifyReport) -> dict[tuple[str, str], list[str]]:
    """Changes to functions with no verdict: the workload never called them.

    Keyed (path, qualname) of the function a change belongs to (a call site's: the
    function it calls); changes outside any tf.function have the qualname "".
    """
    judged = {(v.path, v.qualname) for v in report.functions}
    out: dict[tuple[str, str], list[str]] = {}
    for rel, fixes in candidate.applied.items():
        for fix in fixes:
            site = (str(getattr(fix, "target", None) or rel), str(fix.qualname or ""))
            if site in judged:
                continue
            code = str(fix.code)
            changes = out.setdefault(site, [])
            if code not in changes:
                changes.append(code)
    return out


def _withhold_not_run(
    result: GateResult,
    untouched: set[tuple[str, str]],
    profile: Profile,
    root: Path,
    unsafe_fixes: bool,
    rules_for: Callable[[str], Sequence[Any]] | None,
    plan: Plan,
    sources: Mapping[str, str],
) -> None:
    """Leave untouched the functions whose changes no run verified, and rebuild the
    rewrite without them (they never ran, so what did run is what was verified)."""
    if result.report is None or result.candidate is None:
        return
    result.not_run = not_run_changes(result.candidate, result.report)
    if not result.not_run:
        return
    keep = untouched | {(p, q or None) for p, q in result.not_run}  # type: ignore[misc]
    candidate = build_candidate(
        profile,
        root,
        unsafe_fixes=unsafe_fixes,
        rules_for=rules_for,
        plan=Plan([f for f in plan.functions if (f.path, f.qualname) not in result.not_run]),
        sources=sources,
        untouched=keep,
    )
    for rel in result.withheld:
        candidate.texts.pop(rel, None)
    result.candidate = candidate


def _fall_back(
    verdict: Any,
    profile: Profile,
    plan: Plan,
    force: set[tuple[str, str, str]],
    options: Any,
    sources: Mapping[str, str],
    result: GateResult,
    untouched: set[tuple[str, str]],
) -> str:
    """Change the plan of one failing function (in place); say what was done."""
    entry = plan.for_site(verdict.path, verdict.qualname, verdict.line)
    params = [
        p
        for p in _python_params(profile, verdict.path, verdict.qualname)
        if (verdict.path, verdict.qualname, p) not in force
    ]
    records = profile.find(verdict.path, verdict.qualname)
    if entry is not None and entry.action == "signature" and params and records:
        force.update((verdict.path, verdict.qualname, p) for p in params)
        replanned = infer_function(
            records[0],
            sources.get(verdict.path),
            replace(options, force_python=frozenset(force)),
        )
        plan.functions[plan.functions.index(entry)] = replanned
        tried = (
            f" ({', '.join(entry.tried)} tried as a tensor where the analysis could not decide)"
            if entry.tried
            else ""
        )
        return (
            f"kept {', '.join(params)} as Python value{'s' if len(params) > 1 else ''}"
            f"{tried}: now {replanned.action}"
        )
    site = (verdict.path, verdict.qualname)
    if site not in untouched and (
        verdict.changes or (entry is not None and entry.action != "none")
    ):
        untouched.add(site)
        if entry is not None:
            plan.functions.remove(entry)
        changes = ", ".join(verdict.changes) or (entry.action if entry is not None else "")
        result.untouched[site] = f"[{changes}] not written: {_reason(verdict)}"
        return f"withheld its changes ({changes}): the function is left as it was"
    result.withheld[verdict.path] = (
        f"{verdict.qualname} is {verdict.status} without any change of its own "
        f"(caused by another change in the file?): {_reason(verdict)}"
    )
    return "file withheld"


def _raised_itself(verdict: Any) -> bool:
    """The rewritten function raised where the original did not: a crash it caused.

    Other functions of a program that died then differ only in the calls they lost;
    they are verified again after this one falls back.
    """
    return any(
        m.effects is not None and not m.effects.equal and m.effects.kind == "exception"
        for m in verdict.modes
        if m.status in ("not equivalent", "could not run")
    )


def _reason(verdict: Any) -> str:
    failing = [m for m in verdict.modes if m.status in ("not equivalent", "could not run")]
    if not failing:
        return verdict.status
    first = failing[0]
    return f"{first.status}: {first.detail}" if first.detail else first.status
