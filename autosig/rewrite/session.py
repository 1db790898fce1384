"""One ``autosig fix`` run: what it resolves once and every stage shares.

The files reached from the PATH arguments, the profile, the project root its paths
are relative to, the inference options and the plan are resolved here once; planning,
fixing (``rewrite.batch``), the ``--verify`` gate and the report read them from the
session instead of working them out again. The command (``cli/fix.py``) reads the
options, drives the session and prints. Warnings go to the ``warn`` it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autosig.errors import AutosigError
from autosig.infer.plan import Plan
from autosig.profile.format import candidate_roots, load_profile
from autosig.rewrite.batch import FixTask, fix_all, plan_for
from autosig.rewrite.call_site_report import call_site_paths, callee_sources
from autosig.source.config import Config
from autosig.source.files import SourceFile

if TYPE_CHECKING:
    from autosig.rewrite.engine import FixResult


@dataclass
class FixFile:
    """One file reached from the PATH arguments, read and ready to fix."""

    source: SourceFile
    display: str
    """Path as shown and written in diffs: relative to the current directory."""
    profile_rel: str
    """Path as the profile names it: relative to the profile's project root."""
    select: tuple[str, ...] | None
    ignore: tuple[str, ...]


def profile_relative(path: Path, root: Path) -> str:
    """How a profile names ``path``: relative to its project root, absolute outside it."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


@dataclass
class FixSession:
    """What one run resolved: its config, unsafe choice and shape policy; with a
    profile, the profile, its root, the inference options and the plan."""

    config: Config
    unsafe: bool
    relax: str | None = None
    warn: Callable[[str], None] = print
    profile_path: Path | None = None
    profile: Any = None
    root: Path = field(default_factory=Path.cwd)
    options: Any = None
    """``InferOptions`` (with a profile)."""
    plan: Plan | None = None

    def plan_profile(
        self,
        profile_path: Path,
        files: list[FixFile],
        select: tuple[str, ...] | None,
        ignore: tuple[str, ...] | None,
        try_uncertain: bool = False,
        others: Sequence[FixFile] = (),
    ) -> list[FixFile]:
        """Load the profile and plan every profiled function in the files being fixed;
        returns the files among ``others`` that hold a planned call site.

        ``try_uncertain`` (``--verify --unsafe-fixes``): tensorize Python values the
        analysis cannot decide, as unsafe fixes; verification keeps or drops them
        (``autosig.infer.python_params``, undecided). ``others``: the files being fixed
        that hold no tf.function. A function outside the files being fixed whose
        recorded calls are in them is planned too (its file read, never written), for
        those calls only.
        """
        # inference imports libcst: only a run with a profile needs it
        from autosig.infer.planning import keep_codes, plan_fixes, selected_profile_codes

        config = self.config
        profile = load_profile(profile_path)
        note = profile.partial_note()
        if note is not None:
            self.warn(f"autosig: warning: {profile_path}: {note}")
        root = self._profile_root(profile, profile_path, [*files, *others])
        for file in [*files, *others]:
            file.profile_rel = profile_relative(file.source.path, root)
        sources = {file.profile_rel: file.source.text for file in files}
        fixed = {file.profile_rel for file in [*files, *others]}
        callees = callee_sources(profile, root, fixed, sources)
        everything = {**callees, **sources}
        options = self._infer_options(root, try_uncertain)
        plan = plan_fixes(profile, everything, options)
        plan = Plan(
            [e for e in plan.functions if e.path not in callees or e.call_sites is not None]
        )
        codes = selected_profile_codes(
            select if select is not None else config.select,
            tuple(config.ignore) + tuple(ignore or ()),
        )
        self.profile_path, self.profile, self.root = profile_path, profile, root
        self.options, self.plan = options, keep_codes(plan, codes)
        wanted = call_site_paths(self.plan)
        return [file for file in others if file.profile_rel in wanted]

    def fix(
        self, files: Sequence[FixFile], jobs: int | None, progress: bool
    ) -> list[FixResult | AutosigError]:
        """Fix every file (``rewrite.batch``: in worker processes when there are enough)."""
        tasks = [
            FixTask(
                display=file.display,
                text=file.source.text,
                profile_rel=file.profile_rel or file.display,
                select=file.select,
                ignore=file.ignore,
                unsafe_fixes=self.unsafe,
                plan=plan_for(self.plan, file.profile_rel),
            )
            for file in files
        ]
        return fix_all(tasks, jobs, progress=progress)

    def library_notes(self) -> list[str]:
        """What to change in the calling code for library functions that retraced.

        Their source (Keras' train_function, ...) is not the user's to rewrite, so the
        recommendation inference made for them is printed instead of a diff.
        """
        profile, plan = self.profile, self.plan
        if profile is None or plan is None:
            return []
        lines: list[str] = []
        for record in profile.functions:
            if record.editable or record.traces <= 1:
                continue
            entry = plan.for_site(record.path or "", record.qualname, record.line)
            reasons = list(entry.reasons) if entry is not None else []
            lines.append(
                f"{record.qualname} (library code, not rewritten): "
                f"{record.traces} traces for {record.calls} calls"
            )
            where = record.path or ""
            short = where.split("site-packages/")[-1].split("dist-packages/")[-1]
            lines.extend(
                f"  - {reason.replace(where, short) if where else reason}"
                for reason in dict.fromkeys(reasons)
            )
        return lines

    def _profile_root(self, profile: Any, profile_path: Path, files: list[FixFile]) -> Path:
        """The directory the profile's relative paths are relative to, for these files.

        ``profile.format.candidate_roots`` first (the folder holding ``.autosig/``, the
        recorded root, the current directory), then the profile's own folder and the
        config root. When no candidate puts any profiled function in the files being
        fixed, say so instead of silently making only static fixes.
        """
        extra = [profile_path.resolve().parent, self.config.root]
        candidates = list(dict.fromkeys([*candidate_roots(profile, profile_path), *extra]))
        profiled = {f.path for f in profile.functions if f.editable and f.path}
        profiled |= {  # files that only call a profiled function (call-site fixes)
            s.path for f in profile.functions if f.editable for s in f.call_sites if s.path
        }
        for candidate in candidates:
            if any(profile_relative(file.source.path, candidate) in profiled for file in files):
                return candidate
        if profiled and files:
            self.warn(
                f"autosig: warning: {profile_path}: none of its {len(profiled)} profiled "
                f"function files are among the files being fixed (recorded in "
                f"{profile.project_root or 'an unknown directory'}); only static fixes are made"
            )
        return candidates[0]

    def _infer_options(self, root: Path, try_uncertain: bool) -> Any:
        """Shape policy: a per-function/parameter config override, else --relax, else config."""
        # libcst: only a run with a profile needs it
        from autosig.infer.observations import InferOptions

        options = InferOptions.from_config(self.config, root, self.relax)
        return replace(options, try_uncertain=try_uncertain)
