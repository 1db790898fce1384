"""Fix many files: one task per file, in the worker pool (``autosig.pool``) when there are
enough of them.

A task is plain data (it pickles cheaply to a worker) and every failure becomes an
AutosigError naming its file, so one file's bug never stops the others. Results come
back in the tasks' order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from autosig.errors import AutosigError
from autosig.infer.plan import Plan
from autosig.pool import run_tasks
from autosig.rules.registry import select_rules

if TYPE_CHECKING:  # the engine imports libcst: 'fix' with nothing to parse never needs it
    from autosig.rewrite.engine import FixResult


@dataclass(frozen=True)
class FixTask:
    """One file to fix: its text, how it is named, its rules and its part of the plan."""

    display: str
    text: str
    profile_rel: str
    select: tuple[str, ...] | None
    ignore: tuple[str, ...]
    unsafe_fixes: bool
    plan: Plan | None


def fix_all(
    tasks: list[FixTask], jobs: int | None, progress: bool
) -> list[FixResult | AutosigError]:
    """Fix every task, in ``jobs`` worker processes (None: one per CPU this process may
    use) when there are enough tasks; ``progress``: show a bar on stderr."""
    return run_tasks(
        fix_task,
        tasks,
        jobs=jobs,
        cost=lambda task: len(task.text),
        label="autosig fix",
        progress=progress,
    )


def plan_for(plan: Plan | None, rel: str) -> Plan | None:
    """Only the file's own entries (and those with call sites in it) travel to a worker."""
    if plan is None:
        return None
    return Plan(
        [
            entry
            for entry in plan.functions
            if entry.path == rel
            or (entry.call_sites is not None and any(s.path == rel for s in entry.call_sites.sites))
        ]
    )


def fix_task(task: FixTask) -> FixResult | AutosigError:
    """Fix one file's text; every failure becomes an AutosigError naming it."""
    from autosig.rewrite.engine import fix_text  # libcst: only once a file is fixed
    from autosig.source.fast_visit import read_only_visits

    try:
        rules = select_rules(task.select, task.ignore)
        with read_only_visits():  # libcst's visitor passes without their node copies
            return fix_text(
                task.text,
                task.display,
                plan=task.plan,
                rules=rules,
                unsafe_fixes=task.unsafe_fixes,
                profile_path_of=task.profile_rel,
            )
    except AutosigError as exc:
        return exc
    except RecursionError:
        return AutosigError("too deeply nested to fix", task.display)
    except Exception as exc:  # noqa: BLE001 - one file's bug must not stop the others
        return AutosigError(
            f"internal error while fixing ({type(exc).__name__}: {exc}); nothing written; "
            "please report this as an autosig bug",
            task.display,
        )
