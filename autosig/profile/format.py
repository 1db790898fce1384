"""The profile file: versioned JSON, human-readable, mergeable. No TensorFlow here.

A profile holds, per tf.function, how it was really called: argument structure per
distinct call signature, call and trace counts (from TensorFlow itself), trace events
with the call that caused each, and timing. Real input samples live beside it in a
``.npz`` (``allow_pickle=False``) named like the profile with ``.npz`` for ``.json``.

Argument values are described by small JSON dicts tagged by ``kind``::

    tensor    {"kind": "tensor", "shape": [32, 17], "dtype": "float32"}
              (shape None = unknown rank, a None entry = unknown dimension)
    numpy     {"kind": "numpy", "shape": [4, 3], "dtype": "float64"}
    variable  {"kind": "variable", "shape": [], "dtype": "float32"}
    ragged    {"kind": "ragged", "shape": [8, null], "dtype": "int32",
               "ragged_rank": 1, "row_splits_dtype": "int64"}
    sparse    {"kind": "sparse", "shape": [8, 100], "dtype": "float32"}
    python    {"kind": "python", "type": "int", "value": 3}
              (type int|float|bool|str|NoneType|bytes; "value" omitted when more than
               MAX_PYTHON_VALUES distinct values were seen: "varied": true instead)
    object    {"kind": "object", "type": "keras.src.models.sequential.Sequential"}
              (+ "spec": repr of its TypeSpec for other composite tensors such as
               tf.data iterators, which TensorFlow traces by that spec;
               + "replicas": [value, ...] for tf.distribute values (PerReplica), one
               description per replica: see ``describe_distributed``;
               + "attributes": {"name": value} for a simple object whose attributes are
               all tensors or Python scalars: see ``describe_objects``)
    tuple     {"kind": "tuple", "items": [...]}
    list      {"kind": "list", "items": [...]}
    dict      {"kind": "dict", "items": {"key": ...}}      (keys are str)
    namedtuple {"kind": "namedtuple", "type": "mod.Point", "fields": ["x","y"], "items": [...]}
              (tuple/list/dict may carry "length" when longer than the items described)

Object identity is not part of a signature; how many distinct instances each parameter
saw is kept in ``FunctionRecord.object_instances`` and per trace in ``TraceEvent.new_objects``.

Where the eager calls came from is kept per call site (``FunctionRecord.call_sites``:
the first frame outside TensorFlow and autosig), so a fix can rewrite the calling code;
profiles written before call sites were recorded load with none.

Version 2 adds the probe evidence (``FunctionRecord.probe``: ``autosig/profile/evidence.py``;
``Profile.probes``: how many probes ran, how long, what the budget left out). Version 1
profiles still load, without evidence (``probe`` and ``probes`` are None).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.profile.evidence import (
    ProbeEvidence,
    ProbeStats,
    evidence_from_json,
    stats_from_json,
)
from autosig.source.files import atomic_write_bytes, mark_state_dir

FORMAT_KEY = "autosig_profile"
FORMAT_VERSION = 2
OLDEST_READABLE_VERSION = 1
"""Version 1 profiles have no probe evidence; they load with none."""
MAX_SIGNATURES = 256
"""Distinct call signatures stored per function; later new ones are only counted."""
MAX_TRACE_EVENTS = 1000
MAX_PYTHON_VALUES = 32
MAX_CALL_SITES = 64
"""Distinct call sites stored per function; calls from later new ones are only counted."""
TENSOR_KINDS = ("tensor", "numpy", "variable", "ragged", "sparse")
"""Value kinds that describe a tensor-like argument (``shape`` and ``dtype`` fields)."""
"""Distinct values of one Python scalar parameter before values are folded to 'varied'."""

Value = dict[str, Any]


@dataclass
class ParamInfo:
    """One parameter of the Python function (``self`` of a bound method excluded)."""

    name: str
    kind: str
    """inspect kind: POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD"""
    default: Value | None = None
    """Description of the default value, None when the parameter has no default."""


@dataclass
class CallSignature:
    """A distinct way the function was called: bound arguments described, and counts."""

    args: dict[str, Value]
    passed: dict[str, str]
    """parameter -> 'positional' | 'keyword' | 'default'"""
    calls: int = 0
    first_call: int = 0
    traces: int = 0
    """Traces TensorFlow made on calls with this signature."""

    def key(self) -> str:
        return json.dumps([self.args, self.passed], sort_keys=True)


@dataclass
class TraceEvent:
    """One trace: which call caused it, with which signature, and what was new."""

    call: int
    signature: int | None
    """Index into FunctionRecord.signatures, None when the signature was not stored."""
    new_objects: list[str] = field(default_factory=list)
    time_s: float = 0.0
    """Graph-building time of this trace, measured around TensorFlow's graph construction."""
    instance: int = 0
    """Which tf.function object traced (0-based, in order of first call): each object of
    a class with a tf.function method, or each tf.function(...) created again, has its own."""
    process: int = 0
    """Which recorded process traced (0-based; merged profiles number their processes)."""


