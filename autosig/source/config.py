"""``[tool.autosig]`` settings: found like ruff finds its config, validated strictly.

The nearest ``autosig.toml`` or ``pyproject.toml`` with a ``[tool.autosig]`` table above
the first path wins (``--config FILE`` overrides the search). A typo in a key or a bad
value is an error naming the file and the key, never silently ignored: a misspelt
``ignore`` that quietly did nothing would be worse than no config at all.

Paths in ``per-path-ignores`` and ``functions`` are relative to the config file's
directory (``Config.root``).
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from autosig.errors import AutosigError
from autosig.source.codes import expand_codes
from autosig.source.files import DEFAULT_MAX_FILE_SIZE, parse_size

T = TypeVar("T")

RELAX_CHOICES = ("auto", "none", "batch", "all")
"""Shape policy: free constant dims only where proven safe (auto), keep them (none), free the
leading dim (batch), free all (all)."""

CODE_PATTERN = re.compile(r"^(ALL|AS[0-9]{0,3})$")
"""A rule code or a prefix of one (``AS101``, ``AS1``, ``AS``) or ``ALL``."""

CONFIG_NAMES = ("autosig.toml", "pyproject.toml")
"""Looked for in this order in each directory, from the first path upwards."""

_TOP_KEYS = (
    "select",
    "ignore",
    "exclude",
    "per-path-ignores",
    "unsafe-fixes",
    "relax",
    "jobs",
    "functions",
    "max-file-size",
    "max-traces",
    "cache-dir",
)
_FUNCTION_KEYS = ("relax", "params")
_PARAM_KEYS = ("relax",)


@dataclass(frozen=True)
class FunctionOverride:
    """Inference overrides for one function: its shape policy and per-parameter ones."""

    relax: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    """Parameter name -> relax policy."""


@dataclass(frozen=True)
class Config:
    """Validated settings. ``select is None`` means every rule's default."""

    root: Path
    """Directory of the config file (the current directory when there is none)."""
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_path_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    unsafe_fixes: bool = False
    relax: str = "auto"
    jobs: int | None = None
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    """Files over this many bytes are skipped with a warning (0: no limit)."""
    function_overrides: Mapping[str, FunctionOverride] = field(default_factory=dict)
    max_traces: int | None = None
    """The retrace budget of every tf.function in the tests (``pytest``), None: no budget."""
    max_traces_per_function: Mapping[str, int] = field(default_factory=dict)
    """``"<path>::<qualname>"`` (globs allowed in the path) -> that function's budget."""
    cache_dir: Path | None = None
    """Where the result cache lives (None: the default, see ``source.cache``)."""
    source: Path | None = None
    """The file these settings came from (None: built-in defaults)."""

    def relative(self, path: Path | str) -> str:
        """``path`` relative to ``root`` in POSIX form (unchanged if outside root)."""
        p = Path(path)
        absolute = p if p.is_absolute() else Path.cwd() / p
        absolute = Path(os.path.normpath(absolute))
        try:
            return absolute.relative_to(self.root).as_posix()
        except ValueError:
            return p.as_posix()

    def rules_for(self, path: Path | str) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
        """(select, ignore) for one file: the global lists plus its per-path ignores."""
        relative = self.relative(path)
        extra: list[str] = []
        for pattern, codes in self.per_path_ignores.items():
            if path_matches(relative, pattern):
                extra.extend(c for c in codes if c not in extra)
        ignore = tuple(self.ignore) + tuple(c for c in extra if c not in self.ignore)
        return self.select, ignore

    def is_excluded(self, path: Path | str) -> bool:
        """Whether a config ``exclude`` glob matches ``path`` relative to ``root``."""
        if not self.exclude:
            return False
        relative = self.relative(path)
        return any(path_matches(relative, pattern) for pattern in self.exclude)

    def override_for(self, path: Path | str, qualname: str) -> FunctionOverride | None:
        """The ``functions."<path>::<qualname>"`` entry for a function, if any.

        An exact path wins over a glob; among globs the first listed wins.
        """
        return self._per_function(self.function_overrides, path, qualname)

    def max_traces_for(self, path: Path | str, qualname: str) -> int | None:
        """The trace budget of one function: its own entry (an exact path wins over a
        glob, then the first glob listed), else ``max-traces``' default, else None."""
        budget = self._per_function(self.max_traces_per_function, path, qualname)
        return self.max_traces if budget is None else budget

    def _per_function(self, table: Mapping[str, T], path: Path | str, qualname: str) -> T | None:
        """A ``"<path>::<qualname>"`` table's entry for one function: the exact path,
        else the first glob listed that matches."""
        relative = self.relative(path)
        exact = table.get(f"{relative}::{qualname}")
        if exact is not None:
            return exact
        for key, value in table.items():
            pattern, _, name = key.rpartition("::")
            if name == qualname and path_matches(relative, pattern):
                return value
        return None

    def relax_for(
        self,
        path: Path | str,
        qualname: str,
        param: str | None = None,
        default: str | None = None,
    ) -> str:
        """Shape policy for one parameter: parameter override > function override >
        ``default`` (``fix --relax``) > the config's own."""
        override = self.override_for(path, qualname)
        if override is not None:
            if param is not None and param in override.params:
                return override.params[param]
            if override.relax is not None:
                return override.relax
        return default if default is not None else self.relax


