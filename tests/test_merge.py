"""``autosig profile merge``: associative, refuses mixed code and foreign files. No TF."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from autosig.profile.format import (
    CallSignature,
    FunctionRecord,
    Profile,
    Sample,
    TraceEvent,
    load_profile,
    save_profile,
)
from autosig.profile.merge import merge_profiles
from autosig.profile.samples import load_samples, save_arrays


def _signature(length: int) -> CallSignature:
    return CallSignature(
        args={"x": {"kind": "tensor", "shape": [4, length], "dtype": "float32"}},
        passed={"x": "positional"},
    )


@st.composite
def profiles(draw: st.DrawFn) -> tuple[Profile, dict]:
    functions = []
    arrays: dict[str, np.ndarray] = {}
    for name in draw(st.lists(st.sampled_from(["f", "g", "h"]), unique=True, max_size=3)):
        lengths = draw(st.lists(st.integers(1, 5), min_size=1, max_size=5))
        signatures: list[CallSignature] = []
        index: dict[int, int] = {}
        events = []
        samples = []
        for call, length in enumerate(lengths):
            if length not in index:
                index[length] = len(signatures)
                signatures.append(_signature(length))
                events.append(TraceEvent(call=call, signature=index[length], time_s=0.5))
                key = f"k{len(arrays)}"
                arrays[key] = np.full((4, length), call, np.float32)
                samples.append(
                    Sample(
                        signature=index[length],
                        call=call,
                        args={"x": {"kind": "array", "key": key, "from": "tensor"}},
                    )
                )
            sig = signatures[index[length]]
            sig.calls += 1
            if sig.calls == 1:
                sig.first_call = call
                sig.traces = 1
        functions.append(
            FunctionRecord(
                path="m.py",
                qualname=name,
                line=1,
                source_sha256="a" * 64,
                editable=True,
                calls=len(lengths),
                traces=len(signatures),
                trace_time_s=0.5 * len(signatures),
                call_time_s=float(len(lengths)),
                signatures=signatures,
                trace_events=events,
                samples=samples,
                object_instances={"cfg": draw(st.integers(0, 3))},
                instances=draw(st.integers(1, 2)),
            )
        )
    exit_code = draw(st.sampled_from([None, 0, 1]))
    return Profile(
        functions=functions, exit_code=exit_code, command=["python", name_of(draw)]
    ), arrays


def name_of(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["a.py", "b.py"]))


def _merge(*parts: tuple[Profile, dict]) -> tuple[Profile, dict]:
    return merge_profiles([p for p, _ in parts], [a for _, a in parts])


def _canonical(result: tuple[Profile, dict]) -> tuple[str, dict]:
    profile, arrays = result
    return profile.dumps(), {k: v.tolist() for k, v in arrays.items()}


@settings(max_examples=60, deadline=None)
@given(profiles(), profiles(), profiles())
def test_merge_is_associative(a: tuple, b: tuple, c: tuple) -> None:
    left = _merge(_merge(a, b), c)
    right = _merge(a, _merge(b, c))
    assert _canonical(left) == _canonical(right)
    merged = left[0]
    assert merged.runs == 3
    for f in merged.functions:
        assert f.calls == sum(
            g.calls for p, _ in (a, b, c) for g in p.functions if g.qualname == f.qualname
        )
        assert sorted(e.call for e in f.trace_events) == [e.call for e in f.trace_events]
        assert sum(s.calls for s in f.signatures) == f.calls
        for s in f.samples:  # every sample still points at its own data
            arr = left[1][s.args["x"]["key"]]
            assert arr.shape == tuple(f.signatures[s.signature].args["x"]["shape"])


def test_call_indices_are_offset_and_signatures_united() -> None:
    (a, _), (b, _) = (
        (Profile(functions=[_fn([3, 4])]), {}),
        (Profile(functions=[_fn([4, 5])]), {}),
    )
    merged, _ = merge_profiles([a, b])
    (f,) = merged.functions
    assert f.calls == 4 and f.traces == 4
    assert [s.args["x"]["shape"][1] for s in f.signatures] == [3, 4, 5]
    assert [(e.call, e.signature) for e in f.trace_events] == [(0, 0), (1, 1), (2, 1), (3, 2)]
    assert [s.first_call for s in f.signatures] == [0, 1, 3]


def _fn(lengths: list[int], sha: str = "a" * 64) -> FunctionRecord:
    sigs = [_signature(n) for n in lengths]
    for i, s in enumerate(sigs):
        s.calls, s.traces, s.first_call = 1, 1, i
    return FunctionRecord(
        path="m.py",
        qualname="f",
        line=1,
        source_sha256=sha,
        editable=True,
        calls=len(lengths),
        traces=len(lengths),
        signatures=sigs,
        trace_events=[TraceEvent(call=i, signature=i) for i in range(len(lengths))],
    )


def autosig(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autosig", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_merge_with_samples(tmp_path: Path) -> None:
    for name, lengths in (("a", [3]), ("b", [4])):
        f = _fn(lengths)
        f.samples = [Sample(signature=0, call=0, args={"x": {"kind": "array", "key": "a0"}})]
        save_arrays({"a0": np.ones((4, lengths[0]), np.float32)}, tmp_path / f"{name}.npz")
        save_profile(Profile(functions=[f], samples_file=f"{name}.npz"), tmp_path / f"{name}.json")
    result = autosig("profile", "merge", "a.json", "b.json", "-o", "out/c.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    merged = load_profile(tmp_path / "out" / "c.json")
    arrays = load_samples(tmp_path / "out" / "c.json")
    (f,) = merged.functions
    shapes = [arrays[s.args["x"]["key"]].shape for s in f.samples]
    assert shapes == [(4, 3), (4, 4)] and merged.runs == 2


def test_cli_merge_refuses_changed_code_and_bad_files(tmp_path: Path) -> None:
    save_profile(Profile(functions=[_fn([3])]), tmp_path / "a.json")
    save_profile(Profile(functions=[_fn([3], sha="b" * 64)]), tmp_path / "b.json")
    (tmp_path / "newer.json").write_text('{"autosig_profile": 99}')
    (tmp_path / "corrupt.json").write_text("{")
    (tmp_path / "foreign.json").write_text("[1, 2]")
    for other, expected in (
        ("b.json", "different source"),
        ("newer.json", "newer"),
        ("corrupt.json", "corrupt"),
        ("foreign.json", "not an autosig profile"),
        ("missing.json", "no such profile"),
    ):
        result = autosig("profile", "merge", "a.json", other, "-o", "c.json", cwd=tmp_path)
        assert result.returncode == 2, (other, result.stderr)
        assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr
        assert not (tmp_path / "c.json").exists()


def test_a_partial_run_keeps_the_merge_partial() -> None:
    complete = Profile(functions=[], exit_code=0)
    partial = Profile(functions=[], exit_code=130, partial=True)
    merged, _ = merge_profiles([complete, partial])
    assert merged.partial and merged.partial_note() is not None
    assert not merge_profiles([complete, complete])[0].partial


def test_call_sites_are_united_by_place_and_capped() -> None:
    from autosig.profile.format import MAX_CALL_SITES, CallSite

    a, b, c = _fn([3]), _fn([3]), _fn([3])
    a.call_sites = [CallSite("m.py", 10, calls=2, col=4), CallSite("d.py", 3, calls=1, col=0)]
    b.call_sites = [CallSite("m.py", 10, calls=5, col=4), CallSite("m.py", 10, calls=1, col=9)]
    b.call_sites_dropped = 2
    merged, _ = merge_profiles([Profile(functions=[a]), Profile(functions=[b])])
    (f,) = merged.functions
    assert [(s.path, s.line, s.col, s.calls) for s in f.call_sites] == [
        ("m.py", 10, 4, 7),
        ("d.py", 3, 0, 1),
        ("m.py", 10, 9, 1),
    ]
    assert f.call_sites_dropped == 2
    # past the cap a new site's calls are counted, in the same way whatever the grouping
    a.call_sites = [CallSite("m.py", line, calls=1) for line in range(MAX_CALL_SITES)]
    b.call_sites = [CallSite("x.py", 1, calls=3)]
    c.call_sites = [CallSite("x.py", 1, calls=4), CallSite("m.py", 0, calls=1)]
    pa, pb, pc = (Profile(functions=[f]) for f in (a, b, c))
    left = merge_profiles([merge_profiles([pa, pb])[0], pc])[0].functions[0]
    right = merge_profiles([pa, merge_profiles([pb, pc])[0]])[0].functions[0]
    assert left.call_sites == right.call_sites and len(left.call_sites) == MAX_CALL_SITES
    assert left.call_sites_dropped == right.call_sites_dropped == 2 + 7
    assert left.call_sites[0].calls == 2
