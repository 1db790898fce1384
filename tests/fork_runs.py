"""Plain Python program runs for the TensorFlow tests, forked from one TensorFlow import.

``ForkServer`` talks to ``tf_fork_server.py``: ``run``/``start`` take the argv of a
``python script.py ...`` run and give what ``subprocess.run`` gives (a
``CompletedProcess`` with stdout, stderr and the exit status), but the program starts
from a fork of a process that already imported TensorFlow, so it skips the ~3.5 s of
CPU that import costs. Programs that are autosig itself (``autosig profile``,
``verify``) never run here: they are what the tests test, so they start as a user
starts them. The programs *they* run can: ``launcher()`` is a ``python`` for the
command autosig profiles or verifies (``tests/tf_fork_python.py``), whose program then
runs as a fork too, with autosig's recorder started in it as in a new process. One
server per test process (a session fixture in ``conftest.py``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVER = Path(__file__).with_name("tf_fork_server.py")
LAUNCHER = Path(__file__).with_name("tf_fork_python.py")
ENV_SOCKET = "AUTOSIG_TEST_FORK_SOCKET"
CHECKOUT = Path(__file__).resolve().parent.parent


def tf_program_env() -> dict[str, str]:
    """The environment plain TensorFlow programs of the tests run in (golden drivers):
    this checkout's autosig first, quiet TensorFlow, no GPU, a fixed hash seed."""
    env = dict(os.environ)
    env.update(TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = str(CHECKOUT)
    return env


class ForkedRun:
    """A program running in a fork; ``wait`` gives its CompletedProcess."""

    def __init__(self, args: list[str], pid: int, files: dict[str, Path]) -> None:
        self.args = args
        self.pid = pid
        self.files = files

    def _alive(self) -> bool:
        """Running: not gone, and not a zombie waiting for the server to reap it."""
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return False
        return stat.rsplit(")", 1)[-1].split()[0] != "Z"

    def wait(self, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        status = self.files["status"]
        deadline = time.monotonic() + timeout
        code: int | None = None
        while code is None:
            if status.exists():
                code = int(status.read_text())
                break
            if not self._alive():
                time.sleep(0.05)  # the status file is written just before the exit
                code = int(status.read_text()) if status.exists() else -signal.SIGKILL
                break
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                code = -signal.SIGKILL
                break
            time.sleep(0.02)
        out, err = (self._read(self.files[name]) for name in ("stdout", "stderr"))
        return subprocess.CompletedProcess(self.args, code, out, err)

    @staticmethod
    def _read(path: Path) -> str:
        """What the program wrote there ("" if it died before opening the file)."""
        try:
            return path.read_text(errors="replace")
        except FileNotFoundError:
            return ""


class ForkServer:
    """A process that imported TensorFlow once and forks a child per program run."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = dict(env)
        self.folder = Path(tempfile.mkdtemp(prefix="autosig-forks-"))
        self.socket = self.folder / "launch.sock"
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--listen", str(self.socket)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        assert self.proc.stdout is not None
        ready = self.proc.stdout.readline()
        if not ready.startswith('{"ready"'):
            raise RuntimeError(f"the TensorFlow fork server did not start: {ready!r}")
        self.count = 0

    def launcher(self) -> list[str]:
        """A ``python`` (argv) whose ``SCRIPT ARGS...`` or ``-m MODULE ARGS...`` run as a
        fork of this server, for a command autosig runs: give autosig ``launch_env``."""
        return [sys.executable, "-E", "-S", str(LAUNCHER)]

    def launch_env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with this server's socket, which ``launcher()`` connects to."""
        return {**env, ENV_SOCKET: str(self.socket)}

    def start(self, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> ForkedRun:
        """Start ``python SCRIPT ARGS...`` (``args`` without the interpreter) in ``cwd``."""
        self.count += 1
        base = self.folder / str(self.count)
        files = {name: Path(f"{base}.{name}") for name in ("stdout", "stderr", "status")}
        tmp = self.folder / "tmp"  # a program killed here leaves its temporary files in it
        tmp.mkdir(exist_ok=True)
        request = {
            "argv": args,
            "cwd": str(cwd),
            "env": {**(self.env if env is None else env), "TMPDIR": str(tmp)},
            **{name: str(path) for name, path in files.items()},
        }
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        return ForkedRun([sys.executable, *args], int(answer["pid"]), files)

    def run(
        self, args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return self.start(args, cwd, env).wait(timeout)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)
