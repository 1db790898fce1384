"""``python`` for the commands autosig runs in the golden tests: the program runs as a
fork of the worker's TensorFlow import (``tests/tf_fork_server.py``), not as a new
process that imports TensorFlow again (about 3.5 s of CPU each time).

``autosig profile -- python -E -S tests/tf_fork_python.py driver.py`` runs this
launcher; it sends its argv, cwd and environment (the recorder's bootstrap on
``$PYTHONPATH``, verify's config ...) with its stdin, stdout and stderr to the fork
server at ``$AUTOSIG_TEST_FORK_SOCKET``, relays the stop signals autosig sends it to the
forked program, and ends as the program ends (its exit status, or the signal that
killed it). ``-E -S``: the launcher itself runs no ``sitecustomize`` (it never records,
and verify counts no status of its own). Standard library only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

ENV_SOCKET = "AUTOSIG_TEST_FORK_SOCKET"
RELAYED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def main() -> None:
    child: list[int] = []  # the program's pid, once the server answered
    early: list[int] = []  # signals that came before it

    def relay(signum: int, frame: object) -> None:
        if not child:
            early.append(signum)
            return
        try:
            os.kill(child[0], signum)
        except ProcessLookupError:
            pass

    for signum in RELAYED:  # before the fork exists: no signal may end the launcher alone
        signal.signal(signum, relay)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    conn.connect(os.environ[ENV_SOCKET])
    request = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    answer = conn.recv(1 << 16)
    if not answer:
        sys.exit("tf_fork_python: the fork server did not start the program")
    child.append(json.loads(answer)["pid"])
    for signum in early:
        relay(signum, None)
    ended = conn.recv(1 << 16)  # retried after a relayed signal (PEP 475)
    code = json.loads(ended)["exit"] if ended else -signal.SIGKILL
    if code < 0:  # killed by a signal: end the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


if __name__ == "__main__":
    main()
