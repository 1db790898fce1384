"""What ``autosig fix --profile`` will do with each retraced function, for explain's advice.

For every profiled function whose source file is found (under the profile's candidate
roots), the plan is made by the same function fix plans with
(``infer.planning.plan_fixes``), on the current source and with the config governing
it, and the fix engine runs on it dry (``rewrite.engine.fix_text``, nothing written),
so explain tells fix's own outcome instead of predicting it. Static: no TensorFlow, no
user code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from autosig.errors import AutosigError
from autosig.infer.observations import InferOptions
from autosig.infer.plan import FunctionPlan, Plan
from autosig.infer.planning import (
    PROFILE_CODES_OFF,
    STATIC_ONLY,
    as_fix_applies,
    plan_fixes,
    selected_profile_codes,
)
from autosig.profile.format import FunctionRecord, Profile, candidate_roots
from autosig.rewrite.engine import fix_text
from autosig.rules.registry import select_rules
from autosig.source.config import load_config
from autosig.source.files import read_source

__all__ = ["PROFILE_CODES_OFF", "STATIC_ONLY", "fix_plans"]

Key = tuple[str | None, str, int]
"""A profiled function: ``FunctionRecord.key``."""


def fix_plans(
    profile: Profile, profile_path: Path | str, warn: Callable[[str], None] | None = None
) -> dict[Key, FunctionPlan]:
    """What ``autosig fix --profile`` will do with each retraced function found here.

    Keyed by ``FunctionRecord.key``. The profile's relative paths are tried under
    ``candidate_roots`` and the profile's own folder, as fix does; each file found is
    planned by ``autosig.infer`` with the settings of the config governing it. Where the
    plan leaves a function alone but fix's static AS107 rule would still add
    ``reduce_retracing=True`` (a stale profile, profile rules not selected ...), the
    plan returned says so: it is the fix's whole outcome. Library functions and files
    not found (moved, deleted) get no plan. ``warn`` hears about a bad config.
    """
    holder = Path(profile_path).resolve().parent
    roots = list(dict.fromkeys([*candidate_roots(profile, profile_path), holder]))
    by_file: dict[str, list[FunctionRecord]] = {}
    for record in profile.functions:
        if record.editable and record.path and record.traces > 1:
            by_file.setdefault(record.path, []).append(record)
    plans: dict[Key, FunctionPlan] = {}
    for rel, records in by_file.items():
        found = _find_source(rel, roots)
        if found is None:
            continue
        path, root, text = found
        try:
            settings = _FixSettings.of(path, root)
            plan = plan_fixes(
                Profile(functions=records, tensorflow_version=profile.tensorflow_version),
                {rel: text},
                settings.infer_options,
            )
        except AutosigError as exc:
            if warn is not None:
                warn(f"{exc.path or path}: {exc.message}; the fix advice for {rel} is generic")
            continue
        static = _static_reduce_retracing(text, rel, plan, settings)
        for record in records:
            entry = plan.for_site(rel, record.qualname, record.line)
            if entry is None:
                continue
            plans[record.key] = as_fix_applies(
                entry,
                profile_codes=settings.profile_codes,
                static_reduce=(entry.qualname, entry.line) in static,
            )
    return plans


def _find_source(rel: str, roots: Sequence[Path]) -> tuple[Path, Path, str] | None:
    """(file, root it was found under, text) of a profile path, or None."""
    for root in roots:
        candidate = Path(rel) if Path(rel).is_absolute() else root / rel
        if candidate.is_file():
            try:
                return candidate, root, read_source(candidate).text
            except AutosigError:
                return None
    return None


@dataclass(frozen=True)
class _FixSettings:
    """What ``autosig fix PATH --profile`` reads from the config governing PATH."""

    infer_options: InferOptions
    profile_codes: bool
    """Some AS2xx code is selected: fix applies the profile's plan at all."""
    static_select: tuple[str, ...] | None
    static_ignore: tuple[str, ...]
    unsafe_fixes: bool = False

    @classmethod
    def of(cls, path: Path, root: Path) -> _FixSettings:
        config = load_config([path])
        select, ignore = config.rules_for(path)
        return cls(
            infer_options=InferOptions.from_config(config, root),
            profile_codes=bool(selected_profile_codes(config.select, config.ignore)),
            static_select=select,
            static_ignore=tuple(ignore),
            unsafe_fixes=config.unsafe_fixes,
        )


def _static_reduce_retracing(
    text: str, rel: str, plan: Plan, settings: _FixSettings
) -> set[tuple[str, int]]:
    """(qualname, line) of the functions the fix engine, run dry as ``fix --profile``
    runs it here, gives reduce_retracing=True by the static rule AS107."""
    try:
        result = fix_text(
            text,
            rel,
            plan=plan if settings.profile_codes else None,
            rules=select_rules(settings.static_select, settings.static_ignore),
            unsafe_fixes=settings.unsafe_fixes,
        )
    except AutosigError:
        return set()
    return {
        (fix.qualname, fix.line)
        for fix in result.applied
        if fix.code == "AS107" and fix.qualname is not None
    }
