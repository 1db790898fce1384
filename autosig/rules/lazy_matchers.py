"""``libcst.matchers``, imported on first use.

Importing it costs more than the rest of libcst together (0.2-0.5 s: thousands of
generated matcher classes), and most files ``autosig check`` reads never reach a rule
branch that needs one. Rules write ``m.Call(...)`` / ``m.findall(...)`` as usual.
"""

from __future__ import annotations

import importlib
from typing import Any


class _LazyMatchers:
    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("libcst.matchers"), name)


m: Any = _LazyMatchers()