@dataclass
class CallSite:
    """Where eager calls of a function came from: one call expression in the caller's code.

    ``line``/``col`` are where Python places the call (the callee expression's start;
    for ``obj.<newline>method(...)`` the method name's), ``col`` in characters, 0-based,
    None when unknown. ``scope`` is the qualified name of the code holding the call
    (``<module>`` at top level) and ``scope_line`` its first line (its first decorator's,
    as Python counts it): a call inside a function is found again after lines above the
    function moved. ``positional`` and ``keywords`` are how the first call from here
    passed its arguments (``self`` of a bound method not counted).
    """

    path: str | None
    """Path relative to the project root (posix), absolute outside it, None if unknown."""
    line: int
    calls: int = 0
    col: int | None = None
    scope: str | None = None
    scope_line: int | None = None
    positional: int = 0
    keywords: list[str] = field(default_factory=list)
    editable: bool = True
    """False for code in installed libraries (Keras' fit loop calling train_function)."""

    @property
    def key(self) -> tuple[str | None, int, int | None]:
        return (self.path, self.line, self.col)

    @property
    def where(self) -> str:
        return f"{self.path or '<unknown>'}:{self.line}"


@dataclass
class Sample:
    """A recorded real input: the argument structure with array leaves in the ``.npz``.

    Array leaves are ``{"kind": "array", "key": "<npz key>", "from": "tensor"|"numpy"|
    "variable"}`` (ragged: ``{"kind":
    "ragged_array", "values": key, "row_splits": [key, ...]}``; sparse: ``{"kind":
    "sparse_array", "indices": key, "values": key, "dense_shape": key}``); Python
    scalars are inline ``{"kind": "python", ...}``; other objects cannot be replayed.
    """

    signature: int
    call: int
    args: dict[str, Value]
    outputs: Value | None = None


@dataclass
class FunctionRecord:
    """Everything recorded about one tf.function (all instances of a method merged)."""

    path: str | None
    """Path relative to the project root (posix), absolute outside it, None if unknown."""
    qualname: str
    line: int
    """Line of the ``def`` keyword (or the lambda)."""
    source_sha256: str | None
    editable: bool
    """False for functions defined in installed libraries (Keras' train_function, ...)."""
    params: list[ParamInfo] = field(default_factory=list)
    is_method: bool = False
    instances: int = 1
    processes: int = 1
    """Recorded processes (workers, runs) this function was called in."""
    calls: int = 0
    graph_calls: int = 0
    """Calls made while another tf.function was being traced (symbolic arguments)."""
    traces: int = 0
    trace_time_s: float = 0.0
    call_time_s: float = 0.0
    """Wall time inside calls, tracing included."""
    signatures: list[CallSignature] = field(default_factory=list)
    signatures_dropped: int = 0
    trace_events: list[TraceEvent] = field(default_factory=list)
    object_instances: dict[str, int] = field(default_factory=dict)
    decorator_options: dict[str, Any] = field(default_factory=dict)
    """tf.function options in force when profiled (input_signature present, jit_compile, ...)."""
    samples: list[Sample] = field(default_factory=list)
    call_sites: list[CallSite] = field(default_factory=list)
    """Where the eager calls came from, in order of first call (none in older profiles)."""
    call_sites_dropped: int = 0
    """Eager calls from sites beyond MAX_CALL_SITES (or whose caller was not found)."""
    probe: ProbeEvidence | None = None
    """What probe traces of the original code showed (None: not probed, or a version 1
    profile): per dimension free / fixed / read, Python numbers' dtypes, random ops."""

    @property
    def key(self) -> tuple[str | None, str, int]:
        return (self.path, self.qualname, self.line)

    @property
    def display_name(self) -> str:
        where = f"{self.path}:{self.line}" if self.path else "<unknown>"
        return f"{self.qualname} ({where})"

    @property
    def callee(self) -> str | None:
        """The name a call of the function goes through (``step`` of ``model.step(x)``;
        None for ``__call__``, called through any name, and for a lambda)."""
        name = self.qualname.rsplit(".", 1)[-1]
        return None if name == "__call__" or name.startswith("<") else name


