"""Merge profiles from several processes, workers or runs into one. No TensorFlow here.

Merging is associative: functions are matched on (path, qualname, line) and kept in
order of first appearance; counts and times add up; the second profile's call indices
are shifted past the first's calls so trace events and samples stay in call order;
signatures are united by their description (order of first appearance, capped at
MAX_SIGNATURES); call sites likewise by where they are, their calls added (capped at
MAX_CALL_SITES, the calls of those left out counted); probe evidence by
``evidence.merge_evidence`` (agreeing verdicts add up, disagreeing ones become the
conservative ``read``). Profiles whose same function has different source hashes come from
different code and are refused, as are profiles of another format version (refused
when loaded).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.profile.evidence import merge_evidence, merge_stats
from autosig.profile.format import (
    MAX_CALL_SITES,
    MAX_SIGNATURES,
    MAX_TRACE_EVENTS,
    FunctionRecord,
    Profile,
    Sample,
    TraceEvent,
    load_profile,
    samples_path,
    save_profile,
)
from autosig.profile.samples import (
    MAX_FILE_BYTES,
    array_keys,
    load_arrays,
    rename_keys,
    save_arrays,
)


def _first(*values: Any) -> Any:
    return next((v for v in values if v not in (None, [], {}, "")), values[-1])


def _exit_code(a: int | None, b: int | None) -> int | None:
    """The first non-zero exit code, else 0 if any run exited cleanly, else None."""
    for code in (a, b):
        if code:
            return code
    return 0 if 0 in (a, b) else None


def _merge_function(a: FunctionRecord, b: FunctionRecord, where: str) -> FunctionRecord:
    if a.source_sha256 and b.source_sha256 and a.source_sha256 != b.source_sha256:
        raise AutosigError(
            f"cannot merge: {a.display_name} has different source in the two profiles "
            "(the code changed between runs); re-profile with the current code",
            where,
        )
    out = copy.deepcopy(a)
    offset = a.calls
    out.source_sha256 = a.source_sha256 or b.source_sha256
    out.editable = a.editable and b.editable
    out.params = a.params or copy.deepcopy(b.params)
    out.is_method = a.is_method or b.is_method
    out.instances = a.instances + b.instances
    out.processes = a.processes + b.processes
    out.calls = a.calls + b.calls
    out.graph_calls = a.graph_calls + b.graph_calls
    out.traces = a.traces + b.traces
    out.trace_time_s = a.trace_time_s + b.trace_time_s
    out.call_time_s = a.call_time_s + b.call_time_s
    out.decorator_options = a.decorator_options or dict(b.decorator_options)
    for name, count in b.object_instances.items():
        out.object_instances[name] = out.object_instances.get(name, 0) + count
    out.probe = merge_evidence(copy.deepcopy(a.probe), copy.deepcopy(b.probe))

    index = {sig.key(): i for i, sig in enumerate(out.signatures)}
    remap: dict[int, int | None] = {}
    out.signatures_dropped = a.signatures_dropped + b.signatures_dropped
    for i, sig in enumerate(b.signatures):
        key = sig.key()
        if key in index:
            target = out.signatures[index[key]]
            target.calls += sig.calls
            target.traces += sig.traces
            remap[i] = index[key]
        elif len(out.signatures) < MAX_SIGNATURES:
            new = copy.deepcopy(sig)
            new.first_call = sig.first_call + offset
            out.signatures.append(new)
            index[key] = len(out.signatures) - 1
            remap[i] = index[key]
        else:
            out.signatures_dropped += 1
            remap[i] = None

    out.call_sites_dropped = a.call_sites_dropped + b.call_sites_dropped
    sites = {site.key: site for site in out.call_sites}
    for site in b.call_sites:
        known = sites.get(site.key)
        if known is not None:
            known.calls += site.calls
        elif len(out.call_sites) < MAX_CALL_SITES:
            sites[site.key] = copy.deepcopy(site)
            out.call_sites.append(sites[site.key])
        else:
            out.call_sites_dropped += site.calls

    instances_offset = a.instances
    for event in b.trace_events:
        if len(out.trace_events) >= MAX_TRACE_EVENTS:
            break
        out.trace_events.append(
            TraceEvent(
                call=event.call + offset,
                signature=None if event.signature is None else remap.get(event.signature),
                new_objects=list(event.new_objects),
                time_s=event.time_s,
                instance=event.instance + instances_offset,
                process=event.process + a.processes,
            )
        )
    for sample in b.samples:
        signature = remap.get(sample.signature)
        out.samples.append(
            Sample(
                signature=-1 if signature is None else signature,
                call=sample.call + offset,
                args=copy.deepcopy(sample.args),
                outputs=copy.deepcopy(sample.outputs),
            )
        )
    return out


def merge_two(a: Profile, b: Profile, where: str = "merge") -> Profile:
    """``a`` then ``b``; sample array keys of ``b`` must not collide with ``a``'s."""
    functions = [copy.deepcopy(f) for f in a.functions]
    by_key = {f.key: i for i, f in enumerate(functions)}
    for fb in b.functions:
        i = by_key.get(fb.key)
        if i is None:
            functions.append(copy.deepcopy(fb))
            by_key[fb.key] = len(functions) - 1
        else:
            functions[i] = _merge_function(functions[i], fb, where)
    return Profile(
        functions=functions,
        project_root=_first(a.project_root, b.project_root),
        tensorflow_version=_first(a.tensorflow_version, b.tensorflow_version),
        runs=a.runs + b.runs,
        command=list(_first(a.command, b.command)),
        exit_code=_exit_code(a.exit_code, b.exit_code),
        samples_file=_first(a.samples_file, b.samples_file),
        partial=a.partial or b.partial,  # a partial run keeps the merge partial
        probes=merge_stats(copy.deepcopy(a.probes), copy.deepcopy(b.probes)),
    )


