"""The current text of a profiled function's file, parsed once for every function in it.

Planning needs the function's node (to check the source hash, the decorator and how the
code uses its parameters) and the lines a suppression comment may sit on; a file that
no longer parses is kept with its error so each of its functions can say why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from libcst.metadata import MetadataWrapper, PositionProvider

from autosig.discover import FunctionSite, discover_text
from autosig.errors import AutosigError


@dataclass
class Source:
    """A parsed file: its text, metadata wrapper and tf.function sites (or why not)."""

    text: str
    wrapper: MetadataWrapper | None
    sites: list[FunctionSite]
    error: str | None = None

    @classmethod
    def parse(cls, text: str, path: str) -> Source:
        try:
            wrapper, sites = discover_text(text, path)
        except AutosigError as exc:
            return cls(text, None, [], exc.message)
        return cls(text, wrapper, sites)

    def locate(self, qualname: str, line: int) -> FunctionSite | None:
        """The tf.function ``qualname`` nearest to ``line`` (the profile's line may be old)."""
        matches = [s for s in self.sites if s.function is not None and s.site.qualname == qualname]
        if not matches:
            return None
        return min(matches, key=lambda s: abs(s.site.line - line))

    def lines_of(self, site: FunctionSite) -> tuple[int, int]:
        """First and last line of the function (def keyword through the end of the body)."""
        assert self.wrapper is not None and site.function is not None
        positions = self.wrapper.resolve(PositionProvider)
        where = positions[site.function]
        return where.start.line, where.end.line

    def site_lines(self, site: FunctionSite) -> list[int]:
        """Lines where a suppression comment for this function counts."""
        assert self.wrapper is not None
        positions = self.wrapper.resolve(PositionProvider)
        lines = {site.site.line}
        function = site.function
        nodes: list[Any] = []
        if function is not None and hasattr(function, "decorators"):
            nodes.extend(function.decorators)
        if site.call is not None:
            nodes.append(site.call)
        for node in nodes:
            where = positions.get(node)
            if where is not None:
                lines.update(range(where.start.line, where.end.line + 1))
        return sorted(lines)
