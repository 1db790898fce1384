#!/usr/bin/env python3
"""Fetch real code bases (wheels from PyPI) and extract their Python files for benchmarks.

Usage: python scripts/fetch_corpus.py [NAME ...]   (default: all)
Prints the directory of each extracted corpus. Cached under .corpus/ (idempotent).
The corpora are code we did not write: tf-models-official, tf-agents, dm-sonnet.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".corpus"

CORPORA: dict[str, str] = {
    "tf-models-official": "tf-models-official==2.20.0",
    "tf-agents": "tf-agents==0.19.0",
    "dm-sonnet": "dm-sonnet==2.0.2",
}


def fetch(name: str) -> Path:
    """Download the wheel (no dependencies) and extract its ``.py`` files; return the dir."""
    if name not in CORPORA:
        raise SystemExit(f"fetch_corpus: unknown corpus {name!r}; known: {', '.join(CORPORA)}")
    target = CACHE / name
    done = target / ".extracted"
    if done.exists():
        return target
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    requirement = CORPORA[name]
    found = sorted(wheels.glob(requirement.split("==")[0].replace("-", "_") + "-*.whl"))
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary",
                ":all:",
                "-q",
                "-d",
                str(wheels),
                requirement,
            ],
            check=True,
        )
        found = sorted(wheels.glob(requirement.split("==")[0].replace("-", "_") + "-*.whl"))
    if not found:
        raise SystemExit(f"fetch_corpus: no wheel downloaded for {requirement}")
    target.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(found[-1]) as archive:
        for member in archive.namelist():
            if member.endswith(".py") and ".dist-info/" not in member:
                archive.extract(member, target)
    done.write_text(found[-1].name + "\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(CORPORA))
    args = parser.parse_args()
    for name in args.names:
        print(fetch(name))


if __name__ == "__main__":
    main()
