"""The knobs of inference, apart so callers (fix, verify) can build them cheaply."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autosig.errors import AutosigError
from autosig.supertype import RELAX_POLICIES

if TYPE_CHECKING:
    from autosig.config import Config


@dataclass
class InferOptions:
    """How inference relaxes shapes and which parameters it must keep as Python values."""

    relax: str = "auto"
    """Shape policy: auto (free a constant dim where no static read of it is found), none
    (keep constant dims), batch (free dim 0), all (free every dim)."""
    overrides: Callable[[str, str, str | None], str] | None = None
    """(path, qualname, param|None) -> relax policy; e.g. ``Config.relax_for``."""
    force_python: frozenset[tuple[str, str, str]] = frozenset()
    """(path, qualname, param) never tensorized (the verifier's fallback)."""
    root: Path | None = None
    """The profile's project root: where the shape-use analysis finds imported modules."""

    @classmethod
    def from_config(
        cls,
        config: Config,
        root: Path,
        relax: str | None = None,
        force_python: Iterable[tuple[str, str, str]] = (),
    ) -> InferOptions:
        """The shape policy ``fix``, ``explain`` and ``verify`` all plan with.

        A parameter's or function's ``[tool.autosig.functions]`` override, else
        ``relax`` (``fix --relax``), else the config's ``relax``. Profile paths are
        relative to ``root`` (the profile's project root), whatever the working
        directory.
        """
        default = (relax or config.relax).lower()

        def overrides(path: str, qualname: str, param: str | None) -> str:
            absolute = Path(path) if Path(path).is_absolute() else root / path
            return config.relax_for(absolute, qualname, param, default=default)

        return cls(
            relax=default, overrides=overrides, force_python=frozenset(force_python), root=root
        )

    def relax_for(self, path: str, qualname: str, param: str | None) -> str:
        policy = self.overrides(path, qualname, param) if self.overrides else self.relax
        if policy not in RELAX_POLICIES:
            raise AutosigError(
                f"unknown relax policy {policy!r} for {qualname} "
                f"(expected one of: {', '.join(RELAX_POLICIES)})",
                path or None,
            )
        return policy
