#!/usr/bin/env python3
"""Run the fuzz properties of tests/test_fuzz.py with many examples (CI runs a few dozen).

Usage: python scripts/fuzz_long.py [--examples N] [--shrink] [-k EXPR] [--seed S]

Same tests, same properties (check/fix raise only AutosigError, output parses, fix is
idempotent, lines outside the tf.function stay byte-identical); only the number of
examples changes. With --shrink, a failure is shrunk to a small example (can take
minutes on hypothesmith sources). Failing examples are kept in .hypothesis/ and
replayed first by the next run, in CI too.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="examples per property")
    parser.add_argument("--shrink", action="store_true", help="shrink failing examples")
    parser.add_argument("-k", default=None, help="only tests matching this pytest -k expression")
    parser.add_argument("--seed", default=None, help="hypothesis seed, to replay a run")
    args = parser.parse_args()
    env = dict(os.environ)
    env["AUTOSIG_FUZZ_EXAMPLES"] = str(args.examples)
    env["AUTOSIG_FUZZ_SHRINK"] = "1" if args.shrink else "0"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    cmd = [sys.executable, "-m", "pytest", "-q", str(ROOT / "tests" / "test_fuzz.py")]
    cmd += ["--hypothesis-show-statistics", "-p", "no:randomly"]
    if args.k:
        cmd += ["-k", args.k]
    if args.seed:
        cmd += [f"--hypothesis-seed={args.seed}"]
    return subprocess.call(cmd, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
