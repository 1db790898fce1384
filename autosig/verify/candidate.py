"""The rewrite under test, computed in memory from the profile and the current source.

This is exactly what ``autosig fix --profile`` would write (plan from inference,
static safe fixes, unsafe ones only when asked), but kept as text: the verifier serves
it to the workload through the import hook and never writes it. Pure: no TensorFlow,
no user code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.infer.observations import InferOptions
from autosig.infer.paired_trace import settle_pairs
from autosig.infer.plan import FunctionPlan, Plan
from autosig.infer.planning import plan_fixes
from autosig.profile.format import Profile
from autosig.rewrite.call_sites import unpassed_tensors
from autosig.rewrite.engine import fix_text
from autosig.rules.registry import select_rules
from autosig.source.config import load_config
from autosig.source.files import read_source

RANDOM_STREAM_CODES = frozenset({"AS102"})
"""Unsafe fixes that change a random stream on purpose: outputs are 'different by design'."""


@dataclass
class Candidate:
    """Original and rewritten text of every profiled file the rewrite changes."""

    root: Path
    originals: dict[str, str] = field(default_factory=dict)
    """Profile path (relative posix) -> current text, for every profiled file read."""
    texts: dict[str, str] = field(default_factory=dict)
    """Profile path -> rewritten text, changed files only."""
    plan: Plan = field(default_factory=Plan)
    applied: dict[str, list[Any]] = field(default_factory=dict)
    """Profile path -> the fix engine's AppliedFix records."""
    left: dict[str, list[str]] = field(default_factory=dict)
    errors: list[AutosigError] = field(default_factory=list)
    profile_digest: str = ""
    """Identifies the profile the rewrite came from: a stored original run made for
    another profile is not reused (``runs.stored_mismatch``)."""
    profiled_exit_code: int = 0
    """How the profiled run exited: a stored original run that exited otherwise (an
    interrupted or failed run) is not reused."""
    served_originals: frozenset[str] = frozenset()
    """Files whose original text is not on disk (the rewrite was written already,
    ``verify --before``): the original run is served ``originals[rel]`` for them."""

    def absolute(self, rel: str) -> Path:
        p = Path(rel)
        return p if p.is_absolute() else self.root / p

    def sources_by_absolute_path(self) -> dict[str, str]:
        """What the import hook serves: absolute file path -> rewritten text."""
        return {str(self.absolute(rel).resolve()): text for rel, text in self.texts.items()}

    def original_sources_by_absolute_path(self) -> dict[str, str]:
        """What the import hook serves the original run (``served_originals``)."""
        return {
            str(self.absolute(rel).resolve()): self.originals[rel] for rel in self.served_originals
        }

    def changed_files(self) -> list[str]:
        return sorted(self.texts)

    def compared_paths(self) -> set[str]:
        """Files whose functions are compared: the changed ones, and the files of
        functions whose callers were rewritten to pass tensors (a call-site fix)."""
        called = {
            str(fix.target)
            for fixes in self.applied.values()
            for fix in fixes
            if getattr(fix, "code", None) == "call_site" and getattr(fix, "target", None)
        }
        return set(self.texts) | called

    def planned(self) -> list[FunctionPlan]:
        """Functions the plan changes (signature or reduce_retracing) in changed files."""
        return [f for f in self.plan.functions if f.action != "none" and f.path in self.texts]

    def fixes_for(self, path: str, qualname: str) -> list[Any]:
        """The fixes of function ``qualname`` of ``path``: in its file, and at its call
        sites anywhere (``call_site`` fixes name the function's file as their target)."""
        out = []
        for where, fixes in self.applied.items():
            for fix in fixes:
                if getattr(fix, "qualname", None) != qualname:
                    continue
                target = getattr(fix, "target", None)
                if (target or where) == path:
                    out.append(fix)
        return out

    def by_design(self, path: str, qualname: str) -> str | None:
        """Why a function's outputs may differ on purpose (an applied RNG fix), else None."""
        codes = sorted(
            {
                str(getattr(a, "code", ""))
                for a in self.fixes_for(path, qualname)
                if getattr(a, "code", None) in RANDOM_STREAM_CODES
            }
        )
        if not codes:
            return None
        return (
            f"{', '.join(codes)} replaced Python/NumPy randomness with tf.random (--unsafe-fixes)"
        )


