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

Launched commands (``python tests/tf_fork_server.py --listen SOCKET``): a command that
autosig runs (``autosig profile -- python tests/tf_fork_python.py driver.py``) connects
to the unix socket SOCKET (``tests/tf_fork_python.py``) and sends its argv, cwd and
environment with its stdin, stdout and stderr (``SCM_RIGHTS``). The server forks a child
that starts as ``python`` starts under that environment: ``sys.argv``, ``sys.path``
from ``$PYTHONPATH``, the ``sitecustomize`` found there (autosig's recorder bootstrap),
then the script or ``-m`` module. The server answers ``{"pid": N}``, and
``{"exit": STATUS}`` (negative: killed by that signal) when the child ends; when the
connection closes first (the launcher was killed), it kills the child.

Used through ``ForkServer`` in ``tests/fork_runs.py``; ``python tests/tf_fork_server.py``
is the server.
"""

from __future__ import annotations

import json
import os
import sys

SERVER_PYTHONPATH = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
"""The server's own ``$PYTHONPATH`` (a launched child takes its request's instead)."""


def _child(request: dict, stdio: list[int] | None = None) -> None:
    """Run the request's program in this fork; ``stdio``: the launcher's fds 0, 1, 2
    (a launched command), else the request's output files (a ``ForkServer.start``)."""
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
        if stdio is None:
            out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            null = os.open(os.devnull, os.O_RDONLY)
            stdio = [null, out, err]
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        for fd in set(stdio) - {0, 1, 2}:
            os.close(fd)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        argv = list(request["argv"])
        module = argv[1] if argv[:1] == ["-m"] and len(argv) > 1 else None
        sys.argv = [module or argv[0], *argv[2 if module else 1 :]]
        if request.get("launched"):
            _start_like_python(request["env"])
        sys.path[0] = os.getcwd() if module else os.path.dirname(os.path.abspath(argv[0]))
        if module:
            sys.argv[0] = "-m"  # as Python shows it until runpy finds the module
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:  # an absolute __file__ and code file names, as `python script.py` gives
            runpy.run_path(os.path.abspath(argv[0]), run_name="__main__")
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
        status = request.get("status")
        if status:
            with open(status + ".tmp", "w") as handle:
                handle.write(str(code))
            os.replace(status + ".tmp", status)
        os._exit(code)


def _start_like_python(env: dict[str, str]) -> None:
    """What ``python`` does at start-up under ``env`` that the server's start did not:
    ``sys.path`` from its ``$PYTHONPATH`` and the ``sitecustomize`` found there (autosig
    profile's recorder bootstrap, which starts the recorder at once since TensorFlow is
    imported already)."""
    import importlib.machinery
    import importlib.util

    wanted = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    rest = [p for p in sys.path[1:] if p not in SERVER_PYTHONPATH and p not in wanted]
    sys.path[:] = [sys.path[0], *wanted, *rest]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", wanted)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def serve(listen: str | None = None) -> None:
    import selectors
    import socket

    import numpy  # noqa: F401 - imported once, here, for every child
    import tensorflow  # noqa: F401

    try:
        import keras  # noqa: F401
    except ImportError:  # pragma: no cover - Keras comes with TensorFlow 2.16+
        pass
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ, "stdin")
    listener = None
    if listen:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(listen)
        listener.listen(16)
        selector.register(listener, selectors.EVENT_READ, "accept")
    sys.stdout.write(json.dumps({"ready": os.getpid()}) + "\n")
    sys.stdout.flush()
    children: set[int] = set()
    launched: dict[int, tuple[socket.socket, int]] = {}  # pid -> (connection, pidfd)
    pending = b""
    open_stdin = True
    while open_stdin or launched:
        for key, _ in selector.select():
            what = key.data
            if what == "stdin":
                chunk = os.read(0, 1 << 16)
                if not chunk:
                    open_stdin = False
                    selector.unregister(0)
                    if listener is not None:
                        selector.unregister(listener)
                        listener.close()
                        listener = None
                    continue
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    _reap(children, block=False)
                    if line.strip():
                        pid = _fork(json.loads(line), None, selector, launched, listener)
                        children.add(pid)
                        sys.stdout.write(json.dumps({"pid": pid}) + "\n")
                        sys.stdout.flush()
            elif what == "accept":
                assert listener is not None
                conn, _ = listener.accept()
                _launch(conn, selector, launched, listener)
            else:
                kind, pid = what
                _launch_event(kind, pid, selector, launched)
    _reap(children, block=True)


def _fork(  # noqa: ANN001 - the server's selector, launches and listener
    request: dict, stdio: list[int] | None, selector, launched, listener, own=None
) -> int:
    """Fork a child running ``request``; ``own``: the launch's connection (not the child's)."""
    pid = os.fork()
    if pid == 0:
        # the child keeps nothing of the server's: its listener, the launches' connections
        # (its own too: its launcher must see the server's end close if the server dies)
        for conn, pidfd in launched.values():
            conn.close()
            os.close(pidfd)
        if own is not None:
            own.close()
        if listener is not None:
            listener.close()
        selector.close()
        _child(request, stdio)
    return pid


def _launch(conn, selector, launched, listener) -> None:  # noqa: ANN001
    """A launched command: fork it with the launcher's stdio; tell the launcher its pid."""
    import socket

    try:
        data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        request = {**json.loads(data), "launched": True}
    except (OSError, ValueError):
        conn.close()
        return
    try:
        pid = _fork(request, list(fds), selector, launched, listener, conn)
    finally:
        for fd in fds:
            os.close(fd)
    pidfd = os.pidfd_open(pid)
    launched[pid] = (conn, pidfd)
    selector.register(pidfd, 1, ("ended", pid))
    selector.register(conn, 1, ("gone", pid))
    try:
        conn.send(json.dumps({"pid": pid}).encode())
    except OSError:
        _launch_event("gone", pid, selector, launched)


def _launch_event(kind: str, pid: int, selector, launched) -> None:  # noqa: ANN001
    """``ended``: the child exited, tell its launcher how; ``gone``: the launcher went
    away first (killed), so kill the child."""
    import contextlib
    import signal

    if pid not in launched:  # both ends were ready in one select: handled already
        return
    if kind == "gone":
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    conn, pidfd = launched.pop(pid)
    _, status = os.waitpid(pid, 0)
    selector.unregister(pidfd)
    selector.unregister(conn)
    os.close(pidfd)
    with contextlib.suppress(OSError):
        conn.send(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())
    conn.close()


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
    serve(sys.argv[2] if sys.argv[1:2] == ["--listen"] else None)
