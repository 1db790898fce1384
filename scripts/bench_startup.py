#!/usr/bin/env python
"""Measure autosig's start-up: whole-process wall and CPU time of short commands.

Each command runs as a fresh process ``--runs`` times (after one warm-up run that is not
counted), commands interleaved so a change in machine load hits all of them alike;
wall time is read around the child, CPU time (user + system) is the operating
system's accounting of the finished child (``os.wait4``). Medians are reported, with
``python -c pass`` and ``import libcst`` as floors and ruff and black (when installed
beside this Python) as yardsticks, and the load average before and after: on a busy
machine wall time is inflated, CPU time much less.

"Cold" checks run with ``--no-cache`` (every file parsed, as on a first run or after an
edit); "cached" ones re-check an unchanged file with a warm result cache. autosig's
bytecode is compiled first, as ``pip install`` does (``--no-compile`` leaves it as it
is: with an editable install and ``PYTHONDONTWRITEBYTECODE`` set, every start compiles
autosig's modules again).

Targets: ``check FILE`` (cold) <= 0.3 s wall, ``--help`` and ``rule`` <= 0.2 s on a quiet
machine.

    python scripts/bench_startup.py [--runs 15] [--json FILE] [--no-compile]
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
DREAM = '''"""A small module with a tf.function: the one-file check of the issue's figure."""

import tensorflow as tf


class Scale(tf.Module):
    def __init__(self, factor):
        self.factor = tf.Variable(factor)

    @tf.function
    def __call__(self, x):
        return x * self.factor


@tf.function
def train_step(model, x, y):
    loss = tf.reduce_mean((model(x) - y) ** 2)
    return loss
'''
PRINTS = """import tensorflow as tf


@tf.function
def step(x):
    print("step", x)
    return x * 2
"""
"""A print in a tf.function: the most common finding (AS101)."""

ONE_FILE = "autosig check dream.py (cold: --no-cache)"
"""The row the issue's one-file target is read from (bench_static.py prints it too)."""


def autosig_script() -> list[str]:
    """The console script beside this Python (what users run), else ``python -m autosig``."""
    script = Path(sys.executable).parent / "autosig"
    return [str(script)] if script.exists() else [sys.executable, "-m", "autosig"]


def compile_autosig() -> None:
    """Write autosig's bytecode, as ``pip install`` does for a regular install."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "autosig")],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def prepare(workdir: Path) -> None:
    shutil.copy(MODEL, workdir / "model.py")
    (workdir / "plain.py").write_text(PLAIN)
    (workdir / "dream.py").write_text(DREAM)
    (workdir / "prints.py").write_text(PRINTS)


def one_file_command() -> list[str]:
    return [*autosig_script(), "check", "--no-cache", "dream.py"]


def commands(workdir: Path) -> list[tuple[str, list[str]]]:
    autosig = autosig_script()
    prepare(workdir)
    cache = ["--cache-dir", str(workdir / "cache")]
    out: list[tuple[str, list[str]]] = [
        ("python -c pass (floor)", [sys.executable, "-c", "pass"]),
        ("python -c 'import libcst' (floor to parse)", [sys.executable, "-c", "import libcst"]),
        ("autosig --help", [*autosig, "--help"]),
        ("autosig rule AS101", [*autosig, "rule", "AS101"]),
        ("autosig check plain.py (no tf.function)", [*autosig, "check", "plain.py"]),
        (ONE_FILE, one_file_command()),
        ("autosig check prints.py (cold)", [*autosig, "check", "--no-cache", "prints.py"]),
        ("autosig check model.py (cold, golden 07)", [*autosig, "check", "--no-cache", "model.py"]),
        ("autosig check dream.py (cached)", [*autosig, "check", *cache, "dream.py"]),
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


def measure(
    cmds: list[tuple[str, list[str]]], workdir: Path, runs: int
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, int]]:
    """Interleaved runs of every command (one warm-up each): walls, CPUs, exit codes."""
    walls: dict[str, list[float]] = {name: [] for name, _ in cmds}
    cpus: dict[str, list[float]] = {name: [] for name, _ in cmds}
    codes: dict[str, int] = {}
    for _name, argv in cmds:  # warm-up: page cache; fills the result cache of "cached"
        run_once(argv, workdir)
    for _ in range(runs):
        for name, argv in cmds:
            wall, cpu, code = run_once(argv, workdir)
            walls[name].append(wall)
            cpus[name].append(cpu)
            codes[name] = code
    return walls, cpus, codes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--no-compile", action="store_true", help="do not compile autosig's bytecode first"
    )
    args = parser.parse_args()
    if not args.no_compile:
        compile_autosig()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="autosig-startup-") as tmp:
        workdir = Path(tmp)
        cmds = commands(workdir)
        walls, cpus, codes = measure(cmds, workdir, args.runs)
    load_after = os.getloadavg()
    info = machine()
    rows = [
        [name, median(walls[name]), median(cpus[name]), min(walls[name]), codes[name]]
        for name, _ in cmds
    ]
    bytecode = "as it was" if args.no_compile else "compiled first (as pip install does)"
    print(f"Start-up, {args.runs} runs each, medians ({machine_line(info)})")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}; ", end="")
    print(f"autosig bytecode: {bytecode}\n")
    print(markdown_table(["command", "wall s", "CPU s", "fastest wall s", "exit"], rows))
    data = {
        "machine": info,
        "runs": args.runs,
        "bytecode_compiled": not args.no_compile,
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
