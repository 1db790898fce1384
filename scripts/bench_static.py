#!/usr/bin/env python
"""Benchmark: ``autosig check`` and static ``autosig fix --diff`` vs ``tf_upgrade_v2 --intree``.

All read the same large real tree: the Python files of the tf-models-official wheel
(fetched once with pip into .corpus/ by scripts/fetch_corpus.py), without the few files
tf_upgrade_v2's parser crashes on. Each tool runs as a child process, interleaved,
repeated (median reported). ``check (cold cache)`` starts each repetition with an empty
result cache (it parses every file and fills the cache); ``check (warm cache)`` re-checks
the unchanged tree right after it (nothing to parse); ``fix --diff`` has no cache.
Measured: wall time; CPU time (user + sys of the child and its waited-for descendants:
steadier than wall time on a shared machine); peak memory of the largest process
(``wait4`` ru_maxrss) and of the whole process tree (RSS of the child and its
descendants summed, sampled every 20 ms from /proc: autosig parses in worker
processes). Then the one-file cold check of ``bench_startup.py`` (``check --no-cache``
of a small module with tf.functions, whole processes), so the three targets of issue 24
print side by side: tree check >= 10x tf_upgrade_v2 (cold cache), warm re-check < 1 s,
one file <= 0.3 s wall median. Prints markdown tables and writes JSON to
bench-results/static.json.

    python scripts/bench_static.py            # 3 repetitions
    python scripts/bench_static.py --quick    # 1 repetition
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_common import (  # noqa: E402
    autosig_command,
    machine,
    machine_line,
    markdown_table,
    median,
    ratio,
    write_results,
)
from bench_startup import ONE_FILE, compile_autosig, one_file_command  # noqa: E402
from bench_startup import measure as measure_startup  # noqa: E402
from bench_startup import prepare as prepare_startup  # noqa: E402
from fetch_corpus import fetch  # noqa: E402

COLD, WARM = "autosig check (cold cache)", "autosig check (warm cache, unchanged tree)"

CORPUS = "tf-models-official"
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
PASTA_CHECK = """
import json, sys
from pathlib import Path
import pasta
root = Path(sys.argv[1])
failed = []
for path in sorted(root.rglob("*.py")):
    try:
        pasta.parse(path.read_text(encoding="utf-8"))
    except Exception as exc:
        failed.append([path.relative_to(root).as_posix(), type(exc).__name__])
print(json.dumps(failed))
"""


def pasta_failures(tree: Path) -> list[list[str]]:
    """Files tf_upgrade_v2's parser (pasta) cannot read: it crashes on them and stops.

    Found once per corpus (cached beside it), so every tool gets the same tree.
    """
    cache = tree.parent.parent / f"{tree.parent.name}.pasta-failures.json"
    if cache.is_file():
        return json.loads(cache.read_text())
    proc = subprocess.run(
        [sys.executable, "-c", PASTA_CHECK, str(tree)], capture_output=True, text=True
    )
    if proc.returncode:
        raise SystemExit(f"bench_static: checking files with pasta failed: {proc.stderr[-500:]}")
    failed = json.loads(proc.stdout)
    cache.write_text(json.dumps(failed) + "\n")
    return failed


def common_tree(tree: Path, scratch: Path, excluded: list[list[str]]) -> Path:
    """A copy of TREE without the files tf_upgrade_v2 cannot parse."""
    skip = {path for path, _ in excluded}
    target = scratch / tree.name
    for path in sorted(tree.rglob("*.py")):
        relative = path.relative_to(tree).as_posix()
        if relative not in skip:
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / relative)
    return target


def tree_rss_kb(root_pid: int) -> int:
    """RSS of a process and all its descendants, from /proc (0 for what has exited)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            statm = Path(f"/proc/{entry}/statm").read_text().split()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = int(statm[1]) * PAGE_KB
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def measure(command: list[str], cwd: Path, stdout_path: Path) -> dict[str, Any]:
    """Run COMMAND; wall time, exit code, peak RSS of the largest process and of the tree."""
    peak = [0]
    with stdout_path.open("w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.PIPE, text=True)
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.02):
                peak[0] = max(peak[0], tree_rss_kb(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        stderr_chunks: list[str] = []
        reader = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read()))
        reader.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        reader.join()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "exit": proc.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "max_process_rss_mb": usage.ru_maxrss / 1024,
        "tree_rss_mb": peak[0] / 1024,
        "stderr_tail": "".join(stderr_chunks).strip().splitlines()[-3:],
    }


