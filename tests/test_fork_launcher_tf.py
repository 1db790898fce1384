"""The tests' launcher (``tests/tf_fork_python.py``): a command autosig runs starts as a
fork of the worker's TensorFlow import, and must behave as ``python`` does for autosig:
output on its own stdio, exit status, ``sitecustomize`` from ``$PYTHONPATH`` (autosig's
recorder bootstrap), ``-m``, stop signals relayed, and the program killed with its
launcher."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.tf

PROGRAM = """\
import os, sys, tensorflow as tf
print("argv", sys.argv[1:], "site", os.environ.get("SITE_RAN"), "cwd", os.getcwd())
print("file", __file__, sys._getframe().f_code.co_filename)
print("to stderr", file=sys.stderr)
print("sum", int(tf.reduce_sum(tf.ones([3]))))
sys.exit(int(sys.argv[1]))
"""


def launch(forks: Any, args: list[str], cwd: Path, **popen: Any) -> subprocess.Popen[str]:
    env = forks.launch_env({**os.environ, "PYTHONPATH": str(cwd / "site")})
    return subprocess.Popen([*forks.launcher(), *args], cwd=cwd, env=env, text=True, **popen)


def test_output_exit_status_and_sitecustomize(tmp_path: Path, tf_forks: Any) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text("import os\nos.environ['SITE_RAN'] = '1'\n")
    (tmp_path / "prog.py").write_text(PROGRAM)
    proc = launch(
        tf_forks, ["prog.py", "3"], tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    assert f"argv ['3'] site 1 cwd {tmp_path}" in out and "sum 3" in out
    # absolute, as `python prog.py` gives them (autosig resolves code file names at exit,
    # when a program may have left a deleted working directory: golden 22)
    assert f"file {tmp_path / 'prog.py'} {tmp_path / 'prog.py'}" in out
    assert "to stderr" in err


def test_a_module_runs_with_dash_m(tmp_path: Path, tf_forks: Any) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "tool.py").write_text("import sys\nprint('module', __name__, sys.argv[1:])\n")
    proc = launch(tf_forks, ["-m", "tool", "x"], tmp_path, stdout=subprocess.PIPE)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "module __main__ ['x']" in out


def test_stop_signal_is_relayed_and_a_killed_launcher_takes_the_program(
    tmp_path: Path, tf_forks: Any
) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "wait.py").write_text(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = launch(tf_forks, ["wait.py"], tmp_path, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 7  # the program's own handler ran

    (tmp_path / "pid.py").write_text(
        "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n"
    )
    proc = launch(tf_forks, ["pid.py"], tmp_path, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    pid = int(proc.stdout.readline())
    proc.kill()
    proc.wait(timeout=60)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists()
