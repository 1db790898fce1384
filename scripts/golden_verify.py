"""``autosig verify`` on every golden case: one line per function and mode, for before/after.

Each case is copied to a temporary directory, profiled (``autosig profile -- python
driver.py``) and verified with its own ``fix_args`` (``--no-xla`` unless ``--xla``).
Prints a table (case, function, mode, verdict, detail) and, with ``--json FILE``,
writes every verdict, so two checkouts can be compared::

    python scripts/golden_verify.py --json before.json            # on main
    python scripts/golden_verify.py --json after.json --compare before.json

``--compare`` lists the verdicts that changed. Runs the autosig of this checkout
(``PYTHONPATH``), not an installed one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
TIMEOUT_S = 600


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = str(ROOT)
    return env


def _autosig(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autosig", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def verify_case(name: str, xla: bool) -> list[dict]:
    """Every verdict of one case: {case, function, mode, status, detail}."""
    case = json.loads((GOLDEN / name / "case.json").read_text())
    with tempfile.TemporaryDirectory(prefix="autosig-golden-verify-") as tmp:
        work = Path(tmp) / name
        shutil.copytree(
            GOLDEN / name, work, ignore=shutil.ignore_patterns("expected", "hand.py", "__pycache__")
        )
        profiled = _autosig(["profile", "--", sys.executable, "driver.py"], work)
        if profiled.returncode != 0:
            return [_row(name, "-", "-", "profile failed", profiled.stderr[-300:])]
        verified = _autosig(
            [
                "verify",
                *case["fix_args"],
                "--xla" if xla else "--no-xla",
                "--format",
                "json",
                "--",
                sys.executable,
                "driver.py",
            ],
            work,
        )
        try:
            report = json.loads(verified.stdout)
        except ValueError:
            return [_row(name, "-", "-", f"exit {verified.returncode}", verified.stderr[-300:])]
    rows = []
    for function in report.get("functions", []):
        for mode in function.get("modes", []):
            rows.append(
                _row(name, function["qualname"], mode["mode"], mode["status"], mode["detail"])
            )
    if not rows:
        notes = "; ".join(report.get("notes", [])) or "no function compared"
        rows.append(_row(name, "-", "-", f"exit {report.get('exit_code')}", notes))
    return rows


def _row(case: str, function: str, mode: str, status: str, detail: str) -> dict:
    return {"case": case, "function": function, "mode": mode, "status": status, "detail": detail}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case folder names (default: all)")
    parser.add_argument("--xla", action="store_true", help="verify with --xla too")
    parser.add_argument("--json", type=Path, help="write the verdicts to this file")
    parser.add_argument("--compare", type=Path, help="a --json file of another run")
    args = parser.parse_args()
    cases = args.cases or sorted(p.name for p in GOLDEN.iterdir() if (p / "driver.py").is_file())
    rows: list[dict] = []
    for name in cases:
        found = verify_case(name, args.xla)
        rows.extend(found)
        for row in found:
            print(
                f"| {row['case']} | {row['function']} | {row['mode']} | {row['status']} "
                f"| {row['detail'][:160]} |",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    if args.compare:
        before = {
            (r["case"], r["function"], r["mode"]): r for r in json.loads(args.compare.read_text())
        }
        print("\nchanged verdicts:")
        for row in rows:
            old = before.get((row["case"], row["function"], row["mode"]))
            if old is None or old["status"] != row["status"]:
                was = old["status"] if old else "(absent)"
                print(
                    f"- {row['case']} {row['function']} ({row['mode']}): {was} -> {row['status']}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