def tools(tree: Path, scratch: Path) -> dict[str, tuple[list[str], set[int]]]:
    """name -> (command, accepted exit codes). All read ``tree``."""
    tf_upgrade = shutil.which("tf_upgrade_v2", path=str(Path(sys.executable).parent))
    cache = ["--cache-dir", str(scratch / "cache")]
    check = [*autosig_command(), "check", str(tree), "--quiet", *cache]
    commands: dict[str, tuple[list[str], set[int]]] = {
        COLD: (check, {0, 1}),
        WARM: (check, {0, 1}),
        "autosig fix --diff": ([*autosig_command(), "fix", str(tree), "--diff", "--quiet"], {0, 1}),
    }
    if tf_upgrade:
        outtree = scratch / "tf_upgrade_out"
        commands["tf_upgrade_v2 --intree"] = (
            [tf_upgrade, "--intree", str(tree), "--outtree", str(outtree)]
            + ["--reportfile", str(scratch / "tf_upgrade_report.txt")],
            {0},
        )
    return commands


def count_lines(tree: Path) -> tuple[int, int]:
    files = sorted(tree.rglob("*.py"))
    lines = 0
    for path in files:
        with path.open("rb") as handle:
            lines += sum(1 for _ in handle)
    return len(files), lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repetition")
    parser.add_argument("--repeat", type=int, help="repetitions (default 3, --quick 1)")
    parser.add_argument("--output", type=Path, help="JSON file (default bench-results/static.json)")
    parser.add_argument(
        "--startup-runs", type=int, default=15, help="runs of the one-file check (default 15)"
    )
    args = parser.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 3)
    compile_autosig()  # as pip install does: the runs measure checking, not compiling

    corpus = fetch(CORPUS)
    excluded = pasta_failures(corpus / "official")
    info = machine()
    scratch = Path(tempfile.mkdtemp(prefix="autosig-bench-static-"))
    runs: dict[str, list[dict[str, Any]]] = {}
    try:
        tree = common_tree(corpus / "official", scratch, excluded)
        files, lines = count_lines(tree)
        print(
            f"Corpus: {CORPUS} official/: {files} files, {lines} lines "
            f"({len(excluded)} files tf_upgrade_v2 cannot parse left out)",
            file=sys.stderr,
        )
        commands = tools(tree, scratch)
        # the warm re-check always runs right after a cold one (on the cache it filled)
        names = [name for name in commands if name != WARM]
        for rep in range(repeat):
            order = names[rep % len(names) :] + names[: rep % len(names)]
            order.insert(order.index(COLD) + 1, WARM)
            for name in order:
                command, accepted = commands[name]
                shutil.rmtree(scratch / "tf_upgrade_out", ignore_errors=True)
                if name == COLD:
                    shutil.rmtree(scratch / "cache", ignore_errors=True)
                result = measure(command, scratch, scratch / "stdout.txt")
                result["output_lines"] = sum(1 for _ in (scratch / "stdout.txt").open())
                if result["exit"] not in accepted:
                    raise SystemExit(
                        f"bench_static: {name} exited {result['exit']}: "
                        + " | ".join(result["stderr_tail"])
                    )
                runs.setdefault(name, []).append(result)
                print(f"{name}: {result['wall_s']:.2f} s", file=sys.stderr)
        one_file = scratch / "one_file"
        one_file.mkdir()
        prepare_startup(one_file)
        walls, cpus, _ = measure_startup(
            [(ONE_FILE, one_file_command())], one_file, args.startup_runs
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    summary = {
        name: {
            "wall_s": median([r["wall_s"] for r in results]),
            "cpu_s": median([r["cpu_s"] for r in results]),
            "max_process_rss_mb": max(r["max_process_rss_mb"] for r in results),
            "tree_rss_mb": max(r["tree_rss_mb"] for r in results),
            "exit": results[-1]["exit"],
            "output_lines": results[-1]["output_lines"],
        }
        for name, results in runs.items()
    }
    summary[ONE_FILE] = {
        "wall_s": median(walls[ONE_FILE]),
        "cpu_s": median(cpus[ONE_FILE]),
        "runs": args.startup_runs,
    }
    baseline = summary.get("tf_upgrade_v2 --intree", {}).get("wall_s")
    rows = [
        [
            name,
            s["wall_s"],
            s["cpu_s"],
            s["tree_rss_mb"],
            s["max_process_rss_mb"],
            ratio(baseline, s["wall_s"]) if not name.startswith("tf_upgrade") else 1.0,
            s["exit"],
            s["output_lines"],
        ]
        for name, s in summary.items()
        if name != ONE_FILE
    ]
    table = markdown_table(
        [
            "tool",
            "wall (s)",
            "CPU (s)",
            "peak RSS, all processes (MB)",
            "peak RSS, largest process (MB)",
            "speed-up vs tf_upgrade_v2",
            "exit",
            "output lines",
        ],
        rows,
    )
    print(
        f"Static benchmark on {CORPUS} official/ ({files} files, {lines} lines, without the "
        f"{len(excluded)} files tf_upgrade_v2 cannot parse; {repeat} repetition(s), "
        "median wall time)\n"
    )
    print(table)
    targets = _targets(summary, baseline)
    print("\nIssue 24's targets, measured in this run:\n")
    print(targets)
    print(f"\nMachine: {machine_line(info)}")
    data = {
        "benchmark": "static",
        "command": "python scripts/bench_static.py" + (" --quick" if args.quick else ""),
        "corpus": {
            "name": CORPUS,
            "tree": "official",
            "files": files,
            "lines": lines,
            "excluded_unparsable_by_tf_upgrade_v2": excluded,
        },
        "repeat": repeat,
        "machine": info,
        "summary": summary,
        "runs": runs,
        "table": table,
        "targets": targets,
    }
    path = write_results("static-quick" if args.quick else "static", data, args.output)
    print(f"Results: {path}")
    return 0


def _targets(summary: dict[str, dict[str, Any]], baseline: float | None) -> str:
    """The three figures issue 24 asks for, each with its target and whether it is met."""
    cold = summary[COLD]["wall_s"]
    speedup = baseline / cold if baseline else None
    tool = next((row for name, row in summary.items() if name.startswith("tf_upgrade_v2")), None)
    cold_cpu = summary[COLD].get("cpu_s")
    cpu_speedup = tool["cpu_s"] / cold_cpu if tool and tool.get("cpu_s") and cold_cpu else None
    warm = summary[WARM]["wall_s"]
    one = summary[ONE_FILE]
    rows = [
        [
            "tree check (cold cache) vs tf_upgrade_v2, wall",
            f"{speedup:.1f}x" if speedup else "n/a",
            ">= 10x",
            "yes" if speedup and speedup >= 10 else "no",
        ],
        [
            "tree check (cold cache) vs tf_upgrade_v2, CPU (steadier on a shared machine)",
            f"{cpu_speedup:.1f}x" if cpu_speedup else "n/a",
            ">= 10x",
            "yes" if cpu_speedup and cpu_speedup >= 10 else "no",
        ],
        ["warm re-check of the unchanged tree, wall", f"{warm:.2f} s", "< 1 s", _yes(warm < 1)],
        [
            f"one-file cold check, wall median of {one['runs']} (CPU {one['cpu_s']:.3f} s)",
            f"{one['wall_s']:.3f} s",
            "<= 0.3 s",
            _yes(one["wall_s"] <= 0.3),
        ],
    ]
    return markdown_table(["figure", "measured", "target", "met"], rows)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


if __name__ == "__main__":
    sys.exit(main())