def profile_digest(profile: Profile) -> str:
    """A short SHA-256 of the profile's content."""
    import hashlib

    return hashlib.sha256(profile.dumps().encode("utf-8")).hexdigest()[:20]


def profiled_sources(
    profile: Profile, root: Path, only: Iterable[str] | None = None
) -> tuple[dict[str, str], list[AutosigError]]:
    """Current text of every editable profiled file under ``root`` (relative path -> text)."""
    wanted = None if only is None else set(only)
    texts: dict[str, str] = {}
    errors: list[AutosigError] = []
    for record in profile.functions:
        rel = record.path
        if not record.editable or rel is None or rel in texts or Path(rel).is_absolute():
            continue
        if wanted is not None and rel not in wanted:
            continue
        try:
            texts[rel] = read_source(root / rel).text
        except AutosigError as exc:
            errors.append(exc)
    return texts, errors


def default_rules_for(root: Path) -> Callable[[str], Sequence[Any]]:
    """The static rules the project's config selects for each file."""
    config = load_config([root])
    cache: dict[tuple[Any, Any], Sequence[Any]] = {}

    def rules_for(rel: str) -> Sequence[Any]:
        select, ignore = config.rules_for(root / rel)
        key = (select, ignore)
        if key not in cache:
            cache[key] = select_rules(select, ignore)
        return cache[key]

    return rules_for


def default_infer_options(root: Path, force_python: Iterable[tuple[str, str, str]] = ()) -> Any:
    return InferOptions.from_config(load_config([root]), root, force_python=force_python)


def build_candidate(
    profile: Profile,
    root: Path,
    *,
    unsafe_fixes: bool = False,
    infer_options: Any = None,
    rules_for: Callable[[str], Sequence[Any]] | None = None,
    plan: Plan | None = None,
    drop: Iterable[tuple[str, str]] = (),
    sources: Mapping[str, str] | None = None,
    untouched: Iterable[tuple[str, str]] = (),
) -> Candidate:
    """Plan (unless given) and rewrite every profiled file in memory.

    ``drop`` removes functions (path, qualname) from the plan: the verifier's last
    fallback. ``sources`` replaces reading the files (relative path -> text).
    ``untouched`` (path, qualname): functions left exactly as they are, static fixes
    included (a change that did not verify never comes back through another rule).
    """
    root = root.resolve()
    if sources is None:
        texts, errors = profiled_sources(profile, root)
    else:
        texts, errors = dict(sources), []
    if plan is None:
        # the plan fix makes: `# autosig: ignore` means the same as in check, fix and explain
        plan = plan_fixes(profile, texts, infer_options or default_infer_options(root))
        # only these files are rewritten: a guarded trace paired with call sites elsewhere
        # would be one trace more
        plan = settle_pairs(plan, texts, lambda entry: unpassed_tensors(entry, texts))
    dropped = set(drop)
    if dropped:
        plan = Plan([f for f in plan.functions if (f.path, f.qualname) not in dropped])
    rules_for = rules_for or default_rules_for(root)
    candidate = Candidate(
        root=root,
        originals=texts,
        plan=plan,
        errors=errors,
        profile_digest=profile_digest(profile),
        profiled_exit_code=profile.exit_code or 0,
    )
    keep = set(untouched)
    if keep:
        plan = Plan([f for f in plan.functions if (f.path, f.qualname) not in keep])
        candidate.plan = plan
    for rel, text in texts.items():
        try:
            result = fix_text(
                text,
                rel,
                plan=plan,
                rules=rules_for(rel),
                unsafe_fixes=unsafe_fixes,
                untouched=frozenset(q for p, q in keep if p == rel),
            )
        except AutosigError as exc:
            candidate.errors.append(exc)
            continue
        if result.changed:
            candidate.texts[rel] = result.new_text
            candidate.applied[rel] = list(result.applied)
        if result.left:
            candidate.left[rel] = list(result.left)
    return candidate
