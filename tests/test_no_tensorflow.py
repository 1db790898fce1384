"""``autosig check`` must work where TensorFlow cannot be imported, and never import it.

The check runs in a fresh interpreter whose first meta-path finder refuses every
``tensorflow`` (and ``keras``) import and records the attempt; afterwards neither an
attempt nor a module may show up. Parallel workers (``-j 2``) are covered too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

WRAPPER = r"""
import json, sys

BLOCKED = ("tensorflow", "keras", "tf_keras")
attempts = []


class RefuseTensorFlow:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            attempts.append(name)
            raise ImportError(f"importing {name} is forbidden in this test")
        return None


sys.meta_path.insert(0, RefuseTensorFlow())

from autosig.cli import main

try:
    main(sys.argv[1:])
    code = 0
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(json.dumps({"attempts": attempts, "loaded": loaded}), file=sys.stderr)
sys.exit(code)
"""

SOURCE = """\
import tensorflow as tf
from tensorflow import function


@tf.function
def step(x):
    print(x)
    return x + 1


fast = function(lambda y: y * 2)
"""


def run_blocked(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    return proc, report


def test_wrapper_really_blocks_tensorflow(tmp_path: Path) -> None:
    """Guard against a wrapper that blocks nothing: a direct import must fail in it."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            WRAPPER.replace("from autosig.cli import main", "import tensorflow"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "importing tensorflow is forbidden" in proc.stderr


def test_check_never_imports_tensorflow(tmp_path: Path) -> None:
    for i in range(6):  # enough files for a process pool
        (tmp_path / f"m{i}.py").write_text(SOURCE, encoding="utf-8")
    for args in (["check", "--format", "json", "-j", "1", "."], ["check", "-j", "2", "."]):
        proc, report = run_blocked(args, tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert report == {"attempts": [], "loaded": []}
        assert "AS101" in proc.stdout


def test_sarif_rule_docs_without_tensorflow(tmp_path: Path) -> None:
    """SARIF output loads every rule's documentation: still no TensorFlow."""
    (tmp_path / "a.py").write_text(SOURCE, encoding="utf-8")
    proc, report = run_blocked(["check", "--format", "sarif", "a.py"], tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert report == {"attempts": [], "loaded": []}
    assert '"ruleId": "AS101"' in proc.stdout
