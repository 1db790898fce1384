"""The one worker pool ``check`` and ``fix`` run their files in.

Each file is an independent task (plain data that pickles cheaply); the pool has one
worker per CPU this process may run on (a container's or ``taskset``'s limit, not the
host's count), or ``jobs``. Few tasks run inline: starting workers costs more than it
saves. The most expensive tasks go first (parse time grows with a file's size, and one
3,000-line file takes seconds), in small chunks, so the workers stay busy to the end. A
pool that cannot start or that loses a worker (OOM, segfault) finishes the rest inline:
no task is lost or run twice. Results come back in the tasks' order, whatever the
scheduling.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from typing import TypeVar

from autosig.progress import Progress

T = TypeVar("T")
R = TypeVar("R")

MIN_TASKS_FOR_POOL = 4
"""Fewer tasks than this run inline: starting workers would cost more."""


def usable_cpus() -> int:
    """CPUs this process may run on (a container's or taskset's limit, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(jobs: int | None, tasks: int) -> int:
    """Worker processes for ``tasks`` tasks: ``jobs`` (None: one per usable CPU), at most
    one per task, and none (1: inline) for fewer than ``MIN_TASKS_FOR_POOL``."""
    if tasks < MIN_TASKS_FOR_POOL:
        return 1
    return max(1, min(usable_cpus() if jobs is None else jobs, tasks))


def run_tasks(
    function: Callable[[T], R],
    tasks: Sequence[T],
    *,
    jobs: int | None,
    cost: Callable[[T], int] | None = None,
    label: str = "",
    progress: bool = False,
) -> list[R]:
    """``[function(task) for task in tasks]``, in worker processes when it pays.

    ``function`` must be a module-level function that turns every failure into a
    result (it runs in another process). ``cost``: a task's expected work (larger first).
    ``label`` and ``progress``: the progress bar on stderr for long runs.
    """
    results: list[R | None] = [None] * len(tasks)
    order = list(range(len(tasks)))
    if cost is not None:
        order.sort(key=lambda i: cost(tasks[i]), reverse=True)
    workers = worker_count(jobs, len(tasks))
    done = 0
    with Progress(len(tasks), label, enabled=progress) as bar:
        if workers > 1:
            # multiprocessing costs start-up: imported only when there is a pool to start
            import pickle
            from concurrent.futures import ProcessPoolExecutor
            from concurrent.futures.process import BrokenProcessPool

            chunksize = max(1, len(tasks) // (workers * 16))
            heavy = _heavy_prefix([cost(tasks[i]) for i in order]) if cost is not None else 0
            try:
                with ProcessPoolExecutor(max_workers=workers) as pool:
                    ordered = [tasks[i] for i in order]
                    # the costly tasks one by one (a chunk of them would keep one worker
                    # busy while the other runs out of work), the rest in chunks
                    first = pool.map(function, ordered[:heavy], chunksize=1)
                    rest = pool.map(function, ordered[heavy:], chunksize=chunksize)
                    for result in itertools.chain(first, rest):
                        results[order[done]] = result
                        done += 1
                        bar.advance()
            except (BrokenProcessPool, OSError, NotImplementedError, pickle.PicklingError):
                pass  # no usable pool here (or a worker died): finish inline
        for index in order[done:]:
            results[index] = function(tasks[index])
            bar.advance()
    return results  # type: ignore[return-value]


HEAVY_SHARE = 0.9
"""The share of the expected work handed out task by task (``_heavy_prefix``)."""


def _heavy_prefix(costs: Sequence[int]) -> int:
    """How many of the tasks (costs in descending order) hold ``HEAVY_SHARE`` of the work."""
    total = sum(costs)
    running = 0
    for count, value in enumerate(costs, 1):
        running += value
        if running >= HEAVY_SHARE * total:
            return count
    return len(costs)
