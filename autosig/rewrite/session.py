"""One ``autosig fix`` run: what it resolves once and every stage shares, and the run.

The files reached from the PATH arguments, the profile, the project root its paths
are relative to, the inference options and the plan are resolved here once; planning,
fixing (``rewrite.batch``), the ``--verify`` gate and the report read them from the
session instead of working them out again. ``FixSession.run`` collects the files,
plans, fixes, gates (``--verify``: the gate the command hands it), writes the files or
the patch and places the report's lines; it returns a ``FixOutcome`` that the command
(``cli/fix.py``) prints. ``FixSession.open`` resolves the config, the selection and the
unsafe choice from the command's options; ``FixSession.fix_text`` is ``fix -`` (stdin).
Warnings go to the ``warn`` it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autosig.errors import AutosigError
from autosig.infer.plan import Plan
from autosig.profile.format import candidate_roots, load_profile
from autosig.rewrite.batch import FixTask, fix_all, fix_task, plan_for
from autosig.rewrite.call_site_report import call_site_paths, callee_sources, mark_unhelped
from autosig.rewrite.patch import display_path, unified_diff, write_patch
from autosig.rewrite.report_lines import on_disk, place
from autosig.rewrite.summary import patch_header
from autosig.rules.checker import require_runnable_rules
from autosig.source.collect import CollectedFile, collect, stdin_rules
from autosig.source.config import Config, load_config
from autosig.source.files import (
    SizeNotice,
    SourceFile,
    decode_source,
    read_source,
    write_source,
)
from autosig.source.sites import Finding

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


@dataclass(frozen=True)
class FixRequest:
    """What the command asks of one run (its options, read)."""

    paths: Sequence[Path]
    profile_path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    max_file_size: int | None = None
    """None: the config's; 0: no limit."""
    jobs: int | None = None
    """None: the config's."""
    quiet: bool = False
    verify: bool = False
    dry_run: bool = False
    """``--diff`` or ``--patch-out``: write no source file."""
    patch_out: Path | None = None


Gate = Callable[["FixSession", list[tuple[FixFile, "FixResult"]], list[AutosigError]], Any]
"""``fix --verify``'s gate (``verify.fix_gate.gate``): keeps in the results what
verified and returns (verified, withheld, not run)."""


@dataclass
class FixOutcome:
    """What one run did, for the command to print."""

    by_file: list[tuple[FixFile, FixResult]]
    """Each file fixed (and written, unless a dry run) with its result."""
    files: list[FixFile]
    """Every file fixed, the call-site files among them."""
    errors: list[AutosigError]
    diff: str
    seen: int
    """Python files found under the paths."""
    skipped: list[SizeNotice]
    verification: tuple[int, int, int] | None = None
    patch_written: bool = False

    @property
    def results(self) -> list[FixResult]:
        return [result for _, result in self.by_file]

    @property
    def remaining(self) -> list[Finding]:
        """The findings left open, file by file."""
        return [finding for _, result in self.by_file for finding in result.findings]