def path_matches(relative: str, pattern: str) -> bool:
    """Glob match like ruff's per-file-ignores: ``*`` crosses ``/``; ``**/`` may be empty.

    A pattern without ``/`` also matches the file name alone (``test_*.py``).
    """
    pattern = pattern.strip().removeprefix("./").rstrip("/")
    candidates = {pattern}
    while any("**/" in c for c in candidates):
        candidates = {c.replace("**/", "", 1) for c in candidates} | {
            c.replace("**/", "*/", 1) for c in candidates
        }
    targets = [relative]
    if "/" not in pattern:
        targets.append(relative.rsplit("/", 1)[-1])
    for candidate in candidates:
        for target in targets:
            if fnmatch.fnmatchcase(target, candidate):
                return True
            # A directory pattern covers everything below it.
            if fnmatch.fnmatchcase(target, candidate + "/*"):
                return True
    return False


def find_config_file(start: Path) -> Path | None:
    """The nearest autosig.toml, or pyproject.toml with ``[tool.autosig]``, at or above start."""
    start = Path(os.path.abspath(start))
    directory = start if start.is_dir() else start.parent
    for candidate_dir in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            candidate = candidate_dir / name
            if not candidate.is_file():
                continue
            if name == "autosig.toml":
                return candidate
            table = _read_toml(candidate)
            if isinstance(table.get("tool"), dict) and "autosig" in table["tool"]:
                return candidate
    return None


def load_config(paths: Sequence[Path | str], config_file: Path | str | None = None) -> Config:
    """Settings for a run over ``paths``; defaults when no config file is found."""
    if config_file is not None:
        source = Path(config_file)
        if not source.is_file():
            raise AutosigError("config file not found", str(source))
    else:
        start = Path(paths[0]) if paths else Path.cwd()
        source = find_config_file(start)
        if source is None:
            return Config(root=Path.cwd())
    table = _read_toml(source)
    if source.name == "pyproject.toml":
        tool = table.get("tool", {})
        settings = tool.get("autosig", {}) if isinstance(tool, dict) else {}
        prefix = "tool.autosig."
    else:
        settings, prefix = table, ""
    if not isinstance(settings, dict):
        raise AutosigError(f"'{prefix.rstrip('.')}' must be a table", str(source))
    return _parse(settings, source, prefix)


def _read_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):  # imported here: most runs find no config file
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise AutosigError(f"invalid TOML: {exc}", str(path)) from None
    except OSError as exc:
        raise AutosigError(f"cannot read config: {exc.strerror or exc}", str(path)) from None


