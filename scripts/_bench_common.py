"""Shared pieces of the benchmark scripts: machine description, tables, results files.

No TensorFlow here: the benchmarks import it only in the child processes they time.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench-results"


def machine() -> dict[str, Any]:
    """Where the numbers come from: CPU, cores, load, Python and package versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for package in ("autosig", "tensorflow", "tensorflow-cpu", "keras", "libcst"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "os": platform.platform(),
        "python": platform.python_version(),
        "versions": versions,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git": git_revision(),
    }


def git_revision() -> str | None:
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return None
    return proc.stdout.strip() or None


def machine_line(info: dict[str, Any]) -> str:
    tf = info["versions"].get("tensorflow") or info["versions"].get("tensorflow-cpu", "?")
    load = info.get("load_average")
    load_text = f", load {load[0]:.1f}" if load else ""
    return (
        f"{info['cpu']}, {info['cores']} cores{load_text}; Python {info['python']}, "
        f"TensorFlow {tf}; {info['os']}; {info['date']}; git {info['git']}"
    )


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table; numbers right-aligned."""
    cells = [[cell_text(cell) for cell in row] for row in rows]
    numeric = [
        all(is_number(row[i]) for row in rows if row[i] is not None) for i in range(len(headers))
    ]
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append("|" + "|".join("---:" if num else "---" for num in numeric) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def cell_text(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def write_results(name: str, data: dict[str, Any], output: Path | None = None) -> Path:
    """Write the JSON results (bench-results/NAME.json unless OUTPUT is given)."""
    path = output or RESULTS_DIR / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def python_executable() -> str:
    """The interpreter to run children with: this one (the project's venv when run from it)."""
    return sys.executable


def autosig_command() -> list[str]:
    return [python_executable(), "-m", "autosig"]