def _with_unique_keys(profile: Profile, prefix: str) -> Profile:
    """A copy whose sample array keys all start with ``prefix``."""
    out = copy.deepcopy(profile)
    for function in out.functions:
        for sample in function.samples:
            sample.args = rename_keys(sample.args, lambda k: prefix + k)
            if sample.outputs is not None:
                sample.outputs = rename_keys(sample.outputs, lambda k: prefix + k)
    return out


def merge_profiles(
    profiles: Sequence[Profile], arrays: Sequence[dict[str, Any]] | None = None
) -> tuple[Profile, dict[str, Any]]:
    """Merge in order; returns the profile and its sample arrays (keys renumbered).

    Samples beyond the file budget (MAX_FILE_BYTES) are dropped, latest first.
    """
    if not profiles:
        raise AutosigError("nothing to merge: no profiles given")
    arrays = list(arrays) if arrays is not None else [{} for _ in profiles]
    combined_arrays: dict[str, Any] = {}
    result: Profile | None = None
    for n, (profile, arrs) in enumerate(zip(profiles, arrays, strict=True)):
        prefixed = _with_unique_keys(profile, f"p{n}_")
        for key, value in arrs.items():
            combined_arrays[f"p{n}_{key}"] = value
        result = prefixed if result is None else merge_two(result, prefixed)
    assert result is not None
    return _renumber(result, combined_arrays)


def _renumber(profile: Profile, arrays: dict[str, Any]) -> tuple[Profile, dict[str, Any]]:
    """Keys a0, a1, ... in sample order; drop samples with missing arrays or over budget."""
    out_arrays: dict[str, Any] = {}
    total = 0
    counter = 0
    for function in profile.functions:
        kept: list[Sample] = []
        for sample in function.samples:
            keys = list(array_keys(sample.args)) + list(array_keys(sample.outputs))
            if any(k not in arrays for k in keys):
                continue
            size = sum(getattr(arrays[k], "nbytes", 0) for k in set(keys))
            if total + size > MAX_FILE_BYTES:
                continue
            mapping: dict[str, str] = {}
            for k in keys:
                if k not in mapping:
                    mapping[k] = f"a{counter}"
                    counter += 1
                    out_arrays[mapping[k]] = arrays[k]
            total += size
            sample.args = rename_keys(sample.args, mapping.__getitem__)
            if sample.outputs is not None:
                sample.outputs = rename_keys(sample.outputs, mapping.__getitem__)
            kept.append(sample)
        function.samples = kept
    profile.samples_file = None
    return profile, out_arrays


def merge_files(
    inputs: Iterable[Path | str], output: Path | str, *, one_run: bool = False
) -> Profile:
    """Load, merge and write; the samples ``.npz`` files are merged alongside.

    ``one_run``: the inputs are processes of one run (pytest-xdist workers), not runs.
    """
    paths = [Path(p) for p in inputs]
    profiles = [load_profile(p) for p in paths]
    arrays = []
    for path, profile in zip(paths, profiles, strict=True):
        if profile.samples_file:
            arrays.append(load_arrays(path.parent / profile.samples_file))
        else:
            arrays.append({})
    merged, merged_arrays = merge_profiles(profiles, arrays)
    if one_run:
        merged.runs = 1
    out = Path(output)
    npz = samples_path(out)
    if merged_arrays:
        save_arrays(merged_arrays, npz)
        merged.samples_file = npz.name
    save_profile(merged, out)
    return merged
