"""Step time: one statistic for the workload runs and the replay, and the replay's timer.

The reported "median step" is the median duration of a function's calls after its
warm-up: in a workload run the first call of each function in each process (the
first trace, XLA's first compile, optimizer slots built on the first step); in a
replay the pass that recorded the outputs (every replayed input traced and
compiled once). Later retraces stay in: a function that keeps retracing pays for it
on every step, and that is what the rewrite removes. The median, not the mean, so
a stray slow call (a garbage collection, another process) does not move it.

The replay times original and rewritten *interleaved*, input by input, alternating
which goes first, for several rounds: drift of a shared machine (other processes,
CPU frequency) then hits both alike instead of whichever ran second.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

WARMUP_CALLS = 1
"""Calls per function and process excluded from a workload run's median step."""

MIN_TIMED_CALLS = 30
"""A replay times at least this many calls per variant (more rounds for few inputs) ..."""
MIN_ROUNDS = 3
MAX_ROUNDS = 50
BUDGET_S = 2.0
"""... unless a function's rounds have already taken this long (slow steps: fewer
rounds, at least one)."""


def steady_state(durations: Sequence[float], warmup: int = WARMUP_CALLS) -> list[float]:
    """The durations after the first ``warmup`` ones (all of them if none would be left)."""
    return list(durations[warmup:]) or list(durations)


def median_step(runs: Iterable[Sequence[float]], warmup: int = WARMUP_CALLS) -> float | None:
    """Median call duration over the steady state of each run (None: no calls).

    One run is the durations of one function in one process (or one replay), in
    call order; its first ``warmup`` calls are excluded.
    """
    steady = [d for durations in runs for d in steady_state(durations, warmup)]
    return statistics.median(steady) if steady else None


def time_interleaved(
    calls: Mapping[str, Sequence[Callable[[], Any]]],
    *,
    min_calls: int = MIN_TIMED_CALLS,
    min_rounds: int = MIN_ROUNDS,
    max_rounds: int = MAX_ROUNDS,
    budget_s: float = BUDGET_S,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Durations of every call, per variant, timed interleaved over repeated rounds.

    ``calls`` maps a variant ("original", "rewritten") to one zero-argument callable
    per input, the same inputs in the same order for every variant. Round ``r``
    runs input ``i`` of each variant back to back, in rotated variant order. Call
    them warm (traced and compiled) first: every timed call counts.
    """
    variants = list(calls)
    inputs = min((len(c) for c in calls.values()), default=0)
    out: dict[str, list[float]] = {v: [] for v in variants}
    if not variants or not inputs:
        return out
    rounds = min(max_rounds, max(min_rounds, -(-min_calls // inputs)))
    started = clock()
    for round_index in range(rounds):
        shift = round_index % len(variants)
        order = variants[shift:] + variants[:shift]
        for index in range(inputs):
            for variant in order:
                call = calls[variant][index]
                start = clock()
                call()
                out[variant].append(clock() - start)
        if clock() - started >= budget_s:
            break
    return out