@dataclass
class Profile:
    functions: list[FunctionRecord] = field(default_factory=list)
    project_root: str | None = None
    tensorflow_version: str | None = None
    runs: int = 1
    command: list[str] = field(default_factory=list)
    exit_code: int | None = None
    samples_file: str | None = None
    """Name of the side ``.npz`` (relative to the profile file), None if no samples."""
    partial: bool = False
    """True when the recorded command exited non-zero or was interrupted (``exit_code``
    says how): calls after the failure are missing, so the profile may be incomplete."""
    probes: ProbeStats | None = None
    """How many probe traces ran, how long, what the budget left out (None: a version 1
    profile, or a profile not recorded by ``autosig profile``)."""

    def partial_note(self) -> str | None:
        """One line saying the profile is partial and why, None for a complete one."""
        if not self.partial:
            return None
        code = self.exit_code
        if code is None:
            how = "the recorded command did not finish"
        elif code > 128:
            how = f"the recorded command was interrupted (exit status {code}, signal {code - 128})"
        else:
            how = f"the recorded command exited with status {code}"
        return f"partial profile: {how}; calls after that are missing"

    def find(
        self, path: str | None, qualname: str, line: int | None = None
    ) -> list[FunctionRecord]:
        matches = [f for f in self.functions if f.path == path and f.qualname == qualname]
        if line is not None and len(matches) > 1:
            exact = [f for f in matches if f.line == line]
            return exact or matches
        return matches

    # -- serialisation ---------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        data = {FORMAT_KEY: FORMAT_VERSION}
        data.update(asdict(self))
        return _finite(data)

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, sort_keys=False, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, data: Any, source: str = "<profile>") -> Profile:
        if not isinstance(data, dict) or FORMAT_KEY not in data:
            raise AutosigError("not an autosig profile (no 'autosig_profile' version key)", source)
        version = data[FORMAT_KEY]
        if not isinstance(version, int):
            raise AutosigError("corrupt profile: format version is not a number", source)
        if version > FORMAT_VERSION:
            raise AutosigError(
                f"profile format version {version} is newer than this autosig supports "
                f"({FORMAT_VERSION}); upgrade autosig",
                source,
            )
        if version < OLDEST_READABLE_VERSION:
            raise AutosigError(
                f"profile format version {version} is no longer supported; re-run autosig profile",
                source,
            )
        try:
            functions = [_function_from_json(f) for f in data.get("functions", [])]
            return cls(
                functions=functions,
                project_root=data.get("project_root"),
                tensorflow_version=data.get("tensorflow_version"),
                runs=int(data.get("runs", 1)),
                command=list(data.get("command", [])),
                exit_code=data.get("exit_code"),
                samples_file=data.get("samples_file"),
                partial=bool(data.get("partial", False)),
                probes=stats_from_json(data.get("probes")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise AutosigError(f"corrupt profile: {type(exc).__name__}: {exc}", source) from None


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def _function_from_json(d: dict[str, Any]) -> FunctionRecord:
    return FunctionRecord(
        path=d["path"],
        qualname=str(d["qualname"]),
        line=int(d["line"]),
        source_sha256=d.get("source_sha256"),
        editable=bool(d.get("editable", True)),
        params=[ParamInfo(**p) for p in d.get("params", [])],
        is_method=bool(d.get("is_method", False)),
        instances=int(d.get("instances", 1)),
        processes=int(d.get("processes", 1)),
        calls=int(d.get("calls", 0)),
        graph_calls=int(d.get("graph_calls", 0)),
        traces=int(d.get("traces", 0)),
        trace_time_s=float(d.get("trace_time_s") or 0.0),
        call_time_s=float(d.get("call_time_s") or 0.0),
        signatures=[CallSignature(**s) for s in d.get("signatures", [])],
        signatures_dropped=int(d.get("signatures_dropped", 0)),
        trace_events=[TraceEvent(**t) for t in d.get("trace_events", [])],
        object_instances={str(k): int(v) for k, v in d.get("object_instances", {}).items()},
        decorator_options=dict(d.get("decorator_options", {})),
        samples=[Sample(**s) for s in d.get("samples", [])],
        call_sites=[_call_site_from_json(c) for c in d.get("call_sites", [])],
        call_sites_dropped=int(d.get("call_sites_dropped", 0)),
        probe=evidence_from_json(d.get("probe")),
    )


def _call_site_from_json(d: dict[str, Any]) -> CallSite:
    def optional_int(value: Any) -> int | None:
        return None if value is None else int(value)

    return CallSite(
        path=d.get("path"),
        line=int(d["line"]),
        calls=int(d.get("calls", 0)),
        col=optional_int(d.get("col")),
        scope=d.get("scope"),
        scope_line=optional_int(d.get("scope_line")),
        positional=int(d.get("positional", 0)),
        keywords=[str(k) for k in d.get("keywords", [])],
        editable=bool(d.get("editable", True)),
    )


def load_profile(path: Path | str) -> Profile:
    """Read and validate a profile; any problem is a one-line AutosigError naming the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AutosigError("no such profile; run 'autosig profile -- CMD' first", str(p)) from None
    except IsADirectoryError:
        raise AutosigError("is a directory, not a profile file", str(p)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AutosigError(f"cannot read profile: {exc}", str(p)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AutosigError(
            f"corrupt profile: invalid JSON at line {exc.lineno} column {exc.colno} "
            "(truncated or hand-edited?)",
            str(p),
        ) from None
    return Profile.from_json(data, str(p))


def save_profile(profile: Profile, path: Path | str) -> None:
    """Write atomically so a crash never leaves half a profile."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AutosigError(
            f"cannot create directory: {exc.strerror or exc}", str(p.parent)
        ) from None
    atomic_write_bytes(p, profile.dumps().encode("utf-8"), mode=0o644)
    mark_state_dir(p.parent)


def check_writable(path: Path | str) -> None:
    """Fail early, before running anything, if the profile cannot be written."""
    p = Path(path)
    if p.is_dir():
        raise AutosigError("is a directory; give a file name for the profile", str(p))
    parent = p.parent if str(p.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AutosigError(
            f"cannot create the profile's directory: {exc.strerror or exc}", str(p)
        ) from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".autosig-probe-", dir=parent)
    except OSError as exc:
        raise AutosigError(f"cannot write the profile: {exc.strerror or exc}", str(p)) from None
    os.close(fd)
    os.unlink(probe)
    if p.exists() and not os.access(p, os.W_OK):
        raise AutosigError("cannot write the profile: permission denied", str(p))


def partial_profile_path(profile_path: Path | str) -> Path:
    """Where a failed run's profile goes beside a good one: ``p.json`` -> ``p.partial.json``."""
    p = Path(profile_path)
    return p.with_name(f"{p.stem}.partial{p.suffix or '.json'}")


def samples_path(profile_path: Path | str) -> Path:
    """Where the input samples of a profile live: ``x.json`` -> ``x.npz``."""
    p = Path(profile_path)
    return p.with_suffix(".npz")


def candidate_roots(profile: Profile, profile_path: Path | str) -> list[Path]:
    """Directories the profile's relative paths may start from, most likely first.

    A profile inside a ``.autosig/`` folder belongs to the folder holding it: a moved or
    copied checkout keeps its profile there, while the recorded root may still name the
    original. Then the recorded root, then the current directory.
    """
    holder = Path(profile_path).resolve().parent
    roots = [holder.parent] if holder.name == ".autosig" else []
    if profile.project_root:
        roots.append(Path(profile.project_root))
    roots.append(Path.cwd())
    return list(dict.fromkeys(roots))


def project_root_of(profile: Profile, profile_path: Path | str) -> Path:
    """The directory the profile's relative paths start from, on this machine."""
    return next(root for root in candidate_roots(profile, profile_path) if root.is_dir())
