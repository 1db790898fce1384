"""The knobs of inference, apart so callers (fix, verify) can build them cheaply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from autosig.errors import AutosigError
from autosig.supertype import RELAX_POLICIES


@dataclass
class InferOptions:
    """How inference relaxes shapes and which parameters it must keep as Python values."""

    relax: str = "none"
    """Shape policy: none (keep constant dims), batch (free dim 0), all (free every dim)."""
    overrides: Callable[[str, str, str | None], str] | None = None
    """(path, qualname, param|None) -> relax policy; e.g. ``Config.relax_for``."""
    force_python: frozenset[tuple[str, str, str]] = frozenset()
    """(path, qualname, param) never tensorized (the verifier's fallback)."""

    def relax_for(self, path: str, qualname: str, param: str | None) -> str:
        policy = self.overrides(path, qualname, param) if self.overrides else self.relax
        if policy not in RELAX_POLICIES:
            raise AutosigError(
                f"unknown relax policy {policy!r} for {qualname} "
                f"(expected one of: {', '.join(RELAX_POLICIES)})",
                path or None,
            )
        return policy
