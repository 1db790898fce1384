"""Run Python programs in forks of one process that imported TensorFlow (tests only).

Importing TensorFlow costs about 3.5 s of CPU per process; the golden tests run three
plain driver programs per case (the hand fix, the original and the rewritten module on
calls outside the profile). This server imports TensorFlow, NumPy and Keras once and
forks a child per program: the child starts with nothing of TensorFlow's runtime set
up (the server never runs an op), chdirs, takes the request's environment and argv,
puts the script's folder first on ``sys.path`` as ``python script.py`` does, runs it
as ``__main__`` and exits with its status after its exit handlers (AutoGraph removes its
temporary files then). What the program prints goes to the files the request names.

Protocol, one JSON object per line: the client writes ``{"argv": [...], "cwd": ...,
"env": {...}, "stdout": path, "stderr": path, "status": path}`` on the server's stdin;
the server answers ``{"pid": N}`` on its stdout; the child writes its exit status to
``status`` when it ends (an absent file after the pid is gone: it was killed). The
server reaps finished children before each request and waits for all of them when its
stdin closes, so their CPU time counts as the server's children's (``time`` on the
test run sees it, as it sees subprocesses'); it never runs a thread of its own, so
forking it stays safe.

Used through ``ForkServer`` in ``tests/fork_runs.py``; ``python tests/tf_fork_server.py``
is the server.
"""

from __future__ import annotations

import json
import os
import sys


def _child(request: dict) -> None:
    import atexit
    import runpy
    import traceback

    code = 0
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import tempfile

        tempfile.tempdir = None  # found again from the request's TMPDIR
        out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(err, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        script, *args = request["argv"]
        sys.argv = [script, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - reported like an uncaught exception
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001, S110 - a closed stream has nothing to flush
                pass
        status = request["status"]
        with open(status + ".tmp", "w") as handle:
            handle.write(str(code))
        os.replace(status + ".tmp", status)
        os._exit(code)


def serve() -> None:
    import numpy  # noqa: F401 - imported once, here, for every child
    import tensorflow  # noqa: F401

    try:
        import keras  # noqa: F401
    except ImportError:  # pragma: no cover - Keras comes with TensorFlow 2.16+
        pass
    sys.stdout.write(json.dumps({"ready": os.getpid()}) + "\n")
    sys.stdout.flush()
    children: set[int] = set()
    for line in sys.stdin:
        _reap(children, block=False)
        if not line.strip():
            continue
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        children.add(pid)
        sys.stdout.write(json.dumps({"pid": pid}) + "\n")
        sys.stdout.flush()
    _reap(children, block=True)


def _reap(children: set[int], block: bool) -> None:
    """Collect finished children (all of them, waiting, with ``block``)."""
    for pid in list(children):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            children.discard(pid)


if __name__ == "__main__":
    serve()
