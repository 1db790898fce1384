"""What the probe traces cost, next to the profiled run's own time.

For each workload (every golden case's ``driver.py`` and a small real training script,
the text classifier of ``bench_verify.py``: 200 steps of varying batch and length), in
a fresh temporary copy, alternately:

1. ``autosig profile --no-probe -- python driver.py`` (the profiled run's own time);
2. ``autosig profile -- python driver.py`` (default probe budget).

The probe time is what the profile's ``probes`` section reports (the wall time the
program waited for probe rounds, summed over its processes); the overhead is that time
over the profiled run's own wall time (target: under 20% for a training script). The
wall-time difference of the two runs is shown too (it includes the noise of the shared
machine). Prints a markdown table and writes JSON.

    python scripts/bench_probe.py [--repeats 1] [--only 07_module_python_scalars ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import (  # noqa: E402
    ROOT,
    autosig_command,
    machine,
    machine_line,
    markdown_table,
    python_executable,
    write_results,
)
from bench_verify import TRAINING, prepare  # noqa: E402


def workloads() -> list[str]:
    golden = sorted(p.parent.name for p in (ROOT / "golden").glob("*/driver.py"))
    return [*golden, TRAINING]


def profiled(project: Path, probe: bool) -> dict[str, object]:
    """One ``autosig profile`` run: wall time, exit code, the probes' own report."""
    out = project / ".autosig" / ("probe.json" if probe else "plain.json")
    options = [] if probe else ["--no-probe"]
    cmd = [*autosig_command(), "profile", "-o", str(out), *options, "--"]
    cmd += [python_executable(), "driver.py"]
    env = {"TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(
        cmd, cwd=project, capture_output=True, text=True, env={**_environ(), **env}
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{project.name}: autosig profile failed:\n{done.stderr[-2000:]}")
    data = json.loads(out.read_text())
    probes = data.get("probes") or {}
    functions = data.get("functions", [])
    return {
        "wall_s": wall,
        "probe_s": probes.get("time_s", 0.0),
        "probes": probes.get("probes", 0),
        "rounds": probes.get("rounds", 0),
        "skipped_rounds": probes.get("skipped_rounds", 0),
        "failures": probes.get("failures", 0),
        "retraced": sum(1 for f in functions if f.get("traces", 0) > 1),
        "probed_objects": probes.get("probed_objects", 0),
        "alive_at_exit": probes.get("alive_at_exit", 0),
    }


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


def measure(name: str, repeats: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="autosig-bench-probe-") as tmp:
        project = prepare(name, Path(tmp))
        plain: list[dict[str, object]] = []
        probed: list[dict[str, object]] = []
        for _ in range(repeats):
            plain.append(profiled(project, probe=False))
            probed.append(profiled(project, probe=True))

    def med(runs: list[dict[str, object]], key: str) -> float:
        return statistics.median(float(r[key]) for r in runs)  # type: ignore[arg-type]

    own = med(plain, "wall_s")
    probe_s = med(probed, "probe_s")
    last = probed[-1]
    return {
        "workload": name,
        "retraced": last["retraced"],
        "profiled_s": own,
        "with_probes_s": med(probed, "wall_s"),
        "probe_s": probe_s,
        "overhead": probe_s / own if own else None,
        "wall_overhead": med(probed, "wall_s") / own - 1 if own else None,
        "probes": last["probes"],
        "rounds": last["rounds"],
        "skipped_rounds": last["skipped_rounds"],
        "failures": last["failures"],
        "probed_objects": last["probed_objects"],
        "alive_at_exit": last["alive_at_exit"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    info = machine()
    rows = []
    for name in args.only or workloads():
        row = measure(name, args.repeats)
        rows.append(row)
        print(
            f"{name}: {row['probe_s']:.2f} s of probes for {row['profiled_s']:.2f} s",
            file=sys.stderr,
        )
    headers = [
        "workload",
        "retraced functions",
        "profiled run (s)",
        "with probes (s)",
        "probe time (s)",
        "probe time / run",
        "probe traces",
        "rounds",
        "skipped (budget)",
        "could not run",
    ]
    table = [
        [
            r["workload"],
            r["retraced"],
            r["profiled_s"],
            r["with_probes_s"],
            r["probe_s"],
            f"{100 * r['overhead']:.0f}%" if r["overhead"] is not None else None,
            r["probes"],
            r["rounds"],
            r["skipped_rounds"],
            r["failures"],
        ]
        for r in rows
    ]
    print(machine_line(info))
    print(f"repeats: {args.repeats} (medians)")
    print(markdown_table(headers, table))
    objects = sum(int(r["probed_objects"]) for r in rows)  # type: ignore[arg-type]
    alive = sum(int(r["alive_at_exit"]) for r in rows)  # type: ignore[arg-type]
    print(f"instances probed: {objects}; still alive when the profile was written: {alive}")
    path = write_results(
        "probe", {"machine": info, "repeats": args.repeats, "rows": rows}, args.json
    )
    print(f"results: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
