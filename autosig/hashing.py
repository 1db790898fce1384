"""One definition of "the function's source" shared by the recorder and the rewriter.

The hash covers the lines from the ``def`` keyword (decorators excluded, so adding an
``input_signature`` does not make a profile stale) to the end of the body, dedented,
trailing white space and blank lines dropped, newlines normalised. The recorder feeds
it ``inspect.getsourcelines`` output; the static side feeds it the same line range
read from the file.
"""

from __future__ import annotations

import hashlib
import textwrap
from collections.abc import Sequence


def _strip_decorators(lines: Sequence[str]) -> list[str]:
    """Drop leading decorator lines (and anything before the def/lambda line)."""
    out = list(lines)
    for index, line in enumerate(out):
        stripped = line.lstrip()
        if stripped.startswith(("def ", "async def ")) or "lambda" in stripped:
            return out[index:]
    return out


def function_source_hash(lines: Sequence[str]) -> str:
    """SHA-256 of a function's normalised source lines (see module docstring)."""
    body = _strip_decorators(lines)
    text = textwrap.dedent("".join(line.rstrip("\r\n") + "\n" for line in body))
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest()


def source_hash_from_file_text(text: str, first_line: int, last_line: int) -> str:
    """Hash of lines ``first_line..last_line`` (1-based, inclusive) of ``text``."""
    lines = text.splitlines(keepends=True)[first_line - 1 : last_line]
    return function_source_hash(lines)