def _parse(settings: dict[str, Any], source: Path, prefix: str) -> Config:
    where = str(source)

    def fail(key: str, problem: str) -> AutosigError:
        return AutosigError(f"'{prefix}{key}': {problem}", where)

    _reject_unknown(settings, _TOP_KEYS, prefix, where)

    def codes(key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(key, 'expected a list of rule codes, e.g. ["AS101", "AS2"]')
        for code in value:
            if not CODE_PATTERN.match(code.strip().upper()):
                raise fail(key, f"'{code}' is not a rule code (like AS101) or prefix (like AS1)")
            try:
                expand_codes([code])
            except AutosigError as exc:
                raise fail(key, exc.message) from None
        return tuple(v.strip().upper() for v in value)

    def globs(key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise fail(key, 'expected a list of glob patterns, e.g. ["tests/fixtures/*"]')
        return tuple(value)

    def relax(key: str, value: Any) -> str:
        if value not in RELAX_CHOICES:
            raise fail(key, f"expected one of {', '.join(map(repr, RELAX_CHOICES))}, got {value!r}")
        return str(value)

    select = codes("select", settings["select"]) if "select" in settings else None
    ignore = codes("ignore", settings.get("ignore", []))
    exclude = globs("exclude", settings.get("exclude", []))

    per_path: dict[str, tuple[str, ...]] = {}
    raw_per_path = settings.get("per-path-ignores", {})
    if not isinstance(raw_per_path, dict):
        raise fail(
            "per-path-ignores", 'expected a table of glob = [codes], e.g. "tests/*" = ["AS101"]'
        )
    for pattern, value in raw_per_path.items():
        per_path[pattern] = codes(f'per-path-ignores."{pattern}"', value)

    unsafe = settings.get("unsafe-fixes", False)
    if not isinstance(unsafe, bool):
        raise fail("unsafe-fixes", f"expected true or false, got {unsafe!r}")

    jobs = settings.get("jobs")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise fail("jobs", f"expected a positive integer, got {jobs!r}")

    try:
        max_file_size = parse_size(settings.get("max-file-size", DEFAULT_MAX_FILE_SIZE))
    except ValueError as exc:
        raise fail("max-file-size", f"{exc} (0 = no limit)") from None

    cache_dir = settings.get("cache-dir")
    if cache_dir is not None and (not isinstance(cache_dir, str) or not cache_dir):
        raise fail("cache-dir", f"expected a folder name, got {cache_dir!r}")

    overrides: dict[str, FunctionOverride] = {}
    raw_functions = settings.get("functions", {})
    if not isinstance(raw_functions, dict):
        raise fail("functions", 'expected a table of "<path>::<qualname>" = { relax = ... }')
    for key, entry in raw_functions.items():
        name = f'functions."{key}"'
        path_part, sep, qualname = key.rpartition("::")
        if not sep or not path_part or not qualname:
            raise fail(
                name,
                'expected a key of the form "<path>::<qualname>", e.g. "src/train.py::Model.step"',
            )
        if not isinstance(entry, dict):
            raise fail(name, "expected a table with 'relax' and/or 'params'")
        _reject_unknown(entry, _FUNCTION_KEYS, f"{prefix}{name}.", where)
        params: dict[str, str] = {}
        raw_params = entry.get("params", {})
        if not isinstance(raw_params, dict):
            raise fail(f"{name}.params", "expected a table of <parameter> = { relax = ... }")
        for param, param_entry in raw_params.items():
            param_name = f"{name}.params.{param}"
            if not isinstance(param_entry, dict):
                raise fail(param_name, "expected a table with 'relax'")
            _reject_unknown(param_entry, _PARAM_KEYS, f"{prefix}{param_name}.", where)
            if "relax" in param_entry:
                params[param] = relax(f"{param_name}.relax", param_entry["relax"])
        function_relax = relax(f"{name}.relax", entry["relax"]) if "relax" in entry else None
        normalised = f"{path_part.removeprefix('./')}::{qualname}"
        overrides[normalised] = FunctionOverride(relax=function_relax, params=params)

    max_traces, per_function = _max_traces(settings.get("max-traces"), fail)

    root = Path(os.path.abspath(source.parent))
    return Config(
        root=root,
        select=select,
        ignore=ignore,
        exclude=exclude,
        per_path_ignores=per_path,
        unsafe_fixes=unsafe,
        relax=relax("relax", settings.get("relax", "auto")),
        jobs=jobs,
        max_file_size=max_file_size,
        function_overrides=overrides,
        max_traces=max_traces,
        max_traces_per_function=per_function,
        cache_dir=root / cache_dir if cache_dir is not None else None,
        source=source,
    )


def _max_traces(value: Any, fail: Any) -> tuple[int | None, dict[str, int]]:
    """``max-traces = 2``, or a table: ``default = 2`` and ``"<path>::<qualname>" = 3``."""

    def budget(key: str, raw: Any) -> int:
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
            raise fail(key, f"expected a positive number of traces, got {raw!r}")
        return raw

    if value is None:
        return None, {}
    if not isinstance(value, dict):
        return budget("max-traces", value), {}
    default = budget("max-traces.default", value["default"]) if "default" in value else None
    per_function: dict[str, int] = {}
    for key, raw in value.items():
        if key == "default":
            continue
        path_part, sep, qualname = key.rpartition("::")
        if not sep or not path_part or not qualname:
            raise fail(
                f'max-traces."{key}"',
                'expected "default" or a key "<path>::<qualname>", e.g. "src/train.py::Model.step"',
            )
        per_function[f"{path_part.removeprefix('./')}::{qualname}"] = budget(
            f'max-traces."{key}"', raw
        )
    return default, per_function


def _reject_unknown(
    table: Mapping[str, Any], known: Sequence[str], prefix: str, where: str
) -> None:
    for key in table:
        if key not in known:
            hint = _close_match(key, known)
            raise AutosigError(
                f"unknown key '{prefix}{key}'{hint} (known: {', '.join(known)})", where
            )


def _close_match(key: str, known: Sequence[str]) -> str:
    import difflib

    match = difflib.get_close_matches(key.replace("_", "-"), known, n=1)
    return f"; did you mean '{match[0]}'?" if match else ""
