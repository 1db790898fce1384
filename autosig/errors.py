"""User-facing errors: one clear line naming the file, exit code 2, no traceback."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class AutosigError(Exception):
    """An error caused by the user's input (bad file, bad profile, bad option).

    The CLI prints ``str(err)`` on one line and exits with code 2.
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)

    def __reduce__(self) -> tuple[type[AutosigError], tuple[str, str | None]]:
        """Keep ``message`` and ``path`` apart through pickling (worker processes)."""
        return (type(self), (self.message, self.path))


class Interrupted(KeyboardInterrupt):
    """autosig was asked to stop (Ctrl-C, SIGTERM) while it ran a command for the user.

    The command's process group was stopped before this is raised; the CLI exits with
    ``exit_code``, 128+N for signal N (130 for Ctrl-C), as a shell reports it.
    """

    def __init__(self, signum: int = 2) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum
