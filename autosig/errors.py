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
