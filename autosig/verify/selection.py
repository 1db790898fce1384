"""Which verify findings (AS301, AS302) count: ``--select``/``--ignore``, config, comments.

A verdict that is ignored stays in the text and json reports, marked with why, but
is not a finding (sarif, github) and does not make ``autosig verify`` exit 1.

The config's ``select`` applies to verify's codes only when it names one of them
(``AS3``, ``AS301``, ``AS``, ``ALL``): a ``select = ["AS1", "AS2"]`` written for
``check`` and ``fix`` must not silently turn every verify failure into a pass.
``--select`` on the command line must name a verify code. Static code: no TensorFlow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autosig.errors import AutosigError
from autosig.source.codes import VERIFY_CODES, expand_codes
from autosig.source.config import Config, load_config
from autosig.source.discover import Source
from autosig.source.suppress import Suppressions

VERIFY_CODE_NAMES: frozenset[str] = frozenset(entry.code for entry in VERIFY_CODES)


@dataclass
class VerifySelection:
    """Decides, per function and code, whether a verify finding is reported."""

    config: Config
    root: Path
    """The profile's project root: verdict paths are relative to it."""
    select: tuple[str, ...] | None = None
    """``--select`` (None: not given)."""
    ignore: tuple[str, ...] = ()
    """``--ignore``, added to the config's."""
    sources: Mapping[str, str] = field(default_factory=dict)
    """Relative path -> original source text, for ``# autosig: ignore`` comments."""
    _lines: dict[tuple[str, str, int], set[int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        check_select(self.select)

    def why_ignored(self, path: str, qualname: str, line: int, code: str) -> str | None:
        """None when the finding is reported, else a short reason ("ignored by --ignore")."""
        config_select, config_ignore = self.config.rules_for(self.root / path)
        if self.select is not None:
            if code not in expand_codes(self.select):
                return "not in --select"
        elif config_select is not None:
            chosen = expand_codes(config_select)
            if chosen & VERIFY_CODE_NAMES and code not in chosen:
                return f"not in the config's select ({self._config_name()})"
        if code in expand_codes(self.ignore):
            return "ignored by --ignore"
        if code in expand_codes(self.config.ignore):
            return f"ignored by the config's ignore ({self._config_name()})"
        if code in expand_codes(config_ignore):
            return f"ignored by the config's per-path-ignores ({self._config_name()})"
        comment = self._suppressing_line(path, qualname, line, code)
        if comment is not None:
            return f"suppressed by '# autosig: ignore' on line {comment}"
        return None

    def _config_name(self) -> str:
        return str(self.config.source) if self.config.source is not None else "config"

    def _suppressing_line(self, path: str, qualname: str, line: int, code: str) -> int | None:
        text = self.sources.get(path)
        if text is None or "autosig" not in text:
            return None

        try:
            suppressions = Suppressions.from_text(text)
        except Exception:  # noqa: BLE001 - an unreadable comment must not hide a verdict
            return None
        key = (path, qualname, line)
        if key not in self._lines:
            self._lines[key] = function_lines(text, path, qualname, line)
        for candidate in sorted(self._lines[key]):
            if suppressions.is_suppressed(code, [candidate]):
                return candidate
        return None


def check_select(select: Iterable[str] | None) -> None:
    """AutosigError when ``--select`` names no verify code (it would report nothing)."""
    if select is None:
        return
    codes = tuple(select)
    if not expand_codes(codes) & VERIFY_CODE_NAMES:
        raise AutosigError(
            f"--select {','.join(codes)} names no verify code "
            f"({', '.join(sorted(VERIFY_CODE_NAMES))}); verify reports only those"
        )


def function_lines(text: str, path: str, qualname: str, line: int) -> set[int]:
    """Lines where an ignore comment covers a whole function: def, decorators, the call.

    ``line`` is the recorded line; the site of that name nearest to it is used (the
    source may have moved a little). Only ``line`` when the source does not parse.
    """
    source = Source.parse(text, path)
    matches = [s for s in source.sites if s.site.qualname == qualname]
    if source.wrapper is None or not matches:
        return {line}
    site = min(matches, key=lambda s: abs(s.site.line - line))
    return {line, *source.site_lines(site)}


def verify_selection(
    root: Path,
    sources: Mapping[str, str],
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
) -> VerifySelection:
    """The selection for a verify run: options + the config found from ``root``.

    The same config the rewrite under test is built with (``candidate.default_rules_for``).
    """
    config = load_config([root])
    return VerifySelection(
        config=config,
        root=root,
        select=None if select is None else tuple(select),
        ignore=tuple(ignore or ()),
        sources=dict(sources),
    )