@dataclass
class TextFix:
    """``fix -``: one source given as bytes (stdin), fixed."""

    source: SourceFile
    result: FixResult | AutosigError
    """The fix, or why the text could not be fixed (an editor then gets its text back)."""
    findings: list[Finding] = field(default_factory=list)
    """The findings left, with lines of the text given (a dry run) or of the fixed text."""


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

    @classmethod
    def open(
        cls,
        paths: Sequence[Path],
        config_file: Path | None,
        *,
        select: tuple[str, ...] | None,
        ignore: tuple[str, ...] | None,
        profile: bool,
        verify: bool,
        unsafe_fixes: bool | None,
        relax: str | None,
        warn: Callable[[str], None],
    ) -> FixSession:
        """The session of one run: the config (``config_file``, else the one found from
        ``paths``), the selection checked to leave a rule to run, the unsafe choice
        (``unsafe_fixes``, else the config's). Raises AutosigError for options that
        cannot run together."""
        config = load_config(paths, config_file)
        if verify and not profile:
            raise AutosigError("--verify needs --profile (it replays the profiled command)")
        require_runnable_rules(select, ignore, config, command="fix", profile=profile)
        unsafe = config.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
        return cls(config, unsafe, relax, warn=warn)

    def run(self, request: FixRequest, gate: Gate | None = None) -> FixOutcome:
        """Collect, plan, fix, gate (``gate``: ``--verify``), write and place the report
        lines of one run. Raises AutosigError for what stops the whole run (a bad
        profile, a failed verification setup); a file's own error is in the outcome."""
        errors: list[AutosigError] = []
        others: list[FixFile] = []  # files without a tf.function: call sites of a plan?
        profiled = request.profile_path is not None
        files, seen, skipped = self.collect(request, errors, others if profiled else None)
        if request.profile_path is not None:
            files.extend(
                self.plan_profile(
                    request.profile_path,
                    files,
                    request.select,
                    request.ignore,
                    # an unsafe fix: evidence, not proof
                    try_uncertain=request.verify and self.unsafe,
                    others=others,
                )
            )
        if seen == 0 and not errors and not request.quiet:  # as check says it
            self.warn("warning: no Python files found under the given paths")
        jobs = request.jobs if request.jobs is not None else self.config.jobs
        by_file: list[tuple[FixFile, FixResult]] = []
        for file, outcome in zip(
            files, self.fix(files, jobs, progress=not request.quiet), strict=True
        ):
            if isinstance(outcome, AutosigError):
                errors.append(outcome)
            else:
                by_file.append((file, outcome))
        verification = gate(self, by_file, errors) if gate is not None else None
        diff = "".join(
            unified_diff(file.source.text, result.new_text, file.display)
            for file, result in by_file
            if result.changed
        )
        patch_written = self._write_patch(request.patch_out, by_file, diff, errors)
        if not request.dry_run:
            by_file = _write(by_file, errors)
        mark_unhelped(self.plan, {file.profile_rel: result for file, result in by_file})
        errors.extend(_stale_errors([result for _, result in by_file], request.profile_path))
        for file, result in by_file:
            # report lines are lines of the files as they now are
            place(result, file.source.text, on_disk=request.dry_run)
        return FixOutcome(by_file, files, errors, diff, seen, skipped, verification, patch_written)

    def collect(
        self,
        request: FixRequest,
        errors: list[AutosigError],
        others: list[FixFile] | None = None,
    ) -> tuple[list[FixFile], int, list[SizeNotice]]:
        """Every Python file under the paths that may hold a tf.function, read (the
        collector ``check`` uses too: ``source.collect``); how many Python files there
        were in all; and those skipped.

        Files over the size limit are left out with a warning, and large ones get a
        note (unless quiet) before the slow work starts. The files the text prefilter
        leaves out go to ``others``: a profile's call-site plan may still rewrite calls
        in them.
        """

        def tell(notice: SizeNotice) -> None:
            if notice.skipped or not request.quiet:
                self.warn(str(notice))

        limit = request.max_file_size
        found = collect(
            request.paths,
            self.config,
            select=request.select,
            ignore=request.ignore,
            exclude=request.exclude,
            max_file_size=self.config.max_file_size if limit is None else limit,
            on_notice=tell,
            keep_others=others is not None,
            name=display_path,
        )
        errors.extend(found.errors)
        files = _read(found.files, errors)
        if others is not None:
            others.extend(_read(found.others, errors))
        return files, found.seen, found.skipped

    def fix_text(
        self,
        data: bytes,
        select: tuple[str, ...] | None,
        ignore: tuple[str, ...] | None,
        *,
        dry_run: bool,
    ) -> TextFix:
        """``fix -``: ``data`` (one file's source, from stdin) fixed with the static
        rules the config and the options select (a profile names files by path, so
        none applies). Raises AutosigError when the bytes do not decode; a text that
        cannot be fixed is the outcome's ``result``."""
        text, encoding, bom = decode_source(data, "-")
        source = SourceFile(Path("-"), text, encoding, bom)
        file_select, file_ignore = stdin_rules(self.config, select, ignore)
        result = fix_task(
            FixTask(
                display="-",
                text=text,
                profile_rel="-",
                select=file_select,
                ignore=file_ignore,
                unsafe_fixes=self.unsafe,
                plan=None,
            )
        )
        if isinstance(result, AutosigError):
            return TextFix(source, result)
        findings = on_disk(result.findings, text, result) if dry_run else result.findings
        return TextFix(source, result, findings)

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
        (``analysis.python_values.NumberUses.undecided``). ``others``: the files being fixed
        that hold no tf.function. A function outside the files being fixed whose
        recorded calls are in them is planned too (its file read, never written), for
        those calls only.
        """
        # inference imports libcst: only a run with a profile needs it
        from autosig.infer.paired_trace import settle_pairs
        from autosig.infer.planning import keep_codes, plan_fixes, selected_profile_codes
        from autosig.rewrite.call_sites import unpassed_tensors

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
        texts = {file.profile_rel: file.source.text for file in [*files, *others]}
        plan = settle_pairs(plan, fixed, lambda entry: unpassed_tensors(entry, texts))
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

    @staticmethod
    def _write_patch(
        patch_out: Path | None,
        by_file: list[tuple[FixFile, FixResult]],
        diff: str,
        errors: list[AutosigError],
    ) -> bool:
        """Write the diff to ``patch_out`` (``--patch-out``); True when it was written."""
        if patch_out is None:
            return False
        try:
            header = patch_header([result for _, result in by_file]) if diff else ""
            write_patch(patch_out, header + diff)
        except AutosigError as exc:
            errors.append(exc)
            return False
        return True

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
        return replace(options, try_uncertain=try_uncertain, unsafe_fixes=self.unsafe)


def _read(collected: Sequence[CollectedFile], errors: list[AutosigError]) -> list[FixFile]:
    """The collected files as sources to fix (decoding errors go to ``errors``)."""
    files: list[FixFile] = []
    for item in collected:
        try:
            source = read_source(item.path, item.data)
        except AutosigError as exc:
            errors.append(exc)
            continue
        files.append(FixFile(source, display_path(item.path), "", item.select, item.ignore))
    return files


def _write(
    by_file: list[tuple[FixFile, FixResult]], errors: list[AutosigError]
) -> list[tuple[FixFile, FixResult]]:
    """Write every changed file (atomically); the files written or unchanged."""
    written: list[tuple[FixFile, FixResult]] = []
    for file, result in by_file:
        if not result.changed:
            written.append((file, result))
            continue
        try:
            write_source(file.source, result.new_text)
            written.append((file, result))
        except AutosigError as exc:
            errors.append(exc)
    return written


def _stale_errors(results: Sequence[FixResult], profile_path: Path | None) -> list[AutosigError]:
    """One error per function changed since profiling (the README's exit 2), said once.

    The engine's own "not fixed: changed since ..." line is dropped from the file's
    summary so the function is named once, as an error.
    """
    out: list[AutosigError] = []
    for result in results:
        for qualname in dict.fromkeys(result.stale):
            out.append(
                AutosigError(
                    f"{qualname} changed since {profile_path} was recorded: not fixed from "
                    "the profile (re-run autosig profile)",
                    result.path,
                )
            )
            result.left = [
                item
                for item in result.left
                if not (item.startswith(f"{qualname} (line ") and "since it was profiled" in item)
            ]
    return out
