"""Measure autosig's start-up: whole-process wall and CPU time of short commands.

Each command runs as a fresh process ``--runs`` times (after one warm-up run that is not
counted), commands interleaved so a change in machine load hits all of them alike;
wall time is read around the child, CPU time (user + system) is the operating
system's accounting of the finished child (``os.wait4``). Medians are reported, with
ruff and black (when installed beside this Python) as yardsticks, and the load average
before and after: on a busy machine wall time is inflated, CPU time much less.
Targets: ``check FILE`` <= 0.3 s, ``--help`` and ``rule`` <= 0.2 s on a quiet machine.

    python scripts/bench_startup.py [--runs 15] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import (  # noqa: E402
    ROOT,
    machine,
    machine_line,
    markdown_table,
    median,
    write_results,
)

MODEL = ROOT / "golden" / "07_module_python_scalars" / "model.py"
PLAIN = '"""Plain Python: the text prefilter skips it without parsing."""\n\n\ndef f(x):\n    return x + 1\n'


def autosig_script() -> list[str]:
    """The console script beside this Python (what users run), else ``python -m autosig``."""
    script = Path(sys.executable).parent / "autosig"
    return [str(script)] if script.exists() else [sys.executable, "-m", "autosig"]


def commands(workdir: Path) -> list[tuple[str, list[str]]]:
    autosig = autosig_script()
    shutil.copy(MODEL, workdir / "model.py")
    (workdir / "plain.py").write_text(PLAIN)
    out: list[tuple[str, list[str]]] = [
        ("python -c pass (floor)", [sys.executable, "-c", "pass"]),
        ("autosig --help", [*autosig, "--help"]),
        ("autosig rule AS101", [*autosig, "rule", "AS101"]),
        ("autosig check plain.py (no tf.function)", [*autosig, "check", "plain.py"]),
        ("autosig check model.py", [*autosig, "check", "model.py"]),
    ]
    bindir = Path(sys.executable).parent
    for tool, args in (("ruff", ["check", "model.py"]), ("black", ["--check", "model.py"])):
        path = bindir / tool if (bindir / tool).exists() else shutil.which(tool)
        if path:
            out.append((f"{tool} {' '.join(args)}", [str(path), *args]))
    return out


def run_once(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall s, cpu s, exit code) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="autosig-startup-") as tmp:
        workdir = Path(tmp)
        cmds = commands(workdir)
        walls: dict[str, list[float]] = {name: [] for name, _ in cmds}
        cpus: dict[str, list[float]] = {name: [] for name, _ in cmds}
        codes: dict[str, int] = {}
        for _name, argv in cmds:  # warm-up: page cache, .pyc files
            run_once(argv, workdir)
        for _ in range(args.runs):
            for name, argv in cmds:
                wall, cpu, code = run_once(argv, workdir)
                walls[name].append(wall)
                cpus[name].append(cpu)
                codes[name] = code
    load_after = os.getloadavg()
    info = machine()
    rows = [
        [name, median(walls[name]), median(cpus[name]), min(walls[name]), codes[name]]
        for name, _ in cmds
    ]
    print(f"Start-up, {args.runs} runs each, medians ({machine_line(info)})")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}\n")
    print(markdown_table(["command", "wall s", "CPU s", "fastest wall s", "exit"], rows))
    data = {
        "machine": info,
        "runs": args.runs,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "commands": {
            name: {"wall_s": walls[name], "cpu_s": cpus[name], "exit": codes[name]}
            for name, _ in cmds
        },
    }
    path = write_results("startup", data, args.json)
    print(f"\nJSON: {path}")


if __name__ == "__main__":
    main()
